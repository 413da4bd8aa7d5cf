#!/usr/bin/env python3
"""Builds the etekcity-scale captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/etekcity-scale/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

ETEKCITY = "etekcity-scale"
COMPANY = 0x06D0
FIT8S_ADDRESS = "A9:89:5D:ED:A0:63"  # the address etekcity_esf551_ble's tests use
ESF551_ADDRESS = "D0:4D:00:1C:29:62"  # echoed in its frame

# ronnnnnnnnnnnnn/etekcity_esf551_ble tests/unit/test_fit8s_protocol.py
SAMPLE_KG = "0163a0ed5d89a9c0a901563a0100000100020300"  # Wireshark sample: 80.47 kg, stable
SAMPLE_KG_WITH_IMPEDANCE = "0163a0ed5d89a9c0a9017c3c0119020100020300"  # live capture: 81.02 kg, 537 ohm
UNSTABLE = SAMPLE_KG[:30] + "00" + SAMPLE_KG[32:]  # the test's unstable case: byte 15 = 0
# tests/unit/test_detection.py: ESF551_PAYLOAD (model 2)
ESF551 = "0162291c004dd00002"


def advertise(capture, address, frame):
    capture.advertising_report(address, flags_ad() + manufacturer_ad(COMPANY, h(frame)), rssi=-60)


def fit8s_case(capture):
    times = []
    for frame in [UNSTABLE, SAMPLE_KG, SAMPLE_KG, SAMPLE_KG_WITH_IMPEDANCE]:
        advertise(capture, FIT8S_ADDRESS, frame)
        times.append(capture.at())
        capture.advance(500)
    device = device_json(manufacturer="Etekcity", model="Fit 8S", localIdentifier=FIT8S_ADDRESS)
    return [
        sample("BodyMass", 80470, "g", times[1], source=ETEKCITY, device=device, metadata=metadata_json()),
        sample("BodyMass", 81020, "g", times[3], source=ETEKCITY, device=device,
               metadata=metadata_json(IngestImpedanceOhm=537)),
    ]


def esf551_case(capture):
    """The ESF-551 advertises its model only; its weighing comes over a connection: nothing here."""
    for _ in range(2):
        advertise(capture, ESF551_ADDRESS, ESF551)
        capture.advance(500)
    return []


def bad_case(capture):
    """test_fit8s_protocol.py's invalid length: SAMPLE_KG without its last byte."""
    frame = SAMPLE_KG[:-2]
    advertise(capture, FIT8S_ADDRESS, frame)
    return [ETEKCITY + ": bad-length: %s: a Fit 8S frame has 20 bytes, got 19: %s"
            % (FIT8S_ADDRESS, " ".join(frame[i:i + 2] for i in range(0, len(frame), 2)))]


CASES = [Case("fit8s-weighings", fit8s_case), Case("esf551-advertisement", esf551_case), Case("bad-fit8s", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
