#!/usr/bin/env python3
"""Builds the eufy-scale captures in this folder (see ORIGIN for where every byte comes from).

Run from anywhere: `python3 Tests/AdapterTests/Captures/eufy-scale/make-captures.py` (it rewrites every
generated file in this folder). The shared btsnoop writer and record builders are in
scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

EUFY = "eufy-scale"
C1_COMPANY = 0x0000  # the C1/P1 frames' company id is not published: a placeholder
C1_ADDRESS = "CF:E6:03:1D:09:01"
P1_ADDRESS = "CF:E6:03:1D:09:03"


def scan_response(capture, address, name):
    capture.advertising_report(address, name_ad(name), event_type=0x04, rssi=-60)


def advertise(capture, address, company, frame):
    capture.advertising_report(address, flags_ad() + manufacturer_ad(company, frame), event_type=0x00, rssi=-60)


def c1_frame(weight_kg, state):
    """Synthetic, to the layout of bdr99/eufylife-ble-client (T9146/T9147): 18 bytes, 0xCF at 4, weight
    at 7-8 (LE, 0.01 kg), state at 13, XOR of 4-13 at 14; unknown bytes zero."""
    frame = bytearray(18)
    frame[4] = 0xCF
    raw = round(weight_kg * 100)
    frame[7], frame[8] = raw & 0xFF, raw >> 8
    frame[13] = state
    checksum = 0
    for byte in frame[4:14]:
        checksum ^= byte
    frame[14] = checksum
    return bytes(frame)


def c1_case(capture):
    """A settling frame, the final weight twice (one sample), then the load removed."""
    scan_response(capture, C1_ADDRESS, "eufy T9146")
    times = []
    for frame in [c1_frame(71.0, 0x01), c1_frame(72.35, 0x00), c1_frame(72.35, 0x00), c1_frame(0, 0x00)]:
        capture.advance(500)
        advertise(capture, C1_ADDRESS, C1_COMPANY, frame)
        times.append(capture.at())
    device = device_json(name="eufy T9146", manufacturer="Eufy", localIdentifier=C1_ADDRESS)
    return [sample("BodyMass", 72.35, "kg", times[1], source=EUFY, device=device, metadata=metadata_json())]


def p1_case(capture):
    """The P1 (T9147) sends the C1's frame: one final weighing, 68.5 kg."""
    scan_response(capture, P1_ADDRESS, "eufy T9147")
    capture.advance(500)
    advertise(capture, P1_ADDRESS, C1_COMPANY, c1_frame(68.5, 0x00))
    device = device_json(name="eufy T9147", manufacturer="Eufy", localIdentifier=P1_ADDRESS)
    return [sample("BodyMass", 68.5, "kg", capture.at(), source=EUFY, device=device, metadata=metadata_json())]


def bad_case(capture):
    """A C1 frame whose checksum byte is off by one."""
    scan_response(capture, C1_ADDRESS, "eufy T9146")
    frame = bytearray(c1_frame(72.35, 0x00))
    good = frame[14]
    frame[14] ^= 0x01
    capture.advance(500)
    advertise(capture, C1_ADDRESS, C1_COMPANY, bytes(frame))
    return [EUFY + ": bad-checksum: %s: XOR of bytes 4-13 is 0x%02x, byte 14 says 0x%02x: %s"
            % (C1_ADDRESS, good, frame[14], " ".join("%02x" % b for b in frame))]


CASES = [Case("c1-weighing", c1_case), Case("p1-weighing", p1_case), Case("bad-c1-checksum", bad_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
