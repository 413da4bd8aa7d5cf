#!/usr/bin/env python3
"""Builds the laica-scale captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/laica-scale/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

LAICA = "laica-scale"
ADDRESS = "A0:91:5E:BE:2B:A0"
# custom-components/ble_monitor test/test_laica.py test_laica: a raw HCI event (LE Advertising Report)
# named "AAA002" with manufacturer data ac a0 …: weight 13.0 kg.
EVENT = "043e2b02010300a02bbe5e91a01f0201040303b0ff0fffaca0a02bbe5e91a0a02c92140dbf0709414141303032d9"


def weighing_case(capture):
    capture.raw_event(h(EVENT))
    device = device_json(name="AAA002", manufacturer="Laica", localIdentifier=ADDRESS)
    return [sample("BodyMass", 13, "kg", capture.at(), source=LAICA, device=device, metadata=metadata_json())]


CASES = [Case("laica-weighing", weighing_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
