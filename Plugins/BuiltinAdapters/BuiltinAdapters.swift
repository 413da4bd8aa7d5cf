import ANTPlus
import AdapterKit
import BeurerScale
import BeurerStandardScale
import BTHome
import DSD6Band
import GATTHealthProfiles
import HidrateSpark
import OmronPedometer
import TEMPer
import XiaomiScale
import YunmaiScale

/// The ordered registry of the adapters compiled into ingestd.
///
/// Order matters: a device goes to the first adapter that matches it, so exact matches (a Xiaomi
/// scale, recognised by its name and service data) come before generic ones (any device exposing
/// a standard GATT health service). Adding an adapter is one folder under `Plugins/`, one line here, its module in
/// `builtinAdapterModules` (Package.swift) and its captures (Plugins/README.md, "Adding a built-in adapter").
public enum BuiltinAdapters {
    /// Bluetooth LE adapters, exact before generic.
    public static let bluetooth: [any BLEAdapter] = [
        XiaomiScaleAdapter(),
        BTHomeAdapter(),
        DSD6BandAdapter(),
        YunmaiScaleAdapter(),
        BeurerScaleAdapter(),
        BeurerStandardScaleAdapter(),
        HidrateSparkAdapter(),
        GATTHealthAdapter(),
    ]

    /// USB adapters.
    public static let usb: [any USBAdapter] = [
        ANTPlusAdapter(),
        OmronPedometerAdapter(),
        TEMPerAdapter(),
    ]
}
