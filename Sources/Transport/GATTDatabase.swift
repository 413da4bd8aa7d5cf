/// The part of a GATT server's attribute table that a client's discovery revealed:
/// services with their handle ranges, characteristic declarations and descriptors.
public struct GATTDatabase: Hashable, Sendable {
    /// A service and the handle range it spans.
    public struct Service: Hashable, Sendable {
        /// The service declaration handle (first handle of the range).
        public var startHandle: UInt16
        /// The last handle of the service.
        public var endHandle: UInt16
        /// The service UUID.
        public var uuid: BLEUUID

        /// Creates a service entry.
        public init(startHandle: UInt16, endHandle: UInt16, uuid: BLEUUID) {
            self.startHandle = startHandle
            self.endHandle = endHandle
            self.uuid = uuid
        }
    }

    /// A characteristic declaration (attribute type 0x2803).
    public struct Characteristic: Hashable, Sendable {
        /// The handle of the declaration itself.
        public var declarationHandle: UInt16
        /// Property bits: 0x02 read, 0x04 write without response, 0x08 write, 0x10 notify, 0x20 indicate.
        public var properties: UInt8
        /// The handle holding the characteristic's value.
        public var valueHandle: UInt16
        /// The characteristic UUID.
        public var uuid: BLEUUID

        /// Creates a characteristic entry.
        public init(declarationHandle: UInt16, properties: UInt8, valueHandle: UInt16, uuid: BLEUUID) {
            self.declarationHandle = declarationHandle
            self.properties = properties
            self.valueHandle = valueHandle
            self.uuid = uuid
        }
    }

    /// Services sorted by start handle.
    public private(set) var services: [Service] = []
    /// Characteristics sorted by declaration handle.
    public private(set) var characteristics: [Characteristic] = []
    /// Attribute types found by Find Information, by handle (descriptors such as 0x2902).
    public private(set) var attributeTypes: [UInt16: BLEUUID] = [:]

    /// Creates an empty table.
    public init() {}

    /// True when nothing has been discovered.
    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && attributeTypes.isEmpty }

    /// Records a service, replacing one with the same start handle.
    public mutating func addService(_ service: Service) {
        if let index = services.firstIndex(where: { $0.startHandle >= service.startHandle }) {
            if services[index].startHandle == service.startHandle {
                services[index] = service
            } else {
                services.insert(service, at: index)
            }
        } else {
            services.append(service)
        }
    }

    /// Records a characteristic declaration, replacing one with the same declaration handle.
    public mutating func addCharacteristic(_ characteristic: Characteristic) {
        if let index = characteristics.firstIndex(where: { $0.declarationHandle >= characteristic.declarationHandle }) {
            if characteristics[index].declarationHandle == characteristic.declarationHandle {
                characteristics[index] = characteristic
            } else {
                characteristics.insert(characteristic, at: index)
            }
        } else {
            characteristics.append(characteristic)
        }
    }

    /// Records the attribute type of one handle (from a Find Information response).
    public mutating func addAttributeType(_ uuid: BLEUUID, handle: UInt16) {
        attributeTypes[handle] = uuid
    }

    /// The service whose range contains `handle`.
    public func service(containing handle: UInt16) -> Service? {
        services.last { $0.startHandle <= handle && handle <= $0.endHandle }
    }

    /// The characteristic whose value lives at `handle`.
    public func characteristic(valueHandle handle: UInt16) -> Characteristic? {
        characteristics.first { $0.valueHandle == handle }
    }

    /// The characteristic a descriptor at `handle` belongs to: the nearest declaration before
    /// it inside the same service.
    public func characteristic(owningDescriptor handle: UInt16) -> Characteristic? {
        guard let candidate = characteristics.last(where: { $0.valueHandle < handle }) else { return nil }
        if let service = service(containing: handle),
           !(service.startHandle...service.endHandle).contains(candidate.declarationHandle) {
            return nil
        }
        return candidate
    }

    /// True when `handle` is known to be a Client Characteristic Configuration descriptor.
    public func isClientCharacteristicConfiguration(_ handle: UInt16) -> Bool {
        attributeTypes[handle] == .clientCharacteristicConfiguration
    }
}
