#!/usr/bin/env python3
"""Builds the beurer-standard-scale captures in this folder from published bytes (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/beurer-standard-scale/make-captures.py`
(it rewrites every generated file in this folder). The shared btsnoop writer, GATT session and
record builders are in scripts/ble_capture_kit.py.
"""

import os
import sys
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
import ble_capture_kit  # noqa: E402
from ble_capture_kit import *  # noqa: E402,F401,F403

# The real frames are stamped by the scale in July 2026: the capture runs a few seconds before the
# live weighing (2026-07-14 23:41:32 in Europe/Berlin, 21:41:32 UTC), so its clock is not "unset".
ble_capture_kit.CAPTURE_START = datetime(2026, 7, 14, 21, 41, 20, tzinfo=timezone.utc)

SOURCE = "beurer-standard-scale"
ADDRESS = "E7:DB:49:F1:86:DE"  # the address in ble-scale-sync's BF720 tests
NAME = "BF788"
CONSENT = h("02 01 a8 0e")  # Consent, user index 1, code 3752 (0x0EA8 little-endian)

# ble-scale-sync tests/scales/beurer-bf720.test.ts (ORIGIN).
# The #168 BF720 weighing: 79.96 kg at 2026-05-12 18:53:54, user 1, BMI 23.8, height 1.830 m.
WSS_168 = h("0e 78 3e ea 07 05 0c 12 35 36 01 ee 00 26 07")
# The real BF788 weighing: 117.92 kg at 2026-07-14 23:41:32, user 1, BMI 32.0, height 1.920 m.
WSS_229 = h("0e 20 5c ea 07 07 0e 17 29 20 01 40 01 80 07")
# Its composition: fat 24.3 %, BMR 9110 kJ, muscle 39.3 %, soft lean 84.8 kg, water 61.41 kg, 392.5 ohm.
BCS_229 = h("98 03 f3 00 96 23 89 01 40 42 fa 2f 55 0f")
# The zeroed stub the BF788 sends with each stored weighing: all zero but the basal metabolism.
BCS_ZEROED = h("98 03 00 00 96 23 00 00 00 00 00 00 00 00")


def characteristics():
    weight = Characteristic(0x2A9D, 0x20, cccd_value=0x0002)  # indicate
    composition = Characteristic(0x2A9C, 0x20, cccd_value=0x0002)
    control_point = Characteristic(0x2A9F, 0x28, cccd_value=0x0002)  # write, indicate
    take_measurement = Characteristic(0x0006, 0x08)  # write (service 0xFFFF, openScale's BF105/BF720/BF950 profile)
    services = [(0x181D, [weight]), (0x181B, [composition]), (0x181C, [control_point]), (0xFFFF, [take_measurement])]
    return services, weight, composition, control_point, take_measurement


def history_case(capture):
    """Consent for user 1; a stored weighing with its zeroed composition stub, then the live one."""
    services, weight, composition, control_point, take = characteristics()
    gatt_services_session(capture, ADDRESS, NAME, services, [
        (control_point, "write", CONSENT), (control_point, "indication", h("20 02 01")), (take, "write", h("00")),
        (weight, "indication", WSS_168), (composition, "indication", BCS_ZEROED),
        (weight, "indication", WSS_229), (composition, "indication", BCS_229)])
    device = device_json(name=NAME, localIdentifier=ADDRESS)

    def weighing(moment, identity, values):
        metadata = metadata_json(sync_identifier="%s/scale/%s/user-1" % (ADDRESS, identity), sync_version=1,
                                 IngestDeviceUserID=1)
        records = []
        for type_name, value, unit, extra in values:
            meta = dict(metadata)
            meta.update(extra)
            records.append(sample(type_name, value, unit, moment, source=SOURCE, device=device, metadata=meta))
        return records

    stored = weighing(local(2026, 5, 12, 18, 53, 54), "2026-05-12T18:53:54",
                      [("BodyMass", 79.96, "kg", {}), ("BodyMassIndex", 23.8, "count", {}), ("Height", 1.83, "m", {})])
    live = weighing(local(2026, 7, 14, 23, 41, 32), "2026-07-14T23:41:32",
                    [("BodyMass", 117.92, "kg", {}), ("BodyMassIndex", 32.0, "count", {}), ("Height", 1.92, "m", {}),
                     ("BodyFatPercentage", 0.243, "%", {"IngestBodyImpedance": 392.5})])
    return stored + live


def bf788_case(capture):
    """Only the BF788's own frames (#229): consent, take measurement, its real weighing with its real composition,
    then a zeroed stub, as the test's "keeps each reading composition even if a later frame resets the cache" feeds
    them; the stub adds nothing to the weighing before it."""
    services, weight, composition, control_point, take = characteristics()
    gatt_services_session(capture, ADDRESS, NAME, services, [
        (control_point, "write", CONSENT), (control_point, "indication", h("20 02 01")), (take, "write", h("00")),
        (weight, "indication", WSS_229), (composition, "indication", BCS_229), (composition, "indication", BCS_ZEROED)])
    device = device_json(name=NAME, localIdentifier=ADDRESS)
    moment = local(2026, 7, 14, 23, 41, 32)
    metadata = metadata_json(sync_identifier="%s/scale/2026-07-14T23:41:32/user-1" % ADDRESS, sync_version=1,
                             IngestDeviceUserID=1)
    # The published values: 117.92 kg, BMI 32.0, height 1.920 m, body fat 24.3 % at 392.5 ohm.
    records = []
    for type_name, value, unit, extra in [("BodyMass", 117.92, "kg", {}), ("BodyMassIndex", 32.0, "count", {}),
                                          ("Height", 1.92, "m", {}),
                                          ("BodyFatPercentage", 0.243, "%", {"IngestBodyImpedance": 392.5})]:
        meta = dict(metadata)
        meta.update(extra)
        records.append(sample(type_name, value, unit, moment, source=SOURCE, device=device, metadata=meta))
    return records


def bad_consent_case(capture):
    """The scale refuses the consent code (result 0x05): one rejection, nothing asked, nothing decoded."""
    services, weight, composition, control_point, take = characteristics()
    gatt_services_session(capture, ADDRESS, NAME, services, [
        (control_point, "write", CONSENT), (control_point, "indication", h("20 02 05"))])
    return [SOURCE + ": uds-refused: %s refused user 1: result 0x5 (0x05: wrong consent code)" % ADDRESS]


CASES = [
    Case("history", history_case, fragmented=True),
    Case("bf788", bf788_case),
    Case("bad-consent", bad_consent_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
