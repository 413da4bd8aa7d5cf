#!/usr/bin/env python3
"""Builds the qn-scale-broadcast captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/qn-scale-broadcast/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

QN = "qn-scale-broadcast"
ADDRESS = "00:00:5E:00:53:01"  # the documentation address openScale put in the frames' bytes 2-7

# openScale QNHandlerBroadcastFT26RTest.kt: frames captured from a FITINDEX FT-26R-W.
MOVING1 = "aabb00005e0053016d000000ffffff1400671b510e032100"
MOVING2 = "aabb00005e0053016e000000ffffff14007b1b510e032300"
SETTLED1 = "aabb00005e00530172000000ffffff1500761b510e032300"  # 70.30 kg
SETTLED2 = "aabb00005e0053017b000000ffffff1500761b510e032300"  # 70.30 kg again
IDLE = "aabb00005e00530100f09f6affffff15a00000510e03500f"  # weight 0: stepped off
MOVING3 = "aabb00005e005301ef000000ffffff14007b1b510e034900"
SETTLED3 = "aabb00005e005301f0000000ffffff15007b1b510e034400"  # 70.35 kg


def advertise(capture, frame):
    capture.advertising_report(ADDRESS, flags_ad() + manufacturer_ad(0xFFFF, h(frame)), event_type=0x03, rssi=-60)


def weighings_case(capture):
    """Two weighings: moving frames (settling), two settled frames of one weight (one sample), the
    idle frame, then the second session's moving and settled frames."""
    times = {}
    for frame in [MOVING1, MOVING2, SETTLED1, SETTLED2, IDLE, MOVING3, SETTLED3]:
        advertise(capture, frame)
        times.setdefault(frame, capture.at())
        capture.advance(500)
    device = device_json(manufacturer="QN", localIdentifier=ADDRESS)
    return [
        sample("BodyMass", 70.3, "kg", times[SETTLED1], source=QN, device=device, metadata=metadata_json()),
        sample("BodyMass", 70.35, "kg", times[SETTLED3], source=QN, device=device, metadata=metadata_json()),
    ]


def bad_case(capture):
    """Synthetic: SETTLED1 cut after 12 bytes, and SETTLED1 with its weight bytes set to ff ff (655.35 kg,
    beyond body mass's 650 kg)."""
    short = SETTLED1[:24]
    heavy = SETTLED1[:34] + "ffff" + SETTLED1[38:]
    for frame in [short, heavy]:
        advertise(capture, frame)
        capture.advance(500)
    return [
        QN + ": short-frame: %s: AABB frame needs 19 bytes, got 12: %s" % (ADDRESS, " ".join(short[i:i + 2] for i in range(0, 24, 2))),
        QN + ": implausible-value: %s: 655.35 kg is outside the plausible range of bodyMass" % ADDRESS,
    ]


CASES = [Case("ft26r-weighings", weighings_case), Case("bad-aabb", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
