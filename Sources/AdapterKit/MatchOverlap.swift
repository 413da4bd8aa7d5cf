import Foundation

extension DeviceMatch {
    /// Whether some device could meet both matches: the same USB vendor (and product, or any),
    /// or BLE matches sharing a service UUID, a company id or the same name pattern. A hint
    /// for `ingestd adapters` (overlapping claims), not a proof.
    public func mayOverlap(_ other: DeviceMatch) -> Bool {
        switch (self, other) {
        case (.usb(let a), .usb(let b)):
            return a.vendorID == b.vendorID && (a.productID == nil || b.productID == nil || a.productID == b.productID)
        case (.ble(let a), .ble(let b)):
            let servicesA = Set(a.serviceUUIDs + a.serviceDataUUIDs)
            let servicesB = Set(b.serviceUUIDs + b.serviceDataUUIDs)
            if !servicesA.isDisjoint(with: servicesB) { return true }
            if !Set(a.companyIDs).isDisjoint(with: b.companyIDs) { return true }
            if let pattern = a.namePattern, pattern == b.namePattern { return true }
            return false
        default:
            return false
        }
    }
}

extension AdapterDescriptor {
    /// Whether this adapter and `other` may claim the same device (see ``DeviceMatch/mayOverlap(_:)``).
    public func mayOverlap(_ other: AdapterDescriptor) -> Bool {
        matches.contains { mine in other.matches.contains { mine.mayOverlap($0) } }
    }
}
