import Testing
import Transport

@Suite struct GATTDatabaseTests {
    /// Health Thermometer (0x1809, handles 1-5): Temperature Measurement declared at 2, value 3,
    /// CCCD 4. Battery (0x180F, handles 6-9): Battery Level declared at 7, value 8, CCCD 9.
    func table() -> GATTDatabase {
        var table = GATTDatabase()
        table.addService(.init(startHandle: 6, endHandle: 9, uuid: BLEUUID(0x180F)))
        table.addService(.init(startHandle: 1, endHandle: 5, uuid: BLEUUID(0x1809)))
        table.addCharacteristic(.init(declarationHandle: 7, properties: 0x12, valueHandle: 8, uuid: BLEUUID(0x2A19)))
        table.addCharacteristic(.init(declarationHandle: 2, properties: 0x20, valueHandle: 3, uuid: BLEUUID(0x2A1C)))
        table.addAttributeType(.clientCharacteristicConfiguration, handle: 4)
        table.addAttributeType(.clientCharacteristicConfiguration, handle: 9)
        return table
    }

    @Test func keepsEntriesSortedAndReplacesDuplicates() {
        var table = table()
        #expect(table.services.map(\.startHandle) == [1, 6])
        #expect(table.characteristics.map(\.declarationHandle) == [2, 7])
        table.addService(.init(startHandle: 1, endHandle: 5, uuid: BLEUUID(0x181D)))
        #expect(table.services.map(\.uuid) == [BLEUUID(0x181D), BLEUUID(0x180F)])
    }

    @Test func mapsHandlesToServicesAndCharacteristics() {
        let table = table()
        #expect(table.service(containing: 3)?.uuid == BLEUUID(0x1809))
        #expect(table.service(containing: 9)?.uuid == BLEUUID(0x180F))
        #expect(table.service(containing: 10) == nil)
        #expect(table.characteristic(valueHandle: 3)?.uuid == BLEUUID(0x2A1C))
        #expect(table.characteristic(valueHandle: 4) == nil)
        #expect(table.characteristic(owningDescriptor: 4)?.valueHandle == 3)
        #expect(table.characteristic(owningDescriptor: 9)?.valueHandle == 8)
        #expect(table.isClientCharacteristicConfiguration(4) && !table.isClientCharacteristicConfiguration(3))
    }

    @Test func descriptorDoesNotBelongToACharacteristicOfAnotherService() {
        var table = GATTDatabase()
        table.addService(.init(startHandle: 1, endHandle: 3, uuid: BLEUUID(0x1809)))
        table.addService(.init(startHandle: 4, endHandle: 6, uuid: BLEUUID(0x180F)))
        table.addCharacteristic(.init(declarationHandle: 2, properties: 0x20, valueHandle: 3, uuid: BLEUUID(0x2A1C)))
        #expect(table.characteristic(owningDescriptor: 5) == nil)
        #expect(GATTDatabase().isEmpty && !table.isEmpty)
    }
}
