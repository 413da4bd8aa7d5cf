#!/usr/bin/env python3
"""Builds the beurer-sanitas captures in this folder from published bytes (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/beurer-sanitas/make-captures.py`
(it rewrites every generated file in this folder). The shared btsnoop writer, GATT session and
record builders are in scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403


SOURCE = "beurer-sanitas"
ADDRESS = "50:8C:B1:5D:EF:2C"
NAME = "SBF75"
USER_ID = bytes(7) + bytes([0x65])  # 101, the published user "YOU"

# Published notifications of an SBF75 (ORIGIN): the greeting's answer, the user list's
# acknowledgement (status 0, 1 user, 8 at most), the one user (id 101, "YOU", born 1900+0x69),
# the saved measurements' acknowledgement (2 parts), the erase's acknowledgement.
GREETING_ANSWER = h("e6 00 20")
USER_LIST_ACK = h("e7 f0 33 00 01 08")
USER_INFO = h("e7 34 01 01 00 00 00 00 00 00 00 65 59 4f 55 69")
SAVED_ACK = h("e7 f0 41 02 00")
DELETE_ACK = h("e7 f0 43 00")

# The saved weighing (its bytes are masked in the published log, so built to the layout):
# 2025-01-14 07:30:00 UTC, 75.30 kg (1506 × 50 g), 512 ohm, fat 23.5 %, water 55.2 %,
# muscle 38.0 %, bone 3.2 kg (64 × 50 g), BMR 1680, AMR 2350, BMI 24.3.
WEIGHED_AT = datetime(2025, 1, 14, 7, 30, 0, tzinfo=timezone.utc)
MEASUREMENT = b"".join(value.to_bytes(width, "big") for value, width in [
    (int(WEIGHED_AT.timestamp()), 4), (1506, 2), (512, 2), (235, 2), (552, 2), (380, 2), (64, 2), (1680, 2),
    (2350, 2), (243, 2)])
# Two parts of 15 bytes (4 header + 11 data), the length of the published masked parts.
PART_1 = h("e7 42 02 01") + MEASUREMENT[:11]
PART_2 = h("e7 42 02 02") + MEASUREMENT[11:]


def in_family(family, value):
    """The message with its start byte's high nibble replaced by the family's (0xF0 or 0xE0)."""
    return bytes([family | (value[0] & 0x0F)]) + value[1:]


def session(capture, values, family=0xE0, address=ADDRESS, name=NAME):
    vendor = Characteristic(0xFFE1, 0x18, cccd_value=0x0001)
    clock = int(CAPTURE_START.timestamp()).to_bytes(4, "big")
    steps = [("write", h("e6 01")), ("notification", GREETING_ANSWER), ("write", h("e9") + clock),
             ("write", h("e7 33")), ("notification", USER_LIST_ACK), ("notification", USER_INFO),
             ("write", h("e7 f1 34 01 01")), ("write", h("e7 41") + USER_ID), ("notification", SAVED_ACK)] + values
    return gatt_session(capture, address, name, 0xFFE0, [vendor],
                        [(vendor, kind, in_family(family, value)) for kind, value in steps])


def download(capture, family=0xE0, address=ADDRESS, name=NAME):
    session(capture, [("notification", PART_1), ("write", h("e7 f1 42 02 01")), ("notification", PART_2),
                      ("write", h("e7 f1 42 02 02")), ("write", h("e7 43") + USER_ID), ("notification", DELETE_ACK),
                      ("write", h("ea 02"))], family=family, address=address, name=name)
    device = device_json(name=name, manufacturer="Beurer", localIdentifier=address)
    metadata = metadata_json(sync_identifier="beurer/%s/%d/101" % (address, int(WEIGHED_AT.timestamp())), sync_version=1,
                             IngestDeviceUserID=1, IngestImpedanceOhm=512, IngestScaleUserID=101,
                             IngestScaleUserInitials="YOU")
    return [sample(type_name, value, unit, WEIGHED_AT, source=SOURCE, device=device, metadata=metadata)
            for type_name, value, unit in [("BodyMass", 75.3, "kg"), ("BodyFatPercentage", 0.235, "%"),
                                           ("BodyMassIndex", 24.3, "count")]]


def download_case(capture):
    """One user's one saved weighing in two parts, each acknowledged, then erased and goodbye."""
    return download(capture)


def download_bf700_case(capture):
    """The same conversation with a Beurer BF700, whose messages start with 0xF_ instead of 0xE_."""
    return download(capture, family=0xF0, address="C4:BE:84:10:07:00", name="BEURER BF700")


def bad_download_case(capture):
    """The second part numbered 3 of 2: rejected with its bytes, nothing erased, goodbye."""
    wrong = h("e7 42 02 03") + MEASUREMENT[11:]
    session(capture, [("notification", PART_1), ("write", h("e7 f1 42 02 01")), ("notification", wrong),
                      ("write", h("ea 02"))])
    return [SOURCE + ": bad-part-number: %s: user 101: part 3 of 2 is out of order: %s"
            % (ADDRESS, " ".join("%02x" % b for b in wrong))]


CASES = [
    Case("download", download_case),
    Case("download-bf700", download_bf700_case),
    Case("bad-download", bad_download_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
