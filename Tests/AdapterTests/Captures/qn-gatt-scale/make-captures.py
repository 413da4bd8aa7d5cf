#!/usr/bin/env python3
"""Builds the qn-gatt-scale captures in this folder from published bytes (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/qn-gatt-scale/make-captures.py` (it
rewrites every generated file in this folder). Shared parts: scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import timedelta

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SOURCE = "qn-gatt-scale"
ADDRESS = "ED:67:39:0A:1B:2C"
NAME = "QN-Scale"


def sealed(body):
    return bytes(body) + bytes([sum(body) & 0xFF])


# Real frames from ble-scale-sync tests/scales/qn-scale.test.ts (ORIGIN): the ready frame, the
# configuration request and the stable ES-30M weight frame of a Renpho Elis 1 (60.0 kg, R1 509).
READY = h("14 0b ff 00 00 01 00 00 00 00 1f")
CONFIG_REQUEST = h("21 05 ff 01 26")
STABLE = h("10 0e ff 01 02 02 58 01 fd 01 fb 00 33 a7")
# Built to the published layouts: the information frame (protocol type 0xFF at 2, 0 at 10: tenths)
# and a settling frame (state 0) of the same dialect.
INFO = sealed(h("12 0c ff 00 00 00 00 00 00 00 00"))
SETTLING = sealed(h("10 0e ff 01 00 02 43 00 00 00 00 00 33"))

CONFIGURATION = sealed(h("13 09 ff 01 10 00 00 00"))
ANSWERS = [sealed(h("a0 0d 04 fe 00 00 00 00 00 00 00 00")), sealed(h("a0 0d 02 01 00 08 00 21 06 b8 04 02"))]
START = sealed(h("22 06 ff 00 03"))
ACK = sealed(h("1f 05 ff 10"))


def time_frame(moment):
    seconds = int(moment.timestamp()) - 946684800
    return sealed(bytes([0x20, 0x08, 0xFF]) + seconds.to_bytes(4, "little"))


def session(capture, weight_frames, ack=True):
    notify = Characteristic(0xFFF1, 0x10, cccd_value=0x0001)
    write = Characteristic(0xFFF2, 0x0C)
    # The clock write carries the capture's time of the ready frame (the replay's clock then).
    ready_at = CAPTURE_START + timedelta(milliseconds=120 + 40 + 60 + 30 * 12 + 1000 * 3 + 20)
    steps = [(notify, "notification", INFO), (write, "write", CONFIGURATION), (notify, "notification", READY),
             (write, "write", time_frame(ready_at)), (notify, "notification", CONFIG_REQUEST)]
    steps += [(write, "write", answer) for answer in ANSWERS] + [(write, "write", START)]
    steps += [(notify, "notification", frame) for frame in weight_frames]
    if ack:
        steps.append((write, "write", ACK))
    return gatt_session(capture, ADDRESS, NAME, 0xFFF0, [notify, write], steps)


def es30m_case(capture):
    """A Renpho Elis 1 (ES-30M dialect): the handshake answered, a settling frame skipped, the
    real stable frame taken (60.0 kg, 509 ohm) and acknowledged."""
    times = session(capture, [SETTLING, STABLE])
    stable_at = times[-2]
    device = device_json(name=NAME, manufacturer="QN", localIdentifier=ADDRESS)
    metadata = metadata_json(sync_identifier="qn/%s/%d" % (ADDRESS, int(stable_at.timestamp())), sync_version=1,
                             IngestImpedance2Ohm=507, IngestImpedanceOhm=509)
    return [sample("BodyMass", 60.0, "kg", stable_at, source=SOURCE, device=device, metadata=metadata)]


def bad_checksum_case(capture):
    """The stable frame with its checksum broken: rejected with its bytes, no weighing, no acknowledgement."""
    broken = bytearray(STABLE)
    broken[-1] ^= 0x01
    session(capture, [SETTLING, bytes(broken)], ack=False)
    return [SOURCE + ": bad-checksum: %s: checksum does not match: %s" % (ADDRESS, " ".join("%02x" % b for b in broken))]


# Type 1 (0xFFE0) with the original layout, built to it: information with byte 10 = 1
# (hundredths), the real 0xA1 acknowledgement from the same tests (a1 06 04 fe 01 aa), and a
# stable frame of 75.00 kg with R1 512 and R2 510 ohm.
INFO_HUNDREDTHS = sealed(h("12 0c ff 00 00 00 00 00 00 00 01"))
A1 = h("a1 06 04 fe 01 aa")
STABLE_ORIGINAL = sealed(h("10 0b ff 1d 4c 01 02 00 01 fe"))


def type1_case(capture):
    """A type 1 scale (0xFFE0: notified on 0xFFE1, written on 0xFFE3) of the original dialect:
    one 0xA0 answer, the start only after the scale's 0xA1, the stable frame taken."""
    notify = Characteristic(0xFFE1, 0x10, cccd_value=0x0001)
    write = Characteristic(0xFFE3, 0x08)
    ready_at = CAPTURE_START + timedelta(milliseconds=120 + 40 + 60 + 30 * 12 + 1000 * 3 + 20)
    steps = [(notify, "notification", INFO_HUNDREDTHS), (write, "write", CONFIGURATION), (notify, "notification", READY),
             (write, "write", time_frame(ready_at)), (notify, "notification", CONFIG_REQUEST),
             (write, "write", sealed(h("a0 0d 02 fe ff ee 01 1c 06 86 03 02"))), (notify, "notification", A1),
             (write, "write", sealed(h("22 06 ff 00 01"))), (notify, "notification", STABLE_ORIGINAL),
             (write, "write", ACK)]
    times = gatt_session(capture, "C8:B2:1E:30:40:50", "Renpho-Scale", 0xFFE0, [notify, write], steps)
    stable_at = times[-2]
    device = device_json(name="Renpho-Scale", manufacturer="QN", localIdentifier="C8:B2:1E:30:40:50")
    metadata = metadata_json(sync_identifier="qn/C8:B2:1E:30:40:50/%d" % int(stable_at.timestamp()), sync_version=1,
                             IngestImpedance2Ohm=510, IngestImpedanceOhm=512)
    return [sample("BodyMass", 75.0, "kg", stable_at, source=SOURCE, device=device, metadata=metadata)]


CASES = [
    Case("type1", type1_case),
    Case("es30m", es30m_case, fragmented=True),
    Case("bad-checksum", bad_checksum_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
