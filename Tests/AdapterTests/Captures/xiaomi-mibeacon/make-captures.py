#!/usr/bin/env python3
"""Builds the xiaomi-mibeacon captures in this folder from published MiBeacon frames (service data 0xFE95).

Run from anywhere: `python3 Tests/AdapterTests/Captures/xiaomi-mibeacon/make-captures.py`
(it rewrites every generated file in this folder). Each capture's keys (the keys `ingestd decode --key`
is given for it) are in `<case>.keys`, one ADDRESS=HEX a line: the published test bindkeys.
The shared btsnoop writer and record builders are in scripts/ble_capture_kit.py; see ORIGIN.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SOURCE = "xiaomi-mibeacon"
FOLDER = os.path.dirname(os.path.abspath(__file__))

# Bluetooth-Devices/xiaomi-ble tests/test_parser.py (frames as the tests give them, service data after the UUID).
S400_ADDRESS = "8C:D0:B2:F6:BE:EF"
S400_KEY = "0728974d657a4b60964c1b1677f35f7c"
S400_WEIGHING = b'HY\xd5;\n\xbc\x07\x8f\xf24\x8c\x84A8\xe90"\x00\x00\x00\x9eS\x85\x99'  # test_Xiaomi_Scale_S400_MJTZC01YM
S400_CLOSING = b"HY\xd5;\x0b\xd6\xef\x0b%\xdbrx^~/F\xd6\x00\x00\x00\xd8d-\xf6"  # ..._packet_2
SOCKS_ADDRESS = "04:AE:47:67:C6:7C"
SOCKS_KEY = "02d2900363ef629c736a4549677acbee"
S400_SOCKS = (b"HY\xd5;\x71\x53\x04\x38\xb5\x89\x4b"
              b"\x24\x2c\x20\x99\x08\xda\x00\x00\x00\x47\x9e\xcd\xa3")  # test_Xiaomi_Scale_S400_MJTZC01YM_socks
S200_ADDRESS = "D0:7B:6F:27:D7:29"
S200_KEY = "653b1b10e1cb35e4ac5e60fa45f3bf29"
S200_WEIGHING = b"HY\x04L\x01\x9a\x80\xa2u\x93\x90\x10\xf0\xab\xc4\xfa\xdc\x06\x00\x00=)\xc0D"  # test_Xiaomi_Scale_S200_MJTZC02YM
T201_ADDRESS = "00:81:F9:DD:6F:C1"
T201_FRAME = b'p"\xdb\x00o\xc1o\xdd\xf9\x81\x00\t\x00 \x05\xc6\rc\rQ'  # test_Xiaomi_MMC_T201_1
W505_ADDRESS = "D0:24:18:53:AB:DB"
W505_FRAME = b'p"\x91\x03\x0f\xdb\xabS\x18$\xd0\t\n\x00\x02u\r\x07'  # test_Xiaomi_MMC_W505

S400_DEVICE = dict(name="Body Composition Scale S400", manufacturer="Xiaomi", model="MJTZC01YM")


def advertise(capture, address, frame):
    capture.advertising_report(address, flags_ad() + service_data_ad(0xFE95, frame), event_type=0x00, rssi=-60)


def write_keys(name, pairs):
    with open(os.path.join(FOLDER, name + ".keys"), "w") as file:
        for address, key in pairs:
            file.write("%s=%s\n" % (address, key))


def counter(frame):
    """The 32-bit counter of an encrypted v4/v5 frame: the counter byte (offset 4) under the extended counter."""
    return frame[4] | int.from_bytes(frame[-7:-4], "little") << 8


def weighing(address, frame_counter, moment, kilograms, heart_rate=None, device=S400_DEVICE, **impedances):
    meta = metadata_json(sync_identifier="%s/%d/%d" % (address, frame_counter, int(moment.timestamp())), sync_version=1,
                         IngestScaleProfile=1, **impedances)
    dev = device_json(localIdentifier=address, **device)
    records = [sample("BodyMass", kilograms, "kg", moment, source=SOURCE, device=dev, metadata=meta)]
    if heart_rate is not None:
        records.append(sample("HeartRate", heart_rate, "count/min", moment, source=SOURCE, device=dev, metadata=meta))
    return records


def s400_case(capture):
    """test_Xiaomi_Scale_S400_MJTZC01YM (69.9 kg, heart rate 92, 543.2 ohm at 50 kHz: not yet stabilized) and
    ..._packet_2 (497.6 ohm at 250 kHz: stabilized), each broadcast three times; one weighing, its time the first frame's."""
    write_keys("s400", [(S400_ADDRESS, S400_KEY)])
    first = None
    for frame in [S400_WEIGHING, S400_CLOSING]:
        for _ in range(3):
            advertise(capture, S400_ADDRESS, frame)
            first = first or capture.at()
            capture.advance(100)
        capture.advance(1000)
    return weighing(S400_ADDRESS, counter(S400_WEIGHING), first, 69.9, heart_rate=92, IngestImpedanceOhm=543.2,
                    IngestImpedanceHighFrequencyOhm=497.6)


def s400_socks_case(capture):
    """test_Xiaomi_Scale_S400_MJTZC01YM_socks: 74.7 kg, no impedance (weighed in socks), stabilized at once."""
    write_keys("s400-socks", [(SOCKS_ADDRESS, SOCKS_KEY)])
    advertise(capture, SOCKS_ADDRESS, S400_SOCKS)
    moment = capture.at()
    return weighing(SOCKS_ADDRESS, counter(S400_SOCKS), moment, 74.7)


def s200_case(capture):
    """test_Xiaomi_Scale_S200_MJTZC02YM: 62.25 kg, profile 1."""
    write_keys("s200", [(S200_ADDRESS, S200_KEY)])
    advertise(capture, S200_ADDRESS, S200_WEIGHING)
    moment = capture.at()
    return weighing(S200_ADDRESS, counter(S200_WEIGHING), moment, 62.25,
                    device=dict(name="Smart Scale S200", manufacturer="Xiaomi", model="MJTZC02YM"))


def thermometers_case(capture):
    """test_Xiaomi_MMC_W505 (34.45 degC) and test_Xiaomi_MMC_T201_1 (36.87199806168224 degC, derived from its
    two sensor temperatures); unencrypted MiBeacon v2; the W505 frame sent twice (the repeat is dropped)."""
    advertise(capture, W505_ADDRESS, W505_FRAME)
    w505 = capture.at()
    capture.advance(500)
    advertise(capture, W505_ADDRESS, W505_FRAME)
    capture.advance(1000)
    advertise(capture, T201_ADDRESS, T201_FRAME)
    t201 = capture.at()
    meta = metadata_json()
    return [
        sample("BodyTemperature", 34.45, "degC", w505, source=SOURCE, metadata=meta,
               device=device_json(name="Body Thermometer", manufacturer="Xiaomi", model="MMC-W505",
                                  localIdentifier=W505_ADDRESS)),
        sample("BodyTemperature", 36.87199806168224, "degC", t201, source=SOURCE, metadata=meta,
               device=device_json(name="Baby Thermometer", manufacturer="Xiaomi", model="MMC-T201-1",
                                  localIdentifier=T201_ADDRESS)),
    ]


def tampered(frame):
    """The frame with one ciphertext bit flipped (offset 6)."""
    changed = bytearray(frame)
    changed[6] ^= 0x01
    return bytes(changed)


def bad_keys_case(capture):
    """The S400 weighing frame with another scale's key (the socks test's), the S200 frame with no key, and the
    socks frame with one ciphertext bit flipped under its right key: none is decoded; each problem is counted."""
    write_keys("bad-keys", [(S400_ADDRESS, SOCKS_KEY), (SOCKS_ADDRESS, SOCKS_KEY)])
    for address, frame in [(S400_ADDRESS, S400_WEIGHING), (S400_ADDRESS, S400_CLOSING), (S200_ADDRESS, S200_WEIGHING),
                           (SOCKS_ADDRESS, tampered(S400_SOCKS))]:
        advertise(capture, address, frame)
        capture.advance(1000)
    line = SOURCE + ": %s: %s: encrypted MiBeacon frame not decoded"
    return [
        line % ("mic-mismatch", S400_ADDRESS),
        line % ("mic-mismatch", S400_ADDRESS),
        line % ("no-key", S200_ADDRESS),
        line % ("mic-mismatch", SOCKS_ADDRESS),
    ]


def bad_replayed_case(capture):
    """The S400 weighing and closing frames, then the weighing frame again after the closing one (an older
    counter: replayed): one weighing, the replayed frame refused."""
    write_keys("bad-replayed", [(S400_ADDRESS, S400_KEY)])
    advertise(capture, S400_ADDRESS, S400_WEIGHING)
    first = capture.at()
    capture.advance(1000)
    advertise(capture, S400_ADDRESS, S400_CLOSING)
    capture.advance(1000)
    advertise(capture, S400_ADDRESS, S400_WEIGHING)
    records = weighing(S400_ADDRESS, counter(S400_WEIGHING), first, 69.9, heart_rate=92, IngestImpedanceOhm=543.2,
                       IngestImpedanceHighFrequencyOhm=497.6)
    return ([SOURCE + ": replayed-counter: %s: encrypted MiBeacon frame not decoded" % S400_ADDRESS], records)


CASES = [
    Case("s400", s400_case),
    Case("s400-socks", s400_socks_case),
    Case("s200", s200_case),
    Case("thermometers", thermometers_case),
    Case("bad-keys", bad_keys_case),
    Case("bad-replayed", bad_replayed_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
