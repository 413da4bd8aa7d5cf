import ANTPlus
import AdapterKit
import AmazfitScale
import BeurerScale
import BeurerStandardScale
import BerryMedOximeter
import BTHome
import ColmiRing
import DSD6Band
import EtekcityScale
import EufyP2Scale
import EufyScale
import FemometerThermometer
import GATTHealthProfiles
import HeartRateStraps
import HidrateSpark
import LaicaScale
import MedisanaBloodPressure
import MiBandHeartRate
import OmronBloodPressure
import OmronPedometer
import QNGATTScale
import QNScale
import RoomThermometers
import SenssunScale
import TEMPer
import XiaomiMiBeacon
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
        XiaomiMiBeaconAdapter(),
        BTHomeAdapter(),
        EtekcityScaleAdapter(),
        EufyP2ScaleAdapter(),  // connects to the P2 family, before the advertisement-only Eufy adapter
        EufyScaleAdapter(),
        MiBandHeartRateAdapter(),
        HeartRateStrapAdapter(),
        RoomThermometerAdapter(),
        AmazfitScaleAdapter(),
        SenssunScaleAdapter(),
        LaicaScaleAdapter(),
        DSD6BandAdapter(),
        YunmaiScaleAdapter(),
        BeurerScaleAdapter(),
        BeurerStandardScaleAdapter(),
        HidrateSparkAdapter(),
        OmronBPAdapter(),
        QNGATTScaleAdapter(),
        ColmiRingAdapter(),
        MedisanaBPAdapter(),
        FemometerAdapter(),
        BerryMedOximeterAdapter(),
        QNScaleAdapter(),  // company 0xFFFF is shared by many vendors: after the exact matches
        GATTHealthAdapter(),
    ]

    /// USB adapters.
    public static let usb: [any USBAdapter] = [
        ANTPlusAdapter(),
        OmronPedometerAdapter(),
        TEMPerAdapter(),
    ]
}
