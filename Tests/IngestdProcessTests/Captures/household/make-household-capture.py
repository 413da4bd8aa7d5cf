#!/usr/bin/env python3
"""Builds household-mi-scale.btsnoop: one Mi Smart Scale (v1, service data 0x181D) weighing three
people in turn, for the people tests (issue 15). Python 3 standard library only; run from anywhere:
`python3 Tests/IngestdProcessTests/Captures/household/make-household-capture.py`.

The frames follow the Mi scale v1 layout the xiaomi-scale adapter decodes (Plugins/XiaomiScale,
the published frames in Tests/AdapterTests/Captures/xiaomi-scale/ORIGIN): control byte (0x22:
stabilized, kg), weight uint16 LE in 5 g steps, the scale clock (year uint16 LE, month, day,
hour, minute, second). Each weighing is broadcast twice while stabilized, then once with the
load removed (bit 7), as the scale does. btsnoop v1, datalink 1002 (H4), LE Advertising Reports
from the address the published tests use.

Weighings (scale clock, Europe/Berlin): 61.20 kg at 2025-01-14 07:00:00, 84.10 kg at 07:05:00,
72.00 kg at 07:10:00.
"""

import os
import struct
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
BTSNOOP_EPOCH_OFFSET = 0x00DCDDB30F2F8000  # microseconds from 0000-01-01 to 1970-01-01
ADDRESS = "50:FB:19:1B:B5:DC"
CAPTURE_START = datetime(2025, 1, 15, 9, 0, 0, tzinfo=timezone.utc)
WEIGHINGS = [(61.20, (2025, 1, 14, 7, 0, 0)), (84.10, (2025, 1, 14, 7, 5, 0)), (72.00, (2025, 1, 14, 7, 10, 0))]


def frame(control, kilograms, clock):
    year, month, day, hour, minute, second = clock
    raw = round(kilograms * 200)
    return bytes([control]) + struct.pack("<HH", raw, year) + bytes([month, day, hour, minute, second])


def advertising_report(payload):
    """LE Meta event, LE Advertising Report: flags, the name "MISCA", service data 0x181D."""
    data = bytes([2, 0x01, 0x06]) + bytes([6, 0x09]) + b"MISCA"
    data += bytes([len(payload) + 3, 0x16]) + struct.pack("<H", 0x181D) + payload
    address = bytes(int(part, 16) for part in reversed(ADDRESS.split(":")))
    report = bytes([0x03, 0x00]) + address + bytes([len(data)]) + data + struct.pack("b", -60)
    parameters = bytes([0x02, 0x01]) + report
    return bytes([0x3E, len(parameters)]) + parameters


def main():
    time = int(CAPTURE_START.timestamp() * 1_000_000)
    out = bytearray(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    for kilograms, clock in WEIGHINGS:
        for control in (0x22, 0x22, 0xA2):
            packet = bytes([0x04]) + advertising_report(frame(control, kilograms, clock))
            out += struct.pack(">IIIIq", len(packet), len(packet), 0x03, 0, time + BTSNOOP_EPOCH_OFFSET) + packet
            time += 250_000
        time += 5_000_000
    with open(os.path.join(HERE, "household-mi-scale.btsnoop"), "wb") as file:
        file.write(out)


if __name__ == "__main__":
    main()
