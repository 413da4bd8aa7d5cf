#!/usr/bin/env python3
"""Builds the medisana-bp captures in this folder to the published layout (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/medisana-bp/make-captures.py` (it rewrites
every generated file in this folder). Shared parts: scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
import ble_capture_kit  # noqa: E402
from ble_capture_kit import *  # noqa: E402,F401,F403

# The monitor's readings are a few days old when it is read (its clock is set, not in the future).
ble_capture_kit.CAPTURE_START = datetime(2026, 3, 16, 7, 30, 0, tzinfo=timezone.utc)

SOURCE = "medisana-bp"


def measurement_frame(systolic, diastolic, mean, moment, pulse, user):
    """Blood Pressure Measurement as bkbilly/medisanabp_ble reads it: flags 0x0E (mmHg, time stamp, pulse,
    user), systolic, diastolic, mean arterial pressure (SFLOAT, exponent 0: the plain u16 that parser
    reads), year u16, month, day, hour, minute, second, pulse, user."""
    return (bytes([0x0E]) + le16(systolic) + le16(diastolic) + le16(mean)
            + le16(moment[0]) + bytes(moment[1:]) + le16(pulse) + bytes([user]))


READINGS = [  # (systolic, diastolic, mean, wall clock, pulse, user)
    (128, 82, 97, (2026, 3, 14, 8, 5, 30), 72, 1),
    (141, 90, 107, (2026, 3, 15, 19, 42, 10), 66, 2),
]


def readings_case(capture, address, advertisement, name):
    measurement = Characteristic(0x2A35, 0x20, cccd_value=0x0002)  # indicate
    battery = Characteristic(0x2A19, 0x12)  # read, notify (read by the public client; not stored)
    capture.advertising_report(address, advertisement)
    capture.advance(120)
    values = [(measurement, "indication", measurement_frame(*reading)) for reading in READINGS]
    gatt_services_session(capture, address, name, [(0x1810, [measurement]), (0x180F, [battery])], values,
                          advertise=False)
    device = device_json(name=name, localIdentifier=address)
    records = []
    for systolic, diastolic, _, moment, pulse, user in READINGS:
        at = local(*moment)
        identity = "%04d-%02d-%02dT%02d:%02d:%02d" % moment
        meta = metadata_json(sync_identifier="%s/2A35/%s/user-%d" % (address, identity, user), sync_version=1,
                             IngestDeviceUserID=user)
        records.append(blood_pressure(systolic, diastolic, "mmHg", at, SOURCE, device, meta, meta))
        records.append(sample("HeartRate", pulse, "count/min", at, source=SOURCE, device=device, metadata=meta))
    return records


def bu530_case(capture):
    """A monitor advertising under the manifest's company 0x4842 (no name in the advertisement)."""
    address = "C4:7C:8D:6A:21:05"
    return readings_case(capture, address, flags_ad() + manufacturer_ad(0x4842, h("00 00")), None)


def bu580_case(capture):
    """A monitor advertising the manifest's local name 1872B."""
    address = "C4:7C:8D:6A:21:06"
    return readings_case(capture, address, flags_ad() + uuid16_list_ad(0x1810) + name_ad("1872B"), "1872B")


CASES = [
    Case("bu530", bu530_case, fragmented=True),
    Case("bu580", bu580_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
