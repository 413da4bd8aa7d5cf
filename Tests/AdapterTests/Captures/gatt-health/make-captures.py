#!/usr/bin/env python3
"""Builds the gatt-health captures in this folder from published bytes.

GATT cases are whole sessions as a phone's HCI snoop log shows them: advertising report,
LE Connection Complete, primary service discovery (Read By Group Type, ended by Attribute Not
Found), characteristic discovery (Read By Type 0x2803), descriptor discovery (Find Information),
the CCCD write, the measurement indications (each confirmed) or notifications, and
Disconnection Complete. Each GATT case also has a `-fragmented` twin in which every L2CAP frame
travels in several ACL fragments (start + continuation packets); its expected output is the same.

Run from anywhere: `python3 Tests/AdapterTests/Captures/gatt-health/make-captures.py`
(it rewrites every generated file in this folder). The shared btsnoop writer and
record builders are in scripts/ble_capture_kit.py.
"""

import os
import struct
import sys
from datetime import timedelta

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403


# MARK: - gatt-health

GATT = "gatt-health"


def gatt_device(name, address):
    return device_json(name=name, localIdentifier=address)


def gatt_meta(address, namespace, identity, user=None, **entries):
    sync = "%s/%s/%s" % (address, namespace, identity)
    if user is not None:
        sync += "/user-%d" % user
    return metadata_json(sync_identifier=sync, sync_version=1, **entries)


def device_time_text(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def weight_case(capture):
    """bluetooth-sig-python test_weight_measurement.py, the three layouts the spec allows."""
    address, name = "C8:47:8C:00:11:01", "Weight Scale"
    measurement = Characteristic(0x2A9D, 0x20, cccd_value=0x0002)
    stamped = local(2023, 12, 25, 14, 30, 45)
    values = [
        (measurement, "indication", h("00 B0 36")),                       # 70.0 kg
        (measurement, "indication", h("01 54 3D")),                       # 157.00 lb
        (measurement, "indication", h("02 B0 36 E7 07 0C 19 0E 1E 2D")),  # 70.0 kg, 2023-12-25 14:30:45
    ]
    times = gatt_session(capture, address, name, 0x181D, [measurement], values)
    device = gatt_device(name, address)
    return [
        sample("BodyMass", 70.0, "kg", times[0], source=GATT, device=device,
               metadata=gatt_meta(address, "scale", iso(times[0]))),
        sample("BodyMass", 157.0, "lb", times[1], source=GATT, device=device,
               metadata=gatt_meta(address, "scale", iso(times[1]))),
        sample("BodyMass", 70.0, "kg", stamped, source=GATT, device=device,
               metadata=gatt_meta(address, "scale", device_time_text(stamped))),
    ]


def bad_weight_case(capture):
    """A too-short value (bluetooth-sig-python's invalid-data test) and two layouts of that
    suite that the Weight Scale spec does not allow: bit 3 announces BMI *and* height, bit 4 is
    reserved."""
    address, name = "C8:47:8C:00:11:81", "Weight Scale"
    measurement = Characteristic(0x2A9D, 0x20, cccd_value=0x0002)
    values = [
        (measurement, "indication", h("00 01")),
        (measurement, "indication", h("0C B0 36 05 F5 00")),
        (measurement, "indication", h("10 B0 36 D6 06")),
    ]
    gatt_session(capture, address, name, 0x181D, [measurement], values)
    prefix = GATT + ": "
    return [
        prefix + "short-frame: 2A9D Weight Measurement: weight at offset 1 needs 2 bytes, 1 left; value 00 01",
        prefix + "short-frame: 2A9D Weight Measurement: height at offset 6 needs 2 bytes, 0 left; value 0c b0 36 05 f5 00",
        prefix + "reserved-flags: 2A9D Weight Measurement: flags 0x0010 set reserved bits 0x0010; value 10 b0 36 d6 06",
    ]


def body_composition_case(capture):
    """bluetooth-sig-python test_body_composition_measurement.py, valid tests 1, 2, 3, 5, 6."""
    address, name = "C8:47:8C:00:11:02", "BC Scale"
    measurement = Characteristic(0x2A9C, 0x20, cccd_value=0x0002)
    stamped = local(2024, 6, 20, 10, 30, 0)
    values = [
        (measurement, "indication", h("00 00 32 00")),                          # 5.0 %
        (measurement, "indication", h("03 00 96 00 E8 07 06 14 0A 1E 00")),     # 15.0 %, imperial, 2024-06-20 10:30:00
        (measurement, "indication", h("0C 00 78 00 05 40 06")),                 # 12.0 %, user 5, BMR 1600 kJ
        (measurement, "indication", h("C0 01 50 00 E0 2E 10 27 40 1F")),        # 8.0 %, FFM 60 kg, SLM, water
        (measurement, "indication", h("00 0E 46 00 40 1F B0 36 E8 03")),        # 7.0 %, 800 Ω, 70 kg, 1.0 m
    ]
    times = gatt_session(capture, address, name, 0x181B, [measurement], values)
    device = gatt_device(name, address)
    meta = lambda identity, user=None, **extra: gatt_meta(address, "scale", identity, user=user, **extra)
    return [
        sample("BodyFatPercentage", 0.05, "%", times[0], source=GATT, device=device, metadata=meta(iso(times[0]))),
        sample("BodyFatPercentage", 0.15, "%", stamped, source=GATT, device=device,
               metadata=meta(device_time_text(stamped))),
        sample("BodyFatPercentage", 0.12, "%", times[2], source=GATT, device=device,
               metadata=meta(iso(times[2]), user=5, IngestDeviceUserID=5)),
        sample("BodyFatPercentage", 0.08, "%", times[3], source=GATT, device=device, metadata=meta(iso(times[3]))),
        sample("LeanBodyMass", 60.0, "kg", times[3], source=GATT, device=device, metadata=meta(iso(times[3]))),
        sample("BodyFatPercentage", 0.07, "%", times[4], source=GATT, device=device,
               metadata=meta(iso(times[4]), IngestBodyImpedance=800)),
        sample("BodyMass", 70.0, "kg", times[4], source=GATT, device=device, metadata=meta(iso(times[4]))),
        sample("Height", 1.0, "m", times[4], source=GATT, device=device, metadata=meta(iso(times[4]))),
    ]


def bad_body_composition_case(capture):
    """bluetooth-sig-python's invalid-data test (2 bytes), and its test 5 value with a reserved bit."""
    address, name = "C8:47:8C:00:11:82", "BC Scale"
    measurement = Characteristic(0x2A9C, 0x20, cccd_value=0x0002)
    values = [
        (measurement, "indication", h("00 01")),
        (measurement, "indication", h("C0 21 50 00 E0 2E 10 27 40 1F")),
    ]
    gatt_session(capture, address, name, 0x181B, [measurement], values)
    prefix = GATT + ": "
    return [
        prefix + "short-frame: 2A9C Body Composition Measurement: body-fat-percentage at offset 2 needs 2 bytes, "
        "0 left; value 00 01",
        prefix + "reserved-flags: 2A9C Body Composition Measurement: flags 0x21c0 set reserved bits 0x2000; "
        "value c0 21 50 00 e0 2e 10 27 40 1f",
    ]


def thermometer_case(capture):
    """Nordic Android-BLE-Common-Library TemperatureMeasurementDataCallbackTest: 37.60 °C,
    2012-12-05 11:50:27, finger."""
    address, name = "C8:47:8C:00:11:03", "Thermometer"
    measurement = Characteristic(0x2A1C, 0x20, cccd_value=0x0002)
    stamped = local(2012, 12, 5, 11, 50, 27)
    values = [(measurement, "indication", h("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04"))]
    gatt_session(capture, address, name, 0x1809, [measurement], values)
    return [
        sample("BodyTemperature", 37.6, "degC", stamped, source=GATT, device=gatt_device(name, address),
               metadata=gatt_meta(address, "2A1C", device_time_text(stamped), HKBodyTemperatureSensorLocation=4)),
    ]


def bad_thermometer_case(capture):
    """Nordic's invalid-data test (the Temperature Type byte missing) and a reserved flag bit."""
    address, name = "C8:47:8C:00:11:83", "Thermometer"
    measurement = Characteristic(0x2A1C, 0x20, cccd_value=0x0002)
    values = [
        (measurement, "indication", h("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B")),
        (measurement, "indication", h("08 B0 0E 00 FE")),
    ]
    gatt_session(capture, address, name, 0x1809, [measurement], values)
    prefix = GATT + ": "
    return [
        prefix + "short-frame: 2A1C Temperature Measurement: temperature-type at offset 12 needs 1 byte, 0 left; "
        "value 06 b0 0e 00 fe dc 07 0c 05 0b 32 1b",
        prefix + "reserved-flags: 2A1C Temperature Measurement: flags 0x0008 set reserved bits 0x0008; "
        "value 08 b0 0e 00 fe",
    ]


def heart_rate_case(capture):
    """Nordic HeartRateMeasurementDataCallbackTest: 85 (uint8), 255 without contact (skipped),
    85 with energy and one RR interval, 257 (uint16) with energy and three RR intervals."""
    address, name = "C8:47:8C:00:11:04", "HR Strap"
    measurement = Characteristic(0x2A37, 0x10, cccd_value=0x0001)
    values = [
        (measurement, "notification", h("00 55")),
        (measurement, "notification", h("04 FF")),
        (measurement, "notification", h("1E 55 32 00 21 00")),
        (measurement, "notification", h("1F 01 01 32 01 01 00 02 01 FF FF")),
    ]
    times = gatt_session(capture, address, name, 0x180D, [measurement], values)
    device = gatt_device(name, address)
    return [
        sample("HeartRate", bpm, "count/min", times[index], source=GATT, device=device,
               metadata=gatt_meta(address, "2A37", iso(times[index])))
        for index, bpm in [(0, 85), (2, 85), (3, 257)]
    ]


def bad_heart_rate_case(capture):
    """Nordic's invalid-data test: the RR-interval flag is set but no interval follows."""
    address, name = "C8:47:8C:00:11:84", "HR Strap"
    measurement = Characteristic(0x2A37, 0x10, cccd_value=0x0001)
    values = [(measurement, "notification", h("17 01 01")), (measurement, "notification", h("21 48"))]
    gatt_session(capture, address, name, 0x180D, [measurement], values)
    prefix = GATT + ": "
    return [
        prefix + "short-frame: 2A37 Heart Rate Measurement: rr-interval at offset 3 needs 2 bytes, 0 left; "
        "value 17 01 01",
        prefix + "reserved-flags: 2A37 Heart Rate Measurement: flags 0x0021 set reserved bits 0x0020; value 21 48",
    ]


def rsc_case(capture):
    """Nordic RunningSpeedAndCadenceMeasurementDataCallbackTest: running, 3 m/s, cadence 18,
    stride 86 cm, total distance 0xF0000001 dm."""
    address, name = "C8:47:8C:00:11:05", "Foot Pod"
    measurement = Characteristic(0x2A53, 0x10, cccd_value=0x0001)
    values = [(measurement, "notification", h("07 00 03 12 56 00 01 00 00 F0"))]
    times = gatt_session(capture, address, name, 0x1814, [measurement], values)
    return [
        sample("RunningSpeed", 3.0, "m/s", times[0], source=GATT, device=gatt_device(name, address),
               metadata=gatt_meta(address, "2A53", iso(times[0]))),
    ]


def bad_rsc_case(capture):
    """Nordic's invalid-data test: 9 bytes, the total distance one byte short."""
    address, name = "C8:47:8C:00:11:85", "Foot Pod"
    measurement = Characteristic(0x2A53, 0x10, cccd_value=0x0001)
    values = [(measurement, "notification", h("07 00 03 12 56 00 00 00 00"))]
    gatt_session(capture, address, name, 0x1814, [measurement], values)
    return [
        GATT + ": short-frame: 2A53 RSC Measurement: total-distance at offset 6 needs 4 bytes, 3 left; "
        "value 07 00 03 12 56 00 00 00 00",
    ]


def blood_pressure_case(capture):
    """Nordic BloodPressureMeasurementDataCallbackTest: full (mmHg, year unknown), some (kPa),
    minimal."""
    address, name = "C8:47:8C:00:11:06", "BP Monitor"
    measurement = Characteristic(0x2A35, 0x20, cccd_value=0x0002)
    values = [
        (measurement, "indication", h("1E 8A 00 58 00 78 00 00 00 04 11 14 29 3B 3C 00 01 27 00")),
        (measurement, "indication", h("15 BD F0 0B 00 9F F0 3C 00 12 00")),
        (measurement, "indication", h("00 BD F0 0B 00 9F F0")),
    ]
    times = gatt_session(capture, address, name, 0x1810, [measurement], values)
    device = gatt_device(name, address)
    full_meta = gatt_meta(address, "2A35", iso(times[0]), user=1, IngestDeviceUserID=1)
    some_meta = gatt_meta(address, "2A35", iso(times[1]))
    minimal_meta = gatt_meta(address, "2A35", iso(times[2]))
    return [
        blood_pressure(138, 88, "mmHg", times[0], GATT, device, full_meta,
                       gatt_meta(address, "2A35", iso(times[0]), user=1, IngestDeviceUserID=1,
                                 IngestBloodPressureMeasurementStatus=0x27)),
        sample("HeartRate", 60, "count/min", times[0], source=GATT, device=device, metadata=full_meta),
        blood_pressure(18.9, 11, "kPa", times[1], GATT, device, some_meta,
                       gatt_meta(address, "2A35", iso(times[1]), IngestBloodPressureMeasurementStatus=0x12)),
        sample("HeartRate", 60, "count/min", times[1], source=GATT, device=device, metadata=some_meta),
        blood_pressure(18.9, 11, "mmHg", times[2], GATT, device, minimal_meta, minimal_meta),
    ]


def bad_blood_pressure_case(capture):
    """Nordic's two invalid-data tests: 6 bytes; time-stamp flag set but 7 bytes in all."""
    address, name = "C8:47:8C:00:11:86", "BP Monitor"
    measurement = Characteristic(0x2A35, 0x20, cccd_value=0x0002)
    values = [
        (measurement, "indication", h("01 02 03 04 05 06")),
        (measurement, "indication", h("03 02 03 04 05 06 07")),
    ]
    gatt_session(capture, address, name, 0x1810, [measurement], values)
    prefix = GATT + ": "
    return [
        prefix + "short-frame: 2A35 Blood Pressure Measurement: mean-arterial-pressure at offset 5 needs 2 bytes, "
        "1 left; value 01 02 03 04 05 06",
        prefix + "short-frame: 2A35 Blood Pressure Measurement: time-stamp at offset 7 needs 7 bytes, 0 left; "
        "value 03 02 03 04 05 06 07",
    ]


def glucose_case(capture):
    """Nordic GlucoseMeasurementDataCallbackTest: sequence 1, 2019-02-27 11:10:30 - 5 min,
    30.0 kg/L (sic), capillary plasma, finger. Records requested through the RACP."""
    address, name = "C8:47:8C:00:11:07", "Glucose Meter"
    measurement = Characteristic(0x2A18, 0x10, cccd_value=0x0001)
    racp = Characteristic(0x2A52, 0x28, cccd_value=0x0002)
    moment = local(2019, 2, 27, 11, 5, 30)
    values = [
        (racp, "write", h("01 01")),  # report all stored records
        (measurement, "notification", h("1B 01 00 E3 07 02 1B 0B 0A 1E FB FF 1E 00 12 05 01")),
        (racp, "indication", h("06 00 01 01")),  # response: success
    ]
    gatt_session(capture, address, name, 0x1808, [measurement, racp], values)
    return [
        sample("BloodGlucose", 3_000_000, "mg/dL", moment, source=GATT, device=gatt_device(name, address),
               metadata=gatt_meta(address, "2A18", "1/2019-02-27T11:10:30", IngestGlucoseSampleLocation=1,
                                  IngestGlucoseSampleType=2, IngestGlucoseSequenceNumber=1)),
    ]


def bad_glucose_case(capture):
    """Nordic's invalid-data test: flags announce a time offset that is not there, so the
    record ends inside the sensor status annunciation."""
    address, name = "C8:47:8C:00:11:87", "Glucose Meter"
    measurement = Characteristic(0x2A18, 0x10, cccd_value=0x0001)
    values = [(measurement, "notification", h("1B 00 00 E2 07 04 1A 0B 09 1E 1E 00 12 05 01"))]
    gatt_session(capture, address, name, 0x1808, [measurement], values)
    return [
        GATT + ": short-frame: 2A18 Glucose Measurement: sensor-status-annunciation at offset 15 needs 2 bytes, "
        "0 left; value 1b 00 00 e2 07 04 1a 0b 09 1e 1e 00 12 05 01",
    ]


def sfloat(mantissa, exponent):
    """An IEEE 11073 SFLOAT: 4-bit exponent, 12-bit mantissa, little-endian."""
    return le16(((exponent & 0x0F) << 12) | (mantissa & 0x0FFF))


def glucose_record(flags, sequence, moment, concentration, type_location, offset=None):
    """Glucose Measurement: flags, sequence, base time, [time offset], concentration SFLOAT, type/location."""
    frame = bytes([flags]) + le16(sequence) + le16(moment[0]) + bytes(moment[1:])
    if offset is not None:
        frame += struct.pack("<h", offset)
    return frame + concentration + bytes([type_location])


def meter_clock(offset_seconds):
    """A clock value (Current Time or Date Time: year, month, day, hours, minutes, seconds, …) that is
    `offset_seconds` off the moment its read is answered (20 ms after the request)."""
    def value(moment):
        clock = (moment + timedelta(milliseconds=20) + timedelta(seconds=offset_seconds)).astimezone(ZONE)
        return le16(clock.year) + bytes([clock.month, clock.day, clock.hour, clock.minute, clock.second])
    return value


def clock_offset(read_answered, offset_seconds):
    """The offset the conversation sees: the whole-second clock minus the moment the read was answered."""
    clock = (read_answered + timedelta(seconds=offset_seconds)).replace(microsecond=0)
    return round((clock - read_answered).total_seconds())


def contour_next_one_case(capture):
    """A Contour Next One as xDrip+ reads one (ORIGIN): Manufacturer Name, its clock 185 s slow on Current Time,
    all records through the RACP; a record with a context (before a meal), one without, a control-solution test,
    one with a context (after a meal)."""
    address, name = "C8:47:8C:00:11:09", "Contour7801H5213142"
    manufacturer = Characteristic(0x2A29, 0x02)
    current_time = Characteristic(0x2A2B, 0x1A, cccd_value=0x0001)  # read, write, notify
    measurement = Characteristic(0x2A18, 0x10, cccd_value=0x0001)
    context = Characteristic(0x2A34, 0x10, cccd_value=0x0001)
    racp = Characteristic(0x2A52, 0x28, cccd_value=0x0002)
    mg = lambda value: sfloat(value, -5)  # kg/L: mg/dL x 10^-5
    values = [
        (manufacturer, "read", b"Ascensia Diabetes Care"),
        (current_time, "read", meter_clock(-185)),
        (racp, "write", h("01 01")),
        (measurement, "notification", glucose_record(0x12, 41, (2025, 1, 14, 7, 58, 10), mg(98), 0x11)),
        (context, "notification", h("02 29 00 01")),  # meal 1: preprandial
        (measurement, "notification", glucose_record(0x02, 42, (2025, 1, 14, 12, 30, 0), mg(143), 0x11)),
        (measurement, "notification", glucose_record(0x02, 43, (2025, 1, 14, 18, 0, 0), mg(110), 0x4A)),  # control
        (measurement, "notification", glucose_record(0x12, 44, (2025, 1, 14, 19, 45, 0), mg(162), 0x11)),
        (context, "notification", h("02 2c 00 02")),  # meal 2: postprandial
        (racp, "indication", h("06 00 01 01")),
    ]
    capture.advertising_report(address, flags_ad() + uuid16_list_ad(0x1808) + name_ad(name))  # the Glucose service only
    capture.advance(120)
    times = gatt_services_session(capture, address, name, [(0x180A, [manufacturer]), (0x1805, [current_time]),
                                                           (0x1808, [measurement, context, racp])], values, advertise=False)
    offset = clock_offset(times[1], -185)
    device = device_json(name=name, manufacturer="Ascensia Diabetes Care", localIdentifier=address)
    records = []
    for sequence, moment, value, meal, meal_time in [(41, (2025, 1, 14, 7, 58, 10), 98, 1, 1),
                                                      (42, (2025, 1, 14, 12, 30, 0), 143, None, None),
                                                      (44, (2025, 1, 14, 19, 45, 0), 162, 2, 2)]:
        extra = dict(IngestGlucoseSampleLocation=1, IngestGlucoseSampleType=1, IngestGlucoseSequenceNumber=sequence,
                     IngestDeviceClockOffsetSeconds=offset)
        if meal is not None:
            extra.update(IngestGlucoseMeal=meal, HKBloodGlucoseMealTime=meal_time)
        records.append(sample("BloodGlucose", value, "mg/dL", local(*moment) - timedelta(seconds=offset), source=GATT,
                              device=device,
                              metadata=gatt_meta(address, "2A18", "%d/%s" % (sequence, device_time_text(local(*moment))),
                                                 **extra)))
    return records


def accu_chek_guide_case(capture):
    """An Accu-Chek Guide as xDrip+ reads a Roche meter (ORIGIN): its clock on Date Time 0x2A08 in the Glucose
    service, 7 minutes fast; records in mol/L, one with a time offset of +60 min, one whose context carries a
    carbohydrate and extended flags before its meal (fasting)."""
    address, name = "C8:47:8C:00:11:0A", "Accu-Chek Guide"
    manufacturer = Characteristic(0x2A29, 0x02)
    measurement = Characteristic(0x2A18, 0x10, cccd_value=0x0001)
    context = Characteristic(0x2A34, 0x10, cccd_value=0x0001)
    racp = Characteristic(0x2A52, 0x28, cccd_value=0x0002)
    date_time = Characteristic(0x2A08, 0x02)
    mmol = lambda tenths: sfloat(tenths, -4)  # mol/L: mmol/L x 10^-3, in tenths of mmol/L
    values = [
        (manufacturer, "read", b"Roche"),
        (date_time, "read", meter_clock(420)),
        (racp, "write", h("01 01")),
        (measurement, "notification", glucose_record(0x07, 210, (2025, 1, 14, 6, 50, 0), mmol(54), 0x11, offset=60)),
        (measurement, "notification", glucose_record(0x16, 211, (2025, 1, 15, 7, 5, 0), mmol(61), 0x11)),
        (context, "notification", h("83 d3 00 00 01 32 d0 03")),  # extended flags, carbohydrate 1 (50 g), meal 3
        (racp, "indication", h("06 00 01 01")),
    ]
    capture.advertising_report(address, flags_ad() + uuid16_list_ad(0x1808) + name_ad(name))
    capture.advance(120)
    times = gatt_services_session(capture, address, name, [(0x180A, [manufacturer]),
                                                           (0x1808, [measurement, context, racp, date_time])], values,
                                  advertise=False)
    offset = clock_offset(times[1], 420)
    device = device_json(name=name, manufacturer="Roche", localIdentifier=address)
    unit = "mmol<180.15588000005408>/L"
    first_base = local(2025, 1, 14, 6, 50, 0)
    second_base = local(2025, 1, 15, 7, 5, 0)
    return [
        sample("BloodGlucose", 5.4, unit, first_base + timedelta(minutes=60) - timedelta(seconds=offset), source=GATT,
               device=device,
               metadata=gatt_meta(address, "2A18", "210/%s" % device_time_text(first_base), IngestGlucoseSampleLocation=1,
                                  IngestGlucoseSampleType=1, IngestGlucoseSequenceNumber=210,
                                  IngestDeviceClockOffsetSeconds=offset)),
        sample("BloodGlucose", 6.1, unit, second_base - timedelta(seconds=offset), source=GATT, device=device,
               metadata=gatt_meta(address, "2A18", "211/%s" % device_time_text(second_base), IngestGlucoseSampleLocation=1,
                                  IngestGlucoseSampleType=1, IngestGlucoseSequenceNumber=211,
                                  IngestDeviceClockOffsetSeconds=offset, IngestGlucoseMeal=3, HKBloodGlucoseMealTime=1)),
    ]


def pulse_oximeter_case(capture):
    """StanfordSpezi/SpeziBluetooth PLXTests: continuous 100 %/90, 95 %/90 with status,
    99 %/97 with fast/slow; spot-check 94 %/147 at 2024-11-29 23:08:57."""
    address, name = "C8:47:8C:00:11:08", "Oximeter"
    spot = Characteristic(0x2A5E, 0x20, cccd_value=0x0002)
    continuous = Characteristic(0x2A5F, 0x10, cccd_value=0x0001)
    stamped = local(2024, 11, 29, 23, 8, 57)
    values = [
        (continuous, "notification", h("00 64 00 5A 00")),
        (continuous, "notification", h("1C 5F 00 5A 00 20 00 00 00 00 57 F0")),
        (continuous, "notification", h("1F DE F3 CA F3 CA F3 5A F5 D4 F3 B2 F2 20 01 00 00 00 7A E3")),
        (spot, "indication", h("0F AC F3 BE F5 E8 07 0B 1D 17 08 39 20 40 22 00 00 66 E3")),
    ]
    times = gatt_session(capture, address, name, 0x1822, [spot, continuous], values)
    device = gatt_device(name, address)
    records = []
    for index, (spo2, pulse) in enumerate([(1.00, 90), (0.95, 90), (0.99, 97)]):
        meta = gatt_meta(address, "2A5F", iso(times[index]))
        records.append(sample("OxygenSaturation", spo2, "%", times[index], source=GATT, device=device, metadata=meta))
        records.append(sample("HeartRate", pulse, "count/min", times[index], source=GATT, device=device, metadata=meta))
    meta = gatt_meta(address, "2A5E", device_time_text(stamped))
    records.append(sample("OxygenSaturation", 0.94, "%", stamped, source=GATT, device=device, metadata=meta))
    records.append(sample("HeartRate", 147, "count/min", stamped, source=GATT, device=device, metadata=meta))
    return records


def bad_pulse_oximeter_case(capture):
    """Spezi's vectors made malformed: a reserved flag bit (0x20) on the 100 %/90 value, and the
    spot-check value cut inside its time stamp."""
    address, name = "C8:47:8C:00:11:88", "Oximeter"
    spot = Characteristic(0x2A5E, 0x20, cccd_value=0x0002)
    continuous = Characteristic(0x2A5F, 0x10, cccd_value=0x0001)
    values = [
        (continuous, "notification", h("20 64 00 5A 00")),
        (spot, "indication", h("0F AC F3 BE F5 E8 07 0B")),
    ]
    gatt_session(capture, address, name, 0x1822, [spot, continuous], values)
    prefix = GATT + ": "
    return [
        prefix + "reserved-flags: 2A5F PLX Continuous Measurement: flags 0x0020 set reserved bits 0x0020; "
        "value 20 64 00 5a 00",
        prefix + "short-frame: 2A5E PLX Spot-check Measurement: time-stamp at offset 5 needs 7 bytes, 3 left; "
        "value 0f ac f3 be f5 e8 07 0b",
    ]


def bad_acl_lengths_case(capture):
    """HCI/L2CAP framing errors around a valid Nordic thermometer indication: an ACL packet
    shorter than its header says, a continuation fragment with no start, and fragments adding up
    to more than the L2CAP length. Only the intact indication becomes a sample."""
    address, name = "C8:47:8C:00:11:89", "Thermometer"
    measurement = Characteristic(0x2A1C, 0x20, cccd_value=0x0002)
    gatt_session(capture, address, name, 0x1809, [measurement], [])
    # gatt_session ended with a disconnection; reconnect without discovery (the host cached it).
    capture.records.pop()
    value = h("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04")
    pdu = bytes([0x1D]) + le16(measurement.value_handle) + value
    frame = le16(len(pdu)) + le16(0x0004) + pdu
    capture.advance(1000)
    # 1. ACL header declares 4 more bytes than the packet holds.
    capture.add("received", 0x02, le16(HANDLE | 0b10 << 12) + le16(len(frame) + 4) + frame)
    capture.advance(100)
    # 2. A continuation fragment with no first fragment.
    capture.add("received", 0x02, le16(HANDLE | 0b01 << 12) + le16(3) + pdu[:3])
    capture.advance(100)
    # 3. L2CAP length 3 less than the fragments deliver.
    short_header = le16(len(pdu) - 3) + le16(0x0004)
    capture.add("received", 0x02, le16(HANDLE | 0b10 << 12) + le16(6) + short_header + pdu[:2])
    capture.add("received", 0x02, le16(HANDLE | 0b01 << 12) + le16(len(pdu) - 2) + pdu[2:])
    capture.advance(100)
    # 4. The intact indication.
    capture.acl("received", HANDLE, pdu)
    capture.advance(2000)
    capture.disconnection_complete(HANDLE)
    stamped = local(2012, 12, 5, 11, 50, 27)
    errors = [
        "trace: aclContinuationWithoutStart 1",
        "trace: aclLengthMismatch 1",
        "trace: l2capLengthMismatch 1",
    ]
    records = [
        sample("BodyTemperature", 37.6, "degC", stamped, source=GATT, device=gatt_device(name, address),
               metadata=gatt_meta(address, "2A1C", device_time_text(stamped), HKBodyTemperatureSensorLocation=4)),
    ]
    return errors, records



CASES = [
    Case("weight-scale", weight_case, fragmented=True),
    Case("bad-weight-scale", bad_weight_case),
    Case("body-composition", body_composition_case, fragmented=True),
    Case("bad-body-composition", bad_body_composition_case),
    Case("thermometer", thermometer_case, fragmented=True),
    Case("bad-thermometer", bad_thermometer_case),
    Case("heart-rate", heart_rate_case, fragmented=True),
    Case("bad-heart-rate", bad_heart_rate_case),
    Case("running-speed-cadence", rsc_case, fragmented=True),
    Case("bad-running-speed-cadence", bad_rsc_case),
    Case("blood-pressure", blood_pressure_case, fragmented=True),
    Case("bad-blood-pressure", bad_blood_pressure_case),
    Case("glucose", glucose_case, fragmented=True),
    Case("bad-glucose", bad_glucose_case),
    Case("contour-next-one", contour_next_one_case),
    Case("accu-chek-guide", accu_chek_guide_case),
    Case("pulse-oximeter", pulse_oximeter_case, fragmented=True),
    Case("bad-pulse-oximeter", bad_pulse_oximeter_case),
    Case("bad-acl-lengths", bad_acl_lengths_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
