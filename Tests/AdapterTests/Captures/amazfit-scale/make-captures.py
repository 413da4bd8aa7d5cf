#!/usr/bin/env python3
"""Builds the amazfit-scale captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/amazfit-scale/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

AMAZFIT = "amazfit-scale"
ADDRESS = "70:87:9E:30:A4:0E"
# custom-components/ble_monitor test/test_amazfit_parser.py test_amazfit_smart_scale: a raw HCI event
# (LE Extended Advertising Report) with 20 bytes of service data 0xFEE0: 85.3 kg, 517.2 ohm, pulse 104.
EVENT = ("043e390d011300000ea4309e87700100ff7fb10000000000000000001f0201050302e0fe1716e0fe"
         "ba82e6c7fc3414a442bf46ec68000462bba30100")


def smart_scale_case(capture):
    """The published event, then the same event again (a rebroadcast: no second sample)."""
    capture.raw_event(h(EVENT))
    moment = capture.at()
    capture.advance(500)
    capture.raw_event(h(EVENT))
    device = device_json(manufacturer="Amazfit", model="Smart Scale", localIdentifier=ADDRESS)
    return [
        sample("BodyMass", 85.3, "kg", moment, source=AMAZFIT, device=device, metadata=metadata_json(IngestImpedanceOhm=517.2)),
        sample("HeartRate", 104, "count/min", moment, source=AMAZFIT, device=device, metadata=metadata_json()),
    ]


CASES = [Case("smart-scale", smart_scale_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
