#!/usr/bin/env python3
"""Builds the mi-band-heart-rate captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/mi-band-heart-rate/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

MIBAND = "mi-band-heart-rate"

# custom-components/ble_monitor custom_components/ble_monitor/test/test_amazfit_parser.py: raw HCI events.
MIBAND_EXTENDED = "043e390d011200004b0b893f09c50100ff7fb20000000000000000001f0201041bff5701020aff54ffffffffffffffffffffffffff03c5093f890b4b"
MIBAND4_LEGACY = ("043E480201000045613BFFFDFF3C0201061BFF570102020154FFFFFFFFFFFFFFFFFFFFFFFFFF03FFFDFF3B6145"
                  "10094D6920536D6172742042616E6420340302E0FE0716E0FE0B000000A5")
# theengs/decoder tests/BLE/test_ble.cpp, test_mac_mfgdata / test_mac_mfgsvcdata (manufacturer data with company id).
THEENGS_ADDRESS = "AA:BB:CC:DD:EE:FF"
THEENGS_FRAMES = [
    "57010202017dffffffffffffffffffffffffff02aabbccddeeff",  # act_bpm 125
    "570102020184ffffffffffffffffffffffffff02aabbccddeeff",  # act_bpm 132
    "570102ffffffffffffffffffffffffffffffff02aabbccddeeff",  # no heart rate
    "570100dcdde701d61acdc010c59c77fad0bf8e02aabbccddeeff",  # Amazfit Bip S: no heart rate
]


def heart_rate_case(capture):
    capture.raw_event(h(MIBAND_EXTENDED))
    first = capture.at()
    capture.advance(1000)
    capture.raw_event(h(MIBAND4_LEGACY))
    second = capture.at()
    times = []
    for frame in THEENGS_FRAMES:
        capture.advance(1000)
        capture.advertising_report(THEENGS_ADDRESS, flags_ad() + ad(0xFF, h(frame)), rssi=-60)
        times.append(capture.at())
    def device(address, name=None):
        return device_json(name=name, manufacturer="Huami", localIdentifier=address)
    m = metadata_json()
    return [
        sample("HeartRate", 84, "count/min", first, source=MIBAND, device=device("C5:09:3F:89:0B:4B"), metadata=m),
        sample("HeartRate", 84, "count/min", second, source=MIBAND, device=device("FF:FD:FF:3B:61:45", "Mi Smart Band 4"), metadata=m),
        sample("HeartRate", 125, "count/min", times[0], source=MIBAND, device=device(THEENGS_ADDRESS), metadata=m),
        sample("HeartRate", 132, "count/min", times[1], source=MIBAND, device=device(THEENGS_ADDRESS), metadata=m),
    ]


def bad_case(capture):
    """Synthetic: a Huami frame cut after two bytes."""
    capture.advertising_report(THEENGS_ADDRESS, flags_ad() + ad(0xFF, h("57010202")), rssi=-60)
    return [MIBAND + ": short-frame: %s: Huami frame needs 4 bytes, got 2: 02 02" % THEENGS_ADDRESS]


CASES = [Case("mi-band-heart-rate", heart_rate_case), Case("bad-huami-frame", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
