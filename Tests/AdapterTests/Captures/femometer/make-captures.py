#!/usr/bin/env python3
"""Builds the femometer captures in this folder to the standard layout (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/femometer/make-captures.py` (it rewrites
every generated file in this folder). Shared parts: scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
import ble_capture_kit  # noqa: E402
from ble_capture_kit import *  # noqa: E402,F401,F403

ble_capture_kit.CAPTURE_START = datetime(2026, 3, 16, 6, 0, 0, tzinfo=timezone.utc)

SOURCE = "femometer"
ADDRESS = "D0:3E:7D:12:5A:01"
NAME = "BM-Vinca2"

READINGS = [  # (hundredths of a degree Celsius, wall clock)
    (3642, (2026, 3, 15, 6, 45, 10)),
    (3657, (2026, 3, 16, 6, 41, 52)),
]


def temperature_frame(hundredths, moment):
    """Temperature Measurement: flags 0x06 (Celsius, time stamp, temperature type), FLOAT (mantissa, exponent
    -2), date time, type 6 (mouth)."""
    return (bytes([0x06]) + hundredths.to_bytes(3, "little") + bytes([0xFE]) + le16(moment[0]) + bytes(moment[1:])
            + bytes([0x06]))


def vinca2_case(capture):
    measurement = Characteristic(0x2A1C, 0x20, cccd_value=0x0002)  # indicate
    current_time = Characteristic(0x2A2B, 0x1A, cccd_value=0x0001)  # read, write, notify
    values = [(measurement, "indication", temperature_frame(*reading)) for reading in READINGS]
    gatt_services_session(capture, ADDRESS, NAME, [(0x1809, [measurement]), (0x1805, [current_time])], values)
    device = device_json(name=NAME, localIdentifier=ADDRESS)
    records = []
    for hundredths, moment in READINGS:
        identity = "%04d-%02d-%02dT%02d:%02d:%02d" % moment
        meta = metadata_json(sync_identifier="%s/2A1C/%s" % (ADDRESS, identity), sync_version=1,
                             HKBodyTemperatureSensorLocation=6)
        records.append(sample("BodyTemperature", hundredths / 100, "degC", local(*moment), source=SOURCE,
                              device=device, metadata=meta))
    return records


CASES = [Case("vinca2", vinca2_case)]


if __name__ == "__main__":
    generate(__file__, CASES)
