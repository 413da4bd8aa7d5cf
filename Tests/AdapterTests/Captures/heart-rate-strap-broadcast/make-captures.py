#!/usr/bin/env python3
"""Builds the heart-rate-strap-broadcast captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/heart-rate-strap-broadcast/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

STRAP = "heart-rate-strap-broadcast"
POLAR_ADDRESS = "A0:9E:1A:00:00:01"  # ours: the published test gives no address
XOSS_ADDRESS = "C0:00:00:00:00:02"  # ours

# theengs/decoder tests/BLE/test_ble.cpp, test_mfgdata (name, manufacturer data with company id).
POLAR = [("Polar H10 75087320", "6b003b164446"), ("Polar H10 75087320", "6b003b164446"), ("Polar H10 75087320", "6b002f166b68")]
XOSS = [("X2", "04ff0161063f")]


def polar_case(capture):
    """70 /min (broadcast twice: one sample), then 104 /min."""
    times = []
    for name, frame in POLAR:
        capture.advertising_report(POLAR_ADDRESS, flags_ad() + ad(0xFF, h(frame)) + name_ad(name), rssi=-60)
        times.append(capture.at())
        capture.advance(1000)
    device = device_json(name="Polar H10 75087320", manufacturer="Polar", localIdentifier=POLAR_ADDRESS)
    return [
        sample("HeartRate", 70, "count/min", times[0], source=STRAP, device=device, metadata=metadata_json()),
        sample("HeartRate", 104, "count/min", times[2], source=STRAP, device=device, metadata=metadata_json()),
    ]


def xoss_case(capture):
    name, frame = XOSS[0]
    capture.advertising_report(XOSS_ADDRESS, flags_ad() + ad(0xFF, h(frame)) + name_ad(name), rssi=-60)
    device = device_json(name="X2", manufacturer="XOSS", localIdentifier=XOSS_ADDRESS)
    return [sample("HeartRate", 63, "count/min", capture.at(), source=STRAP, device=device, metadata=metadata_json())]


def bad_case(capture):
    """Synthetic: the first Polar frame with its rate set to 0x00 (no skin contact: skipped) and to
    0x13 = 19 /min, below heart rate's plausible 20."""
    for frame in ["6b003b164400", "6b003b164413"]:
        capture.advertising_report(POLAR_ADDRESS, flags_ad() + ad(0xFF, h(frame)) + name_ad("Polar H10 75087320"), rssi=-60)
        capture.advance(1000)
    return [STRAP + ": implausible-value: %s: 19 count/min is outside the plausible range of heartRate" % POLAR_ADDRESS]


CASES = [Case("polar-h10", polar_case), Case("xoss-x2", xoss_case), Case("bad-strap-rate", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
