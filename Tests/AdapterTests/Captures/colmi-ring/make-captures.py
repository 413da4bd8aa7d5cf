#!/usr/bin/env python3
"""Builds the colmi-ring captures in this folder from published bytes (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/colmi-ring/make-captures.py` (it
rewrites every generated file in this folder). Shared parts: scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timedelta, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SOURCE = "colmi-ring"
ADDRESS = "30:E4:5B:71:2C:08"
NAME = "R02_2C08"
SERVICE = "6E40FFF0-B5A3-F393-E0A9-E50E24DCCA9E"
RX = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
TX = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
BIG_DATA_SERVICE = "DE5BF728-D711-4E47-AF26-65E3012A5DC7"
BIG_DATA_REQUEST = "DE5BF72A-D711-4E47-AF26-65E3012A5DC7"
BIG_DATA_ANSWER = "DE5BF729-D711-4E47-AF26-65E3012A5DC7"


def packet(command, data=b""):
    body = bytes([command]) + bytes(data) + bytes(14 - len(data))
    return body + bytes([sum(body) & 0xFF])


# Real packets from tahnok/colmi_r02_client tests/test_hr.py (a day's heart-rate log of an R02,
# 2024-08-10 UTC, 24 packets) and tests/test_steps.py (test_parse_multi: 2023-08-13).
HEART_RATE = [bytes(p) for p in [
    b"\x15\x00\x18\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x002",
    b"\x15\x01\x80\xad\xb6f\x00\x00\x00\x00\x00\x00\x00\x00\x00_",
    b"\x15\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x17",
    b"\x15\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x18",
    b"\x15\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x19",
    b"\x15\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1a",
    b"\x15\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1b",
    b"\x15\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1c",
    b"\x15\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1d",
    b"\x15\t\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1e",
    b"\x15\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1f",
    b"\x15\x0b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00 ",
    b"\x15\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00!",
    b'\x15\r\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"',
    b"\x15\x0e\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00#",
    b"\x15\x0f\x00\x00Y\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00}",
    b"\x15\x10\x00k\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x90",
    b"\x15\x11`\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00k\xf1",
    b"\x15\x12\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'",
    b"\x15\x13\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00P\x00\x00x",
    b"\x15\x14\x00\x00\x00\x00\x00\x00\x00\x00\x00F\x00\x00\x00o",
    b"\x15\x15\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00*",
    b"\x15\x16\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00+",
    b"\x15\x17\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00,",
]]
STEPS = [bytes(p) for p in [
    b"C\xf0\x05\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x009",
    b"C#\x08\x13\x10\x00\x05\xc8\x000\x00\x1b\x00\x00\x00\xa9",
    b"C#\x08\x13\x14\x01\x05\xb6\x18\xaa\x04i\x03\x00\x00\x83",
    b"C#\x08\x13\x18\x02\x058\x04\xe1\x00\x95\x00\x00\x00R",
    b"C#\x08\x13\x1c\x03\x05\x05\x02l\x00H\x00\x00\x00`",
    b"C#\x08\x13L\x04\x05\xef\x01c\x00D\x00\x00\x00m",
]]
# What tahnok's tests expect of those step packets: (quarter of the day, steps, metres).
STEP_QUARTERS = [(16, 48, 27), (20, 1194, 873), (24, 225, 149), (28, 108, 72), (76, 99, 68)]
# The ring's answer to the clock: capabilities (built to the layout: heart rate and SpO2 bits).
TIME_REPLY = packet(0x01, b"\x00\x00\x00\x02")

# A real SpO2 answer of an R09 (nekodas-neko/TrainingAi_Open, lib/colmi-ble/__tests__/
# server-decode-archived-sync.test.ts: archived from its sync of 2026-09-02 21:12 UTC, 07:12 by the
# ring's clock): `BC 2A`, 49 data bytes, CRC-16/MODBUS 0xFA53, today (0) with hours 0-6.
SPO2_ANSWER = bytes.fromhex("bc2a310053fa00606063636161626261616363636300000000000000000000000000000000000000000000000000000000000000000000")
# Its hours as (hour, lowest, highest), each the mean of the two stored.
SPO2_HOURS = [(0, 96, 96), (1, 99, 99), (2, 97, 97), (3, 98, 98), (4, 97, 97), (5, 99, 99), (6, 99, 99)]
# Today's SpO2 request as that client sends it: data id 0x2A, one data byte 0 (today), CRC 0x40BF.
SPO2_REQUEST = bytes.fromhex("bc2a0100bf4000")
R09_ADDRESS, R09_NAME = "C0:1D:2E:3F:09:4A", "R09_094A"


def bcd(number):
    return (number // 10) << 4 | number % 10


def spo2_session(capture, at, answer_pieces):
    """A contact with an R09 at `at` (UTC): clock set, no heart-rate log (15 FF), no steps (43 FF),
    then today's SpO2 log asked for on the big-data service and answered in `answer_pieces`."""
    capture.time = int(at.timestamp() * 1_000_000)
    rx = Characteristic(RX, 0x0C)
    tx = Characteristic(TX, 0x10, cccd_value=0x0001)
    request = Characteristic(BIG_DATA_REQUEST, 0x0C)
    answer = Characteristic(BIG_DATA_ANSWER, 0x10, cccd_value=0x0001)
    capture.advertising_report(R09_ADDRESS, flags_ad() + name_ad(R09_NAME))
    capture.advance(120)
    clock = bytes(bcd(v) for v in [at.year % 100, at.month, at.day, at.hour, at.minute, at.second]) + b"\x01"
    midnight = int(datetime(at.year, at.month, at.day, tzinfo=timezone.utc).timestamp())
    steps = [(rx, "write", packet(0x01, clock)), (tx, "notification", TIME_REPLY),
             (rx, "write", packet(0x15, midnight.to_bytes(4, "little"))), (tx, "notification", packet(0x15, b"\xff")),
             (rx, "write", packet(0x43, b"\x00\x0f\x00\x5f\x01")), (tx, "notification", packet(0x43, b"\xff")),
             (request, "write", SPO2_REQUEST)]
    steps += [(answer, "notification", piece) for piece in answer_pieces]
    return gatt_services_session(capture, R09_ADDRESS, R09_NAME, [(SERVICE, [rx, tx]), (BIG_DATA_SERVICE, [request, answer])],
                                 steps, advertise=False)


def pieces(frame, size=20):
    """`frame` in notifications of `size` bytes (ATT MTU 23)."""
    return [frame[index:index + size] for index in range(0, len(frame), size)]


# The R09's clock read 07:12 when it sent the answer: the contact is placed when a ring given UTC
# (as this adapter gives it) reads the same, so the hours land on the same clock readings.
SPO2_CONTACT = datetime(2026, 9, 2, 7, 12, 0, tzinfo=timezone.utc)


def heart_rates():
    """(slot, bpm) of the real log, as tahnok's parser lays it out: 9 readings in packet 1, 13 in each later one."""
    readings = list(HEART_RATE[1][6:15])
    for p in HEART_RATE[2:]:
        readings += list(p[2:15])
    return [(slot, bpm) for slot, bpm in enumerate(readings[:288]) if bpm]


def session(capture, hr_packets, step_packets):
    rx = Characteristic(RX, 0x0C)
    tx = Characteristic(TX, 0x10, cccd_value=0x0001)
    capture.advertising_report(ADDRESS, flags_ad() + name_ad(NAME))
    capture.advance(120)
    steps = [(rx, "write", packet(0x01, b"\x25\x01\x15\x09\x00\x00\x01")), (tx, "notification", TIME_REPLY)]
    # The day asked for is the capture's (2025-01-15 UTC midnight); the ring answers with its log.
    steps += [(rx, "write", packet(0x15, (1736899200).to_bytes(4, "little")))]
    steps += [(tx, "notification", p) for p in hr_packets]
    steps += [(rx, "write", packet(0x43, b"\x00\x0f\x00\x5f\x01"))]
    steps += [(tx, "notification", p) for p in step_packets]
    return gatt_services_session(capture, ADDRESS, NAME, [(SERVICE, [rx, tx])], steps, advertise=False)


def day_case(capture):
    """A contact with an R02: clock set, the real heart-rate log (2024-08-10) and step details
    (2023-08-13) read. Expected: a HeartRate per measured slot, a StepCount and a
    DistanceWalkingRunning per quarter hour."""
    session(capture, HEART_RATE, STEPS)
    device = device_json(name=NAME, manufacturer="Colmi", localIdentifier=ADDRESS)
    records = []
    midnight = datetime(2024, 8, 10, tzinfo=timezone.utc)
    for slot, bpm in heart_rates():
        at = midnight + timedelta(minutes=5 * slot)
        metadata = metadata_json(sync_identifier="colmi/%s/hr/%d" % (ADDRESS, int(at.timestamp())), sync_version=1)
        records.append(sample("HeartRate", bpm, "count/min", at, source=SOURCE, device=device, metadata=metadata))
    day = datetime(2023, 8, 13, tzinfo=timezone.utc)
    for quarter, count, metres in STEP_QUARTERS:
        start = day + timedelta(minutes=15 * quarter)
        end = start + timedelta(minutes=15)
        for kind, type_name, value, unit in [("steps", "StepCount", count, "count"),
                                             ("distance", "DistanceWalkingRunning", metres, "m")]:
            metadata = metadata_json(sync_identifier="colmi/%s/%s/%d" % (ADDRESS, kind, int(start.timestamp())), sync_version=1)
            records.append(sample(type_name, value, unit, start, end=end, source=SOURCE, device=device, metadata=metadata))
    return records


def bad_checksum_case(capture):
    """A heart-rate packet with its checksum changed: one rejection naming it; nothing of that day."""
    broken = bytearray(HEART_RATE[16])
    broken[15] ^= 0x01
    session(capture, HEART_RATE[:16] + [bytes(broken)], [])
    return [SOURCE + ": bad-checksum: %s: checksum does not match: %s" % (ADDRESS, " ".join("%02x" % b for b in broken))]


def spo2_case(capture):
    """A contact with an R09 that has no heart-rate log or steps to give: the real SpO2 answer
    in 20-byte notifications. Expected: one OxygenSaturation per hour with a reading."""
    spo2_session(capture, SPO2_CONTACT, pieces(SPO2_ANSWER))
    device = device_json(name=R09_NAME, manufacturer="Colmi", localIdentifier=R09_ADDRESS)
    records = []
    midnight = datetime(2026, 9, 2, tzinfo=timezone.utc)
    for hour, lowest, highest in SPO2_HOURS:
        at = midnight + timedelta(hours=hour)
        metadata = metadata_json(sync_identifier="colmi/%s/spo2/%d" % (R09_ADDRESS, int(at.timestamp())), sync_version=1)
        records.append(sample("OxygenSaturation", (lowest + highest) / 200, "%", at, source=SOURCE, device=device,
                              metadata=metadata))
    return records


def bad_spo2_crc_case(capture):
    """The real SpO2 answer with one hour's reading changed (63 → 60) and the CRC left: one
    rejection naming the joined answer; no SpO2 stored."""
    broken = bytearray(SPO2_ANSWER)
    broken[9] = 0x60
    spo2_session(capture, SPO2_CONTACT, pieces(bytes(broken)))
    return [SOURCE + ": bad-checksum: %s: checksum does not match: %s"
            % (R09_ADDRESS, " ".join("%02x" % b for b in broken))]


def bad_spo2_length_case(capture):
    """An SpO2 answer that announces 49 data bytes and brings 50: one rejection naming it."""
    longer = SPO2_ANSWER + b"\x00"
    spo2_session(capture, SPO2_CONTACT, pieces(longer))
    return [SOURCE + ": bad-length: %s: answer longer or shorter than its length: %s"
            % (R09_ADDRESS, " ".join("%02x" % b for b in longer))]


CASES = [
    Case("r02-day", day_case, fragmented=True),
    Case("bad-checksum", bad_checksum_case),
    Case("r09-spo2", spo2_case, fragmented=True),
    Case("bad-spo2-crc", bad_spo2_crc_case),
    Case("bad-spo2-length", bad_spo2_length_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
