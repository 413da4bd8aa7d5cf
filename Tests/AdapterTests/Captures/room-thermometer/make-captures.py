#!/usr/bin/env python3
"""Builds the room-thermometer captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/room-thermometer/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

ROOM = "room-thermometer"
AMBIENT = "IngestQuantityTypeIdentifierAmbientTemperature"

# theengs/decoder tests/BLE/test_ble.cpp, test_uuid_name_svcdata: (device, name, 0x181A service data, °C).
ATC_PVVX = [
    ("A4:C1:38:D5:D4:98", "ATC_800021", "a4c138d5d49801453e510b7b62", 32.5, "ATC1441 firmware"),
    ("A4:C1:38:D5:D4:98", "ATC_800021", "a4c138d5d498ffd33e510b7b62", -4.5, "ATC1441 firmware"),
    ("A4:C1:38:CF:01:56", "ATC_800021", "5601cf38c1a44008bd13470c64cc0f", 21.12, "PVVX firmware"),
    ("A4:C1:38:CF:01:56", "ATC_800021", "5601cf38c1a462fdbd13470c64cc0f", -6.7, "PVVX firmware"),
    ("58:2D:34:12:33:DC", "CGG_1233DC", "582d341233dc00e03e490b2c2e", 22.4, "ATC1441 firmware"),
    ("58:2D:34:12:33:DC", "CGG_1233DC", "dc3312342d582f09aa173d0b4b7c05", 23.51, "PVVX firmware"),
]
# test_mfgdata: (name, manufacturer data with company id, °C); the addresses are ours.
GOVEE = [
    ("A4:C1:38:00:00:01", "GVH5075_1234", "88ec000418ee6400", 26.8),
    ("A4:C1:38:00:00:02", "GVH5072_1234", "88ec0004344b6400", 27.5),
    ("A4:C1:38:00:00:03", "Govee_H5074_1234", "88ec00c408231d6402", 22.44),
    ("A4:C1:38:00:00:03", "Govee_H5074_1234", "88ec00a0facc176402", -13.76),
    ("A4:C1:38:00:00:03", "Govee_H5074_1234", "88ec001b0a9b196402", 25.87),
    ("A4:C1:38:00:00:04", "GVH5102_1234", "0100010103590e64", 21.9),
    ("A4:C1:38:00:00:05", "GVH5174_1234", "01000101035e1364", 22),
    ("A4:C1:38:00:00:05", "GVH5174_1234", "01000101811a6764", -7.2),
]
INKBIRD = [
    ("49:42:00:00:00:01", "sps", "660a03150010805908", 26.62),
    ("49:42:00:00:00:01", "sps", "f009fe1301ca893008", None),  # external probe: not read
    ("49:42:00:00:00:02", "sps", "e300bb070093c36406", 2.27),
    ("49:42:00:00:00:03", "tps", "660a19200010805908", 26.62),
    ("49:42:00:00:00:03", "tps", "76fb00000010805908", -11.62),
    ("49:42:00:00:00:04", "tps", "840affff00a6066008", 26.92),
]


def atc_case(capture):
    records = []
    for address, name, payload, celsius, model in ATC_PVVX:
        # No flags: the 15-byte PVVX service data and the name fill the 31 bytes.
        capture.advertising_report(address, service_data_ad(0x181A, h(payload)) + name_ad(name), event_type=0x00, rssi=-60)
        device = device_json(name=name, model=model, localIdentifier=address)
        records.append(sample(AMBIENT, celsius, "degC", capture.at(), source=ROOM, device=device, metadata=metadata_json()))
        capture.advance(1000)
    return records


def govee_case(capture):
    records = []
    for address, name, payload, celsius in GOVEE:
        # No flags: "Govee_H5074_1234" and the 9-byte frame fill the 31 bytes.
        capture.advertising_report(address, name_ad(name) + manufacturer_raw_ad(h(payload)), rssi=-60)
        device = device_json(name=name, manufacturer="Govee", localIdentifier=address)
        records.append(sample(AMBIENT, celsius, "degC", capture.at(), source=ROOM, device=device, metadata=metadata_json()))
        capture.advance(1000)
    return records


def inkbird_case(capture):
    records = []
    for address, name, payload, celsius in INKBIRD:
        capture.advertising_report(address, flags_ad() + name_ad(name) + manufacturer_raw_ad(h(payload)), rssi=-60)
        if celsius is not None:
            device = device_json(name=name, manufacturer="Inkbird", localIdentifier=address)
            records.append(sample(AMBIENT, celsius, "degC", capture.at(), source=ROOM, device=device, metadata=metadata_json()))
        capture.advance(1000)
    return records


def bad_case(capture):
    """Synthetic: a Govee H5075 frame cut to 4 bytes, and a PVVX frame claiming 327.67 °C (7f ff)."""
    capture.advertising_report("A4:C1:38:00:00:01", flags_ad() + name_ad("GVH5075_1234") + manufacturer_raw_ad(h("88ec000418")), rssi=-60)
    capture.advance(1000)
    hot = "5601cf38c1a4ff7fbd13470c64cc0f"
    capture.advertising_report("A4:C1:38:CF:01:56", service_data_ad(0x181A, h(hot)) + name_ad("ATC_800021"), rssi=-60)
    return [
        ROOM + ": bad-length: A4:C1:38:00:00:01: a Govee frame has 6 or 7 bytes, got 3: 00 04 18",
        ROOM + ": implausible-value: A4:C1:38:CF:01:56: 327.67 degC is outside the plausible range of ambientTemperature",
    ]


CASES = [Case("atc-pvvx", atc_case), Case("govee", govee_case), Case("inkbird", inkbird_case),
         Case("bad-thermometer", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
