import CBluetooth
import Glibc

/// What the kernel says about one Bluetooth controller (`HCIGETDEVINFO`, as `hciconfig` shows):
/// read without privileges and without sending anything to the controller (`ingestd doctor`).
public struct HCIControllerInfo: Hashable, Sendable {
    /// The controller index (`hci<index>`).
    public var index: UInt16
    /// The kernel's name for it, e.g. `hci0`.
    public var name: String
    /// The controller's public address, e.g. `00:1A:7D:DA:71:13`.
    public var address: String
    /// Whether the controller is up (HCI_UP).
    public var isUp: Bool
    /// Whether the controller supports Bluetooth Low Energy (LMP feature "LE Supported (Controller)").
    public var supportsLowEnergy: Bool

    public init(index: UInt16, name: String, address: String, isUp: Bool, supportsLowEnergy: Bool) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
        self.supportsLowEnergy = supportsLowEnergy
    }

    /// Whether the kernel offers Bluetooth sockets at all: nil when it does, else why not
    /// (``BluetoothUnavailable/noKernelSupport(errno:)`` without the module, or in a container
    /// without it).
    public static func kernelSupportProblem() -> BluetoothUnavailable? {
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard descriptor >= 0 else {
            return BluetoothUnavailable(errno: errno, operation: "socket(AF_BLUETOOTH, BTPROTO_HCI)", controller: 0)
        }
        close(descriptor)
        return nil
    }

    /// Reads controller `index`.
    /// - Throws: ``BluetoothUnavailable``: `noKernelSupport` or `noController` (ENODEV) above all.
    public static func read(index: UInt16) throws(BluetoothUnavailable) -> HCIControllerInfo {
        if let problem = kernelSupportProblem() { throw problem }
        var info = hci_dev_info()
        guard hci_devinfo(Int32(index), &info) == 0 else {
            throw BluetoothUnavailable(errno: errno, operation: "HCIGETDEVINFO hci\(index)", controller: index)
        }
        let name = withUnsafeBytes(of: info.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let address = withUnsafeBytes(of: info.bdaddr.b) { raw in
            raw.reversed().map { byte in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined(separator: ":")
        }
        let features = withUnsafeBytes(of: info.features) { Array($0) }
        let lowEnergy = features.count > 4 && features[4] & 0x40 != 0
        return HCIControllerInfo(index: index, name: name.isEmpty ? "hci\(index)" : name, address: address,
                                 isUp: info.flags & (1 << UInt32(HCI_UP)) != 0, supportsLowEnergy: lowEnergy)
    }
}
