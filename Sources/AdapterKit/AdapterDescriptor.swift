import Foundation
import HealthModel
import Synchronization
import Transport

/// What an adapter is and what it takes: a stable kebab-case id (also the sample source), a
/// name, a version, the devices it matches and the quantity types it can produce.
public struct AdapterDescriptor: Sendable, Hashable {
    public var id: String
    public var name: String
    public var version: String
    /// One line on what the adapter reads.
    public var summary: String
    /// Any one of these selects the adapter for a device.
    public var matches: [DeviceMatch]
    public var produces: [QuantityType]
    /// How the adapter gets the data, in a few words ("advertisements", "GATT conversation: …").
    public var how: String
    /// The device models it covers, what each offers and what we read (the catalogue and the
    /// README's device table).
    public var models: [AdapterModel]

    public init(id: String, name: String, version: String, summary: String, matches: [DeviceMatch],
                produces: [QuantityType], how: String = "", models: [AdapterModel] = []) {
        self.id = id
        self.name = name
        self.version = version
        self.summary = summary
        self.matches = matches
        self.produces = produces
        self.how = how
        self.models = models
    }

    /// Whether this adapter takes the BLE device seen with these traits.
    public func matches(_ traits: BLEDeviceTraits) -> Bool {
        matches.contains { match in
            if case .ble(let ble) = match { ble.matches(traits) } else { false }
        }
    }
}

/// One way of recognising a device.
public enum DeviceMatch: Sendable, Hashable, CustomStringConvertible {
    case ble(BLEMatch)
    case usb(USBMatch)

    public var description: String {
        switch self {
        case .ble(let m): m.description
        case .usb(let m): m.description
        }
    }
}

/// A Bluetooth LE match: every given criterion must hold; within a list, any entry suffices.
public struct BLEMatch: Sendable, Hashable, CustomStringConvertible {
    /// Advertised service UUIDs, service-data UUIDs or services discovered over GATT.
    public var serviceUUIDs: [BLEUUID]
    /// Manufacturer-specific data company identifiers.
    public var companyIDs: [UInt16]
    /// A regular expression the local name must match (searched, so anchor with `^` as needed).
    public var namePattern: String?
    /// UUIDs the device must broadcast service DATA under (not merely list as a service): tells a
    /// broadcasting scale from a connectable one advertising the same standard service.
    public var serviceDataUUIDs: [BLEUUID]
    /// With `serviceDataUUIDs`: the lengths that service data must have (any, when empty).
    public var serviceDataLengths: [Int]

    public init(serviceUUIDs: [BLEUUID] = [], companyIDs: [UInt16] = [], namePattern: String? = nil,
                serviceDataUUIDs: [BLEUUID] = [], serviceDataLengths: [Int] = []) {
        self.serviceUUIDs = serviceUUIDs
        self.companyIDs = companyIDs
        self.namePattern = namePattern
        self.serviceDataUUIDs = serviceDataUUIDs
        self.serviceDataLengths = serviceDataLengths
    }

    /// Whether a device with these traits matches; the name pattern is evaluated through
    /// `names` when given (a router asking for many devices remembers its answers there).
    public func matches(_ traits: BLEDeviceTraits, names: NamePatternMatches? = nil) -> Bool {
        if serviceUUIDs.isEmpty && companyIDs.isEmpty && namePattern == nil && serviceDataUUIDs.isEmpty { return false }
        if !serviceUUIDs.isEmpty && !serviceUUIDs.contains(where: traits.serviceUUIDs.contains) { return false }
        if !serviceDataUUIDs.isEmpty {
            let seen = serviceDataUUIDs.contains { uuid in
                guard let lengths = traits.serviceDataLengths[uuid] else { return false }
                return serviceDataLengths.isEmpty || !lengths.isDisjoint(with: serviceDataLengths)
            }
            if !seen { return false }
        }
        if !companyIDs.isEmpty && !companyIDs.contains(where: traits.companyIDs.contains) { return false }
        if let namePattern {
            guard let name = traits.name,
                  names?.name(name, matches: namePattern) ?? NamePatternMatches.evaluate(name, matches: namePattern)
            else { return false }
        }
        return true
    }

    public var description: String {
        var parts: [String] = []
        if !serviceUUIDs.isEmpty { parts.append("service " + serviceUUIDs.map(\.description).joined(separator: "|")) }
        if !serviceDataUUIDs.isEmpty {
            parts.append("service-data " + serviceDataUUIDs.map(\.description).joined(separator: "|")
                + (serviceDataLengths.isEmpty ? "" : " of " + serviceDataLengths.map(String.init).joined(separator: "|") + " bytes"))
        }
        if !companyIDs.isEmpty {
            parts.append("company " + companyIDs.map { String(format: "0x%04X", $0) }.joined(separator: "|"))
        }
        if let namePattern { parts.append("name /\(namePattern)/") }
        return "ble " + parts.joined(separator: " ")
    }
}

/// A USB match by vendor and (optionally) product id.
public struct USBMatch: Sendable, Hashable, CustomStringConvertible {
    public var vendorID: UInt16
    public var productID: UInt16?

    public init(vendorID: UInt16, productID: UInt16? = nil) {
        self.vendorID = vendorID
        self.productID = productID
    }

    public var description: String {
        "usb " + String(format: "%04x", vendorID) + ":" + (productID.map { String(format: "%04x", $0) } ?? "*")
    }
}

/// What is known about a BLE device so far: from its advertisements and its discovered services.
public struct BLEDeviceTraits: Sendable, Hashable {
    public var address: BLEAddress
    public var name: String?
    public var serviceUUIDs: Set<BLEUUID>
    public var companyIDs: Set<UInt16>
    /// UUIDs the device broadcast service data under, with the lengths seen.
    public var serviceDataLengths: [BLEUUID: Set<Int>]

    public init(address: BLEAddress, name: String? = nil, serviceUUIDs: Set<BLEUUID> = [], companyIDs: Set<UInt16> = [],
                serviceDataLengths: [BLEUUID: Set<Int>] = [:]) {
        self.address = address
        self.name = name
        self.serviceUUIDs = serviceUUIDs
        self.companyIDs = companyIDs
        self.serviceDataLengths = serviceDataLengths
    }

    /// Adds what an advertisement tells; returns whether that changed anything (a device repeats
    /// the same advertisement many times a second, and what matches it only changes with it).
    @discardableResult
    public mutating func absorb(_ advertisement: BLEAdvertisement) -> Bool {
        var changed = false
        if let localName = advertisement.localName, localName != name {
            name = localName
            changed = true
        }
        for uuid in advertisement.serviceUUIDs where serviceUUIDs.insert(uuid).inserted { changed = true }
        for (uuid, data) in advertisement.serviceData {
            if serviceUUIDs.insert(uuid).inserted { changed = true }
            if serviceDataLengths[uuid, default: []].insert(data.count).inserted { changed = true }
        }
        for company in advertisement.manufacturerData.keys where companyIDs.insert(company).inserted { changed = true }
        return changed
    }
}

/// Whether a local name matches a name pattern, remembered per (pattern, name): a router asks
/// for every new kind of device it sees, and Foundation compiles the regular expression each time
/// (about 5 µs, most of a capture decode's time). Bounded: past `capacity` pairs (hostile names)
/// it starts over. Its owner (`AdapterRouter`) keeps one.
public final class NamePatternMatches: Sendable {
    private struct Pair: Hashable {
        var pattern: String
        var name: String
    }

    private let capacity: Int
    private let known = Mutex<[Pair: Bool]>([:])

    /// An empty memory of at most `capacity` answers.
    public init(capacity: Int) { self.capacity = capacity }

    /// Whether `name` matches `pattern`, answered once per pair.
    public func name(_ name: String, matches pattern: String) -> Bool {
        let pair = Pair(pattern: pattern, name: name)
        if let answer = known.withLock({ $0[pair] }) { return answer }
        let answer = Self.evaluate(name, matches: pattern)
        known.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[pair] = answer
        }
        return answer
    }

    /// Whether `name` matches `pattern` (a regular expression, searched), compiled now.
    static func evaluate(_ name: String, matches pattern: String) -> Bool {
        name.range(of: pattern, options: .regularExpression) != nil
    }
}
