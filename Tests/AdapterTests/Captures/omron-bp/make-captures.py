#!/usr/bin/env python3
"""Builds the omron-bp captures in this folder from published bytes (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/omron-bp/make-captures.py` (it rewrites
every generated file in this folder). Shared parts: scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timedelta, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SOURCE = "omron-bp"
SERVICE = "ecbe3980-c9a2-11e1-b1bd-0002a5d5c51b"
TX = ["db5b55e0-aee7-11e1-965e-0002a5d5c51b", "e0b8a060-aee7-11e1-92f4-0002a5d5c51b",
      "0ae12b00-aee8-11e1-a192-0002a5d5c51b", "10e1ba60-aee8-11e1-89e5-0002a5d5c51b"]
RX = ["49123040-aee8-11e1-a74d-0002a5d5c51b", "4d0bf320-aee8-11e1-a0d9-0002a5d5c51b",
      "5128ce60-aee8-11e1-b84b-0002a5d5c51b", "560f1420-aee8-11e1-8184-0002a5d5c51b"]
UNLOCK = "b305b680-aee7-11e1-a730-0002a5d5c51b"
KEY = b"ingestd omron bp"  # the adapter's default pairing key (tried when none is remembered)

# Real stored readings from hass-omron tests/test_record_parsers.py (ORIGIN).
HEM7142T2_SLOT7 = h("6457431a7316161c000046001900")   # 125/87, pulse 67, 2026-05-19 19:48:22
HEM7142T2_SLOT13 = h("6558541a331ade1800004c00ba00")  # 126/88, pulse 84, 2026-06-17 19:35:30
HEM7600T_SLOT23 = h("5b781a4819d71b42000014006996")   # 145/91, pulse 72 (date worked out: 2026-06-14 23:45:02)


def sealed(body):
    """A memory-protocol frame: body, 0x00, and the byte making the XOR of all bytes zero."""
    check = 0
    for byte in body:
        check ^= byte
    return bytes(body) + bytes([0x00, check])


def read_command(address, count):
    return sealed(bytes([0x08, 0x01, 0x00, address >> 8, address & 0xFF, count]))


def read_answer(address, data):
    return sealed(bytes([len(data) + 8, 0x81, 0x00, address >> 8, address & 0xFF, len(data)]) + data)


START = h("08 00 00 00 00 10 00 18")
START_ANSWER = sealed(h("08 80 00 00 00 10"))
END = h("08 0f 00 00 00 00 00 07")
END_ANSWER = sealed(h("08 8f 00 00 00 00"))


class Monitor:
    """The characteristics of one monitor and the steps of a contact with it."""

    def __init__(self, channels):
        self.rx = [Characteristic(uuid, 0x10, cccd_value=0x0001) for uuid in RX[:channels]]
        self.unlock = Characteristic(UNLOCK, 0x18, cccd_value=0x0001)
        self.tx = [Characteristic(uuid, 0x0C) for uuid in TX[:channels]]
        self.steps = []

    def table(self):
        return self.rx + [self.unlock] + self.tx

    def write(self, frame):
        if len(self.tx) == 1:
            self.steps.append((self.tx[0], "write", frame))
        else:
            for index in range(0, len(frame), 16):
                self.steps.append((self.tx[index // 16], "write", frame[index:index + 16]))

    def answer(self, frame):
        if len(self.rx) == 1:
            self.steps.append((self.rx[0], "notification", frame))
        else:
            for index in range(0, len(frame), 16):
                self.steps.append((self.rx[index // 16], "notification", frame[index:index + 16]))

    def exchange(self, frame, answer):
        self.write(frame)
        self.answer(answer)

    def read(self, address, data):
        self.exchange(read_command(address, len(data)), read_answer(address, data))

    def write_of_moment(self, frame_at):
        """Writes `frame_at(moment)`, moment being when the value before it arrived (the capture
        kit sends each value a second after the one before): a frame holding the writer's clock."""
        pieces = 1 if len(self.tx) == 1 else (len(frame_at(datetime(2000, 1, 1, tzinfo=timezone.utc))) + 15) // 16
        for index in range(pieces):
            def piece(at, index=index):
                frame = frame_at(at - timedelta(seconds=index + 1))
                return frame if len(self.tx) == 1 else frame[index * 16:index * 16 + 16]
            self.steps.append((self.tx[index], "write", piece))

    def unlock_step(self, value, answer):
        self.steps.append((self.unlock, "write", value))
        self.steps.append((self.unlock, "notification", answer))


def contact(capture, monitor, address, name, at):
    capture.time = int(at.timestamp() * 1_000_000)
    capture.advertising_report(address, name_ad(name))  # the 29-character name fills the report
    capture.advance(120)
    gatt_session(capture, address, name, SERVICE, monitor.table(), monitor.steps, advertise=False)


def clock_block(moment):
    """A settings clock block (16 bytes) holding `moment` as the monitor's wall clock."""
    local_time = moment.astimezone(ZONE)
    body = bytes(8) + bytes([local_time.year - 2000, local_time.month, local_time.day, local_time.hour,
                             local_time.minute, local_time.second])
    return body + bytes([sum(body) & 0xFF, 0x00])


def reading(systolic, diastolic, pulse, moment, address, name, model, user=1):
    device = device_json(name=name, manufacturer="Omron", model=model, localIdentifier=address)
    metadata = metadata_json(sync_identifier="omron/%s/%d/%s" % (address, user, moment.strftime("%Y%m%d%H%M%S")),
                             sync_version=1, IngestBodyMovement=False, IngestDeviceUserID=user,
                             IngestIrregularHeartbeat=False)
    return [blood_pressure(systolic, diastolic, "mmHg", moment, SOURCE, device, metadata, metadata),
            sample("HeartRate", pulse, "count/min", moment, source=SOURCE, device=device, metadata=metadata)]


def hem_7142t2_case(capture):
    """A HEM-7142T2 (one user, 14 slots of 14 bytes at 0x02E8, one TX and one RX characteristic,
    token unlock): the two real readings in slots 0 and 1, the cursor at 2; its clock right."""
    address, name = "F8:16:54:A1:B2:C3", "BLESmart_00000421F81654A1B2C3"
    now = datetime(2026, 6, 18, 9, 0, 0, tzinfo=timezone.utc)
    monitor = Monitor(channels=1)
    token = h("f8 16 54 a1")
    monitor.unlock_step(h("11") + token + bytes(15), h("91 00") + token)
    monitor.exchange(START, START_ANSWER)
    monitor.read(0x0260, bytes([0x02, 0x00, 0x00, 0x00, 0x00, 0x80]) + bytes(10))
    monitor.read(0x0260 + 0x2C, clock_block(now))
    monitor.read(0x02E8 + 2 * 14, b"\xff" * 14)
    monitor.read(0x02E8 + 0 * 14, HEM7142T2_SLOT7)
    monitor.read(0x02E8 + 1 * 14, HEM7142T2_SLOT13)
    monitor.exchange(END, END_ANSWER)
    contact(capture, monitor, address, name, now)
    return (reading(125, 87, 67, local(2026, 5, 19, 19, 48, 22), address, name, "HEM-7142T2")
            + reading(126, 88, 84, local(2026, 6, 17, 19, 35, 30), address, name, "HEM-7142T2"))


HEM7600T_ADDRESS, HEM7600T_NAME = "28:FF:B2:10:76:00", "BLESmart_000000A828FFB2107600"
HEM7600T_CLOCK_READ, HEM7600T_CLOCK_WRITE = 0x0260 + 0x14, 0x0286 + 0x14


def word_swapped_clock_block(moment, kept=b"\x00\x00"):
    """The HEM-7600T's 10-byte clock block: two kept bytes, month, year - 2000, hour, day, second,
    minute, zero, the low byte of the sum of the nine before."""
    local_time = moment.astimezone(ZONE)
    body = kept + bytes([local_time.month, local_time.year - 2000, local_time.hour, local_time.day,
                         local_time.second, local_time.minute, 0x00])
    return body + bytes([sum(body) & 0xFF])


def write_command(address, data):
    return sealed(bytes([len(data) + 8, 0x01, 0xC0, address >> 8, address & 0xFF, len(data)]) + data)


def hem_7600t_monitor(unlocked=True):
    monitor = Monitor(channels=4)
    if unlocked:
        monitor.unlock_step(h("01") + KEY, h("81 00"))
    else:
        monitor.unlock_step(h("01") + KEY, h("81 0f"))
        monitor.unlock_step(h("02") + bytes(16), h("82 0f"))
        return monitor
    monitor.exchange(START, START_ANSWER)
    monitor.read(0x0260, bytes([0x00, 0x01, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00]))
    # Its clock stopped at 2026-01-01 00:00:00 (a battery change): the adapter writes its own.
    stopped = datetime(2026, 1, 1, 0, 0, 0, tzinfo=ZONE)
    monitor.read(HEM7600T_CLOCK_READ, word_swapped_clock_block(stopped, kept=b"\x01\x02"))
    monitor.write_of_moment(lambda now: write_command(HEM7600T_CLOCK_WRITE, word_swapped_clock_block(now, kept=b"\x01\x02")))
    monitor.answer(sealed(h("08 81 c0") + bytes([HEM7600T_CLOCK_WRITE >> 8, HEM7600T_CLOCK_WRITE & 0xFF, 0x0a])))
    return monitor


def hem_7600t_case(capture):
    """A HEM-7600T (one user, 100 slots of 14 bytes at 0x02AC, four TX and four RX
    characteristics, our key already programmed): the real reading in slot 0, the cursor at 1."""
    monitor = hem_7600t_monitor()
    monitor.read(0x02AC + 14, b"\xff" * 14)
    monitor.read(0x02AC, HEM7600T_SLOT23)
    monitor.exchange(END, END_ANSWER)
    contact(capture, monitor, HEM7600T_ADDRESS, HEM7600T_NAME, datetime(2026, 6, 15, 9, 0, 0, tzinfo=timezone.utc))
    return reading(145, 91, 72, local(2026, 6, 14, 23, 45, 2), HEM7600T_ADDRESS, HEM7600T_NAME, "HEM-7600T")


def bad_check_case(capture):
    """The HEM-7600T's reading answer with its check byte broken: one rejection naming the
    bytes; the contact ends, nothing else is read."""
    monitor = hem_7600t_monitor()
    monitor.read(0x02AC + 14, b"\xff" * 14)
    broken = bytearray(read_answer(0x02AC, HEM7600T_SLOT23))
    broken[-1] ^= 0x5A
    monitor.write(read_command(0x02AC, 14))
    monitor.answer(bytes(broken))
    contact(capture, monitor, HEM7600T_ADDRESS, HEM7600T_NAME, datetime(2026, 6, 15, 9, 0, 0, tzinfo=timezone.utc))
    return [SOURCE + ": bad-checksum: %s: answer fails its XOR check: %s"
            % (HEM7600T_ADDRESS, " ".join("%02x" % b for b in broken))]


def bad_not_paired_case(capture):
    """A HEM-7600T that knows another key and is not in pairing mode: one rejection telling how
    to put it in pairing mode; its memory is not touched."""
    monitor = hem_7600t_monitor(unlocked=False)
    contact(capture, monitor, HEM7600T_ADDRESS, HEM7600T_NAME, datetime(2026, 6, 15, 9, 0, 0, tzinfo=timezone.utc))
    return [SOURCE + ": pairing-needed: %s: HEM-7600T refuses ingestd's key (answer 81 0f) and is not in pairing mode: "
            "put the HEM-7600T in pairing mode (hold its Bluetooth button until -P- blinks) and let ingestd connect "
            "again; the kernel pairs and ingestd programs its key" % HEM7600T_ADDRESS]


CASES = [
    Case("hem-7142t2", hem_7142t2_case),
    Case("hem-7600t", hem_7600t_case),
    Case("bad-check", bad_check_case),
    Case("bad-not-paired", bad_not_paired_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
    folder = os.path.dirname(os.path.abspath(__file__))
    for case, model in [("hem-7142t2", "HEM-7142T2"), ("hem-7600t", "HEM-7600T"), ("bad-check", "HEM-7600T"),
                        ("bad-not-paired", "HEM-7600T")]:
        with open(os.path.join(folder, case + ".adapter-options"), "w") as file:
            file.write("omron-model=%s\n" % model)
