import BlueZTransport
import Glibc
import Testing
import Transport

/// True when this kernel has no AF_BLUETOOTH sockets (containers, machines without the module).
let kernelLacksBluetooth: Bool = {
    let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI_VALUE)
    if probe >= 0 {
        close(probe)
        return false
    }
    return errno == EAFNOSUPPORT
}()

/// BTPROTO_HCI (1), spelled out so the probe needs no BlueZ header.
let BTPROTO_HCI_VALUE: Int32 = 1

@Suite struct HCISocketTests {
    @Test(.enabled(if: kernelLacksBluetooth, "needs a kernel without Bluetooth support"))
    func openingHCI0WithoutKernelSupportIsBluetoothUnavailable() {
        #expect(throws: BluetoothUnavailable.noKernelSupport(errno: EAFNOSUPPORT)) {
            try HCISocket.open(controller: 0)
        }
        #expect(throws: BluetoothUnavailable.noKernelSupport(errno: EAFNOSUPPORT)) {
            try HCISocket.open(controller: 0, mode: .exclusive)
        }
        #expect(throws: BluetoothUnavailable.noKernelSupport(errno: EAFNOSUPPORT)) {
            try HCIScanner.open(controller: 0)
        }
    }

    @Test(.enabled(if: kernelLacksBluetooth, "needs a kernel without Bluetooth support"))
    func connectingWithoutKernelSupportIsBluetoothUnavailable() async {
        await #expect(throws: L2CAPConnectError.unavailable(.noKernelSupport(errno: EAFNOSUPPORT))) {
            try await L2CAPSocket.connect(to: BLEAddress("00:1B:DC:01:02:03")!, addressType: .public,
                                          timeout: .milliseconds(100))
        }
        await #expect(throws: L2CAPConnectError.unavailable(.noKernelSupport(errno: EAFNOSUPPORT))) {
            try await GATTClient.connect(to: BLEAddress("C8:0F:10:AA:BB:CC")!, addressType: .random, controller: 0)
        }
    }

    @Test func aControllerIndexThatCannotExistIsNeverOpened() {
        // hci4095 does not exist on any machine: either no kernel support or no such controller.
        #expect {
            try HCISocket.open(controller: 4095)
        } throws: { error in
            switch error as? BluetoothUnavailable {
            case .noKernelSupport?, .noController?: true
            default: false
            }
        }
    }

    @Test func errnoValuesMapToReasons() {
        #expect(BluetoothUnavailable(errno: EAFNOSUPPORT, operation: "socket", controller: 0) == .noKernelSupport(errno: EAFNOSUPPORT))
        #expect(BluetoothUnavailable(errno: ENODEV, operation: "bind", controller: 2) == .noController(index: 2))
        #expect(BluetoothUnavailable(errno: EPERM, operation: "bind", controller: 0) == .permissionDenied(operation: "bind", errno: EPERM))
        #expect(BluetoothUnavailable(errno: EBUSY, operation: "bind", controller: 1) == .controllerBusy(index: 1))
        #expect(BluetoothUnavailable(errno: ERFKILL, operation: "bind", controller: 0) == .blockedByRFKill(index: 0))
        #expect(BluetoothUnavailable(errno: ENETDOWN, operation: "write", controller: 0) == .controllerDown(index: 0))
        #expect(BluetoothUnavailable(errno: EIO, operation: "bind", controller: 0) == .systemCallFailed(operation: "bind", errno: EIO))
        #expect(BluetoothUnavailable.noController(index: 0).description == "Bluetooth unavailable: no controller hci0; BLE devices are not read")
    }

    /// Without bluetoothd nobody powers the controller on: the message names the command that works without it
    /// (found in the VM tests, where the old hint `bluetoothctl power on` cannot work).
    @Test func aPoweredOffControllerNamesTheCommandThatPowersItOn() {
        let text = BluetoothUnavailable.controllerDown(index: 1).description
        #expect(text.contains("hci1 is powered off"), "\(text)")
        #expect(text.contains("`btmgmt --index 1 power on`"), "\(text)")
    }
}
