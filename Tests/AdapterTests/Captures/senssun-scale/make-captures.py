#!/usr/bin/env python3
"""Builds the senssun-scale captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/senssun-scale/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SENSSUN = "senssun-scale"
ADDRESS = "18:7A:93:C1:B3:33"
# custom-components/ble_monitor test/test_senssun_parser.py test_Senssun_IF_B7: a raw HCI event (LE
# Advertising Report) named "IF_B7" with manufacturer data under 0x0100: 67.25 kg, impedance 180, stabilized.
EVENT = "043E2B0201030033B3C1937A181F020106060949465F423714FF0001020311187A93C1B333021A4500B4A1AB61C5"


def if_b7_case(capture):
    capture.raw_event(h(EVENT))
    device = device_json(name="IF_B7", manufacturer="Senssun", model="IF_B7", localIdentifier=ADDRESS)
    return [sample("BodyMass", 67.25, "kg", capture.at(), source=SENSSUN, device=device,
                   metadata=metadata_json(IngestImpedanceOhm=180))]


def bad_case(capture):
    """Synthetic: the published frame without its last byte (the report's lengths adjusted)."""
    data = h("020106060949465F423713FF0001020311187A93C1B333021A4500B4A1AB")
    capture.advertising_report(ADDRESS, data, event_type=0x03, rssi=-59)
    return [SENSSUN + ": bad-length: %s: a Senssun frame has 17 bytes, got 16: "
            "02 03 11 18 7a 93 c1 b3 33 02 1a 45 00 b4 a1 ab" % ADDRESS]


CASES = [Case("if-b7", if_b7_case), Case("bad-if-b7", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
