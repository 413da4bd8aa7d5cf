#!/usr/bin/env python3
"""Builds the household captures of the people tests (issue 15) in this folder.

Run from anywhere: `python3 Tests/IngestdProcessTests/Captures/household/make-household-capture.py`
(it rewrites every generated file here). The btsnoop writer and record builders are the shared
kit, scripts/ble_capture_kit.py; the GATT session builder is the gatt-health generator's.

household-mi-scale
  One Mi Smart Scale (v1, service data 0x181D; the layout of the published frames in
  Tests/AdapterTests/Captures/xiaomi-scale/ORIGIN: control 0x22 = stabilized kg, weight uint16
  LE in 5 g steps, the scale clock) weighing three people in turn: 61.20 kg at 07:00:00,
  84.10 kg at 07:05:00 and 72.00 kg at 07:10:00 (2025-01-14, Europe/Berlin). Each weighing is
  broadcast twice while stabilized, then with the load removed (control bit 7).
household-uds-scale
  A Bluetooth SIG Weight Scale whose Weight Measurement carries the user index (flags 0x04,
  weight 58.0 kg, user 2): one GATT session, indicated and confirmed.
"""

import importlib.util
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

_spec = importlib.util.spec_from_file_location(
    "gatt_health_captures", os.path.join(HERE, "..", "..", "..", "AdapterTests", "Captures", "gatt-health", "make-captures.py"))
gatt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gatt)

MI_ADDRESS = "50:FB:19:1B:B5:DC"  # the address xiaomi-ble's tests use
MI_DEVICE = device_json(name="MISCA", manufacturer="Xiaomi", model="XMTZC01HM/XMTZC04HM", localIdentifier=MI_ADDRESS)
WEIGHINGS = [(61.20, (2025, 1, 14, 7, 0, 0)), (84.10, (2025, 1, 14, 7, 5, 0)), (72.00, (2025, 1, 14, 7, 10, 0))]


def mi_frame(control, kilograms, clock):
    year, month, day, hour, minute, second = clock
    raw = round(kilograms * 200)
    return bytes([control]) + struct.pack("<HH", raw, year) + bytes([month, day, hour, minute, second])


def mi_scale_case(capture):
    records = []
    for kilograms, clock in WEIGHINGS:
        for control in (0x22, 0x22, 0xA2):
            data = flags_ad() + name_ad("MISCA") + service_data_ad(0x181D, mi_frame(control, kilograms, clock))
            capture.advertising_report(MI_ADDRESS, data, event_type=0x03, rssi=-60)
            capture.advance(250)
        capture.advance(5000)
        moment = local(*clock)
        sync = "%s/%s/%d" % (MI_ADDRESS, moment.strftime("%Y-%m-%dT%H:%M:%S"), round(kilograms * 200))
        records.append(sample("BodyMass", kilograms, "kg", moment, source="xiaomi-scale", device=MI_DEVICE,
                              metadata=metadata_json(sync_identifier=sync, sync_version=1)))
    return records


def uds_scale_case(capture):
    address, name = "C8:47:8C:00:11:21", "Family Scale"
    measurement = gatt.Characteristic(0x2A9D, 0x20, cccd_value=0x0002)
    values = [(measurement, "indication", h("04 50 2D 02"))]  # 58.0 kg, user index 2
    times = gatt.gatt_session(capture, address, name, 0x181D, [measurement], values)
    return [sample("BodyMass", 58.0, "kg", times[0], source=gatt.GATT, device=gatt.gatt_device(name, address),
                   metadata=gatt.gatt_meta(address, "scale", iso(times[0]), user=2, IngestDeviceUserID=2))]


CASES = [Case("household-mi-scale", mi_scale_case), Case("household-uds-scale", uds_scale_case)]

if __name__ == "__main__":
    generate(__file__, CASES)
