#!/usr/bin/env python3
"""Builds the yunmai-scale captures in this folder from the published Yunmai protocol (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/yunmai-scale/make-captures.py`
(it rewrites every generated file in this folder). The shared btsnoop writer, GATT session and
record builders are in scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403


YUNMAI = "yunmai-scale"
ADDRESS = "0C:B2:B7:30:11:20"
NAME = "YUNMAI-SIGNAL-M1US"


def checksum(data):
    value = 0
    for byte in data:
        value ^= byte
    return value


def command(op, data):
    """0D <total length> <op> data <XOR of the bytes after 0D>."""
    body = bytes([len(data) + 4, op]) + bytes(data)
    return bytes([0x0D]) + body + bytes([checksum(body)])


def response(kind, data):
    """0D <protocol version 1E> <total length> <type> data <XOR of the bytes after 0D>."""
    body = bytes([0x1E, len(data) + 5, kind]) + bytes(data)
    return bytes([0x0D]) + body + bytes([checksum(body)])


def be(value, width):
    return value.to_bytes(width, "big")


def result_frame(clock, user, weight, resistance, fat, history=0):
    return response(0x02, bytes([history]) + be(clock, 4) + be(user, 4) + be(weight, 2) + be(resistance, 2) + be(fat, 2))


def session(capture, frames):
    measurement = Characteristic(0xFFE4, 0x10, cccd_value=0x0001)
    commands = Characteristic(0xFFE9, 0x08)
    # User 1, 170 cm, male, 30 years, waist/bust defaults 55 5A, kg: openScale's layout.
    user = bytes([0x0D, 0x12, 0x10, 0x01, 0x00, 0x00, 0x00, 0x01, 170, 0x01, 30, 0x55, 0x5A, 0x00, 0x00, 0x01, 0x00])
    user += bytes([checksum(user[1:])])
    clock = int(CAPTURE_START.timestamp())
    values = [
        (commands, "write", user),
        (commands, "write", bytes([0x0D, 0x0D, 0x11]) + be(clock, 4) + bytes(6)
         + bytes([checksum(bytes([0x0D, 0x11]) + be(clock, 4))])),
        (commands, "write", h("0d 05 13 00 16")),  # start measurement, the gist's example command
    ] + [(measurement, "notification", frame) for frame in frames]
    return gatt_session(capture, ADDRESS, NAME, 0xFFE0, [measurement, commands], values)


def samples(moment, user, kilograms, resistance, fat_fraction):
    device = device_json(name=NAME, manufacturer="Yunmai", localIdentifier=ADDRESS)
    stamp = int(moment.timestamp())
    metadata = metadata_json(sync_identifier="yunmai/%s/%d/%d" % (ADDRESS, stamp, user), sync_version=1,
                             IngestDeviceUserID=user, IngestImpedanceOhm=resistance)
    records = [sample("BodyMass", kilograms, "kg", moment, source=YUNMAI, device=device, metadata=metadata)]
    if fat_fraction is not None:
        records.append(sample("BodyFatPercentage", fat_fraction, "%", moment, source=YUNMAI, device=device,
                              metadata=metadata))
    return records


def weighing_case(capture):
    """Two settling frames (type 01: clock, weight) and the finished weighing (type 02): 75.30 kg,
    512 ohm, 23.50 % body fat, user 1, at the scale clock 2025-01-15 09:00:05 UTC; then the same
    result again (the scale repeats it), which is not a second sample."""
    clock = int(CAPTURE_START.timestamp())
    final = result_frame(clock + 5, 1, 7530, 512, 2350)
    session(capture, [response(0x01, be(clock, 4) + be(3765, 2)), response(0x01, be(clock + 2, 4) + be(7490, 2)),
                      final, final])
    moment = datetime.fromtimestamp(clock + 5, tz=timezone.utc)
    return samples(moment, 1, 75.30, 512, 0.235)


def bad_weighing_case(capture):
    """A finished weighing with its checksum flipped, one whose length byte lies, and one cut short."""
    clock = int(CAPTURE_START.timestamp())
    good = result_frame(clock + 5, 1, 7530, 512, 2350)
    flipped = good[:-1] + bytes([good[-1] ^ 0xFF])
    lying = good[:2] + bytes([0x13]) + good[3:]
    cut = good[:12]
    session(capture, [flipped, lying, cut])
    prefix = YUNMAI + ": "
    hex_text = lambda data: " ".join("%02x" % b for b in data)
    return [
        prefix + "bad-checksum: %s: checksum 0x%02x should be 0x%02x: %s"
        % (ADDRESS, flipped[-1], good[-1], hex_text(flipped)),
        prefix + "length-mismatch: %s: length byte says 19, 20 bytes came: %s" % (ADDRESS, hex_text(lying)),
        prefix + "length-mismatch: %s: length byte says 20, 12 bytes came: %s" % (ADDRESS, hex_text(cut)),
        prefix + "no-result: %s: no finished weighing: the device disconnected (the captured connection ended)"
        % ADDRESS,
    ]


CASES = [
    Case("weighing", weighing_case),
    Case("bad-weighing", bad_weighing_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
