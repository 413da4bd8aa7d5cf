#!/usr/bin/env python3
"""Builds the adapter fixtures in Tests/AdapterTests/Captures/<adapter-id>/ from published bytes.

Python 3 standard library only. Run from anywhere: `python3 scripts/make-adapter-captures.py`.
It rewrites every generated file (the `unsupported/` folder of real captures is left alone).

For each case it writes
  <case>.btsnoop          btsnoop v1, datalink 1002 (HCI UART / H4), fixed timestamps
  <case>.expected.jsonl   the records `ingestd decode --json --tz Europe/Berlin` must print,
                          written here from the published values (not from ingestd's output);
                          `uuid` is a placeholder, the tests ignore it
and for each malformed case
  bad-<case>.btsnoop
  bad-<case>.expected-error   one line per rejection, in order: `<adapter>: <reason>: <detail>`,
                              then `trace: <malformation> <count>` for packets the HCI/ATT
                              reconstruction could not use
plus ORIGIN in every adapter folder, naming where each byte sequence was published.

GATT cases are whole sessions as a phone's HCI snoop log shows them: advertising report,
LE Connection Complete, primary service discovery (Read By Group Type, ended by Attribute Not
Found), characteristic discovery (Read By Type 0x2803), descriptor discovery (Find Information),
the CCCD write, the measurement indications (each confirmed) or notifications, and
Disconnection Complete. Each GATT case also has a `-fragmented` twin in which every L2CAP frame
travels in several ACL fragments (start + continuation packets); its expected output is the same.
"""

import json
import os
import struct
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "AdapterTests", "Captures")
BTSNOOP_EPOCH_OFFSET = 0x00DCDDB30F2F8000  # microseconds from 0000-01-01 to 1970-01-01
ZONE_NAME = "Europe/Berlin"
ZONE = ZoneInfo(ZONE_NAME)
UUID_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"
# Capture clock: every case starts at this instant (after every device time stamp used below).
CAPTURE_START = datetime(2025, 1, 15, 9, 0, 0, tzinfo=timezone.utc)


def h(text):
    """Bytes from hex text with optional spaces."""
    return bytes.fromhex(text.replace(" ", ""))


def le16(value):
    return struct.pack("<H", value)


def address_bytes(address):
    """A Bluetooth address in wire order (least significant byte first)."""
    return bytes(int(part, 16) for part in reversed(address.split(":")))


def iso(moment):
    """ingestd's UTC text: seconds, fractional part only when not zero."""
    moment = moment.astimezone(timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += ("." + "%06d" % moment.microsecond).rstrip("0")
    return text + "Z"


def local(year, month, day, hour, minute, second):
    """A device wall-clock time read in the test's zone."""
    return datetime(year, month, day, hour, minute, second, tzinfo=ZONE)


def number(value):
    return int(value) if float(value).is_integer() else value


# MARK: - btsnoop writing


class Capture:
    """HCI packets with a running clock, written as btsnoop v1 / datalink 1002."""

    def __init__(self, fragment_sizes=None):
        self.records = []  # (timestamp µs since 1970, direction 'sent'/'received', h4 type, packet)
        self.time = int(CAPTURE_START.timestamp() * 1_000_000)
        self.fragment_sizes = fragment_sizes

    def at(self):
        return datetime.fromtimestamp(self.time / 1_000_000, tz=timezone.utc)

    def advance(self, milliseconds):
        self.time += int(milliseconds * 1000)

    def add(self, direction, h4_type, packet, timestamp=None):
        self.records.append((self.time if timestamp is None else timestamp, direction, h4_type, bytes(packet)))

    # HCI events (controller to host)
    def event(self, code, parameters):
        self.add("received", 0x04, bytes([code, len(parameters)]) + parameters)

    def command(self, opcode, parameters):
        self.add("sent", 0x01, le16(opcode) + bytes([len(parameters)]) + parameters)

    def advertising_report(self, address, data, event_type=0x00, address_type=0x00, rssi=-60):
        """LE Advertising Report (LE Meta 0x3E, subevent 0x02) with one report."""
        assert len(data) <= 31
        report = bytes([event_type, address_type]) + address_bytes(address) + bytes([len(data)]) + data
        report += struct.pack("b", rssi)
        self.event(0x3E, bytes([0x02, 0x01]) + report)

    def connection_complete(self, handle, address, address_type=0x00):
        """LE Connection Complete (subevent 0x01), status success, we are central."""
        parameters = bytes([0x01, 0x00]) + le16(handle) + bytes([0x00, address_type]) + address_bytes(address)
        parameters += le16(0x0027) + le16(0x0000) + le16(0x01F4) + bytes([0x00])
        self.event(0x3E, parameters)

    def disconnection_complete(self, handle, reason=0x13):
        self.event(0x05, bytes([0x00]) + le16(handle) + bytes([reason]))

    def acl(self, direction, handle, l2cap_payload, cid=0x0004, declared_length=None):
        """One L2CAP frame on the connection, in one ACL packet or (fragment_sizes) several."""
        frame = le16(len(l2cap_payload)) + le16(cid) + l2cap_payload
        start_flag = 0b10 if direction == "received" else 0b00
        if not self.fragment_sizes or len(frame) <= 1:
            length = len(frame) if declared_length is None else declared_length
            self.add(direction, 0x02, le16(handle | start_flag << 12) + le16(length) + frame)
            return
        pieces = []
        offset = 0
        index = 0
        while offset < len(frame):
            size = self.fragment_sizes[index % len(self.fragment_sizes)]
            pieces.append(frame[offset:offset + size])
            offset += size
            index += 1
        # Earlier fragments a microsecond apart; the last one at the frame's own time.
        for position, piece in enumerate(pieces):
            flag = start_flag if position == 0 else 0b01
            stamp = self.time - (len(pieces) - 1 - position)
            self.add(direction, 0x02, le16(handle | flag << 12) + le16(len(piece)) + piece, timestamp=stamp)

    def write(self, path):
        out = bytearray(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        for timestamp, direction, h4_type, packet in self.records:
            length = len(packet) + 1
            flags = (1 if direction == "received" else 0) | (2 if h4_type in (0x01, 0x04) else 0)
            out += struct.pack(">IIIIq", length, length, flags, 0, timestamp + BTSNOOP_EPOCH_OFFSET)
            out += bytes([h4_type]) + packet
        with open(path, "wb") as file:
            file.write(out)


def ad(ad_type, payload):
    """One AD structure: length, type, data."""
    return bytes([len(payload) + 1, ad_type]) + payload


def flags_ad(value=0x06):
    return ad(0x01, bytes([value]))


def name_ad(name):
    return ad(0x09, name.encode())


def uuid16_list_ad(*uuids):
    return ad(0x03, b"".join(le16(u) for u in uuids))


def service_data_ad(uuid, payload):
    return ad(0x16, le16(uuid) + payload)


# MARK: - Expected records


def device_json(**fields):
    order = ["name", "manufacturer", "model", "hardwareVersion", "firmwareVersion", "softwareVersion",
             "localIdentifier", "udiDeviceIdentifier"]
    return {key: fields[key] for key in order if fields.get(key) is not None}


def metadata_json(sync_identifier=None, sync_version=None, time_zone=ZONE_NAME, serial=None, **entries):
    result = {}
    if sync_identifier is not None:
        result["HKMetadataKeySyncIdentifier"] = sync_identifier
    if sync_version is not None:
        result["HKMetadataKeySyncVersion"] = sync_version
    if time_zone is not None:
        result["HKTimeZone"] = time_zone
    if serial is not None:
        result["HKDeviceSerialNumber"] = serial
    for key in sorted(entries):
        value = entries[key]
        result[key] = number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    return result


def sample(type_name, value, unit, start, end=None, source=None, device=None, metadata=None):
    record = {
        "uuid": UUID_PLACEHOLDER,
        "type": type_name if type_name.startswith(("HK", "Ingest")) else "HKQuantityTypeIdentifier" + type_name,
        "value": number(value),
        "unit": unit,
        "start": iso(start),
        "end": iso(end or start),
        "source": source,
    }
    if device:
        record["device"] = device
    if metadata:
        record["metadata"] = metadata
    return record


def blood_pressure(systolic, diastolic, unit, moment, source, device, metadata, correlation_metadata):
    return {
        "correlation": "HKCorrelationTypeIdentifierBloodPressure",
        "uuid": UUID_PLACEHOLDER,
        "start": iso(moment),
        "end": iso(moment),
        "source": source,
        "device": device,
        "metadata": correlation_metadata,
        "objects": [
            sample("BloodPressureSystolic", systolic, unit, moment, source=source, device=device, metadata=metadata),
            sample("BloodPressureDiastolic", diastolic, unit, moment, source=source, device=device, metadata=metadata),
        ],
    }


def write_expected(path, records):
    with open(path, "w") as file:
        for record in records:
            file.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")


def write_expected_error(path, lines):
    with open(path, "w") as file:
        for line in lines:
            file.write(line + "\n")


# MARK: - GATT sessions

HANDLE = 0x0040
FRAGMENT_SIZES = [5, 3, 1, 4]  # bytes per ACL fragment, cycled


class Characteristic:
    def __init__(self, uuid, properties, cccd_value=None):
        self.uuid = uuid
        self.properties = properties
        self.cccd_value = cccd_value  # 0x0001 notifications, 0x0002 indications, None: no CCCD
        self.declaration = None
        self.value_handle = None
        self.cccd = None


def layout(service_start, characteristics):
    """Assigns handles: declaration, value, [CCCD] per characteristic. Returns the service end."""
    handle = service_start + 1
    for characteristic in characteristics:
        characteristic.declaration = handle
        characteristic.value_handle = handle + 1
        handle += 2
        if characteristic.cccd_value is not None:
            characteristic.cccd = handle
            handle += 1
    return handle - 1


def gatt_session(capture, address, name, service, characteristics, values, advertise=True):
    """A whole connection: discovery, subscriptions, then `values` [(characteristic, kind, bytes)]."""
    att = lambda direction, pdu: capture.acl(direction, HANDLE, pdu)
    if advertise:
        capture.advertising_report(address, flags_ad() + uuid16_list_ad(service) + name_ad(name))
        capture.advance(120)
    # LE Create Connection (0x200D) as the host sends it, then the controller's event.
    capture.command(0x200D, le16(0x0060) + le16(0x0030) + bytes([0x00, 0x00]) + address_bytes(address)
                    + bytes([0x00]) + le16(0x0018) + le16(0x0028) + le16(0x0000) + le16(0x01F4)
                    + le16(0x0000) + le16(0x0000))
    capture.advance(40)
    capture.connection_complete(HANDLE, address)
    capture.advance(60)

    service_start = 0x000C
    service_end = layout(service_start, characteristics)
    # Primary services: GAP, GATT and the health service in one response, then Attribute Not Found.
    att("sent", bytes([0x10]) + le16(0x0001) + le16(0xFFFF) + le16(0x2800))
    capture.advance(30)
    att("received", bytes([0x11, 0x06]) + le16(0x0001) + le16(0x0007) + le16(0x1800)
        + le16(0x0008) + le16(0x000B) + le16(0x1801) + le16(service_start) + le16(service_end) + le16(service))
    capture.advance(30)
    att("sent", bytes([0x10]) + le16(service_end + 1) + le16(0xFFFF) + le16(0x2800))
    capture.advance(30)
    att("received", bytes([0x01, 0x10]) + le16(service_end + 1) + bytes([0x0A]))
    capture.advance(30)

    # Characteristic declarations in the health service, three per response at ATT_MTU 23.
    start = service_start
    remaining = list(characteristics)
    while True:
        att("sent", bytes([0x08]) + le16(start) + le16(service_end) + le16(0x2803))
        capture.advance(30)
        if not remaining:
            att("received", bytes([0x01, 0x08]) + le16(start) + bytes([0x0A]))
            capture.advance(30)
            break
        batch, remaining = remaining[:3], remaining[3:]
        pdu = bytes([0x09, 0x07])
        for characteristic in batch:
            pdu += le16(characteristic.declaration) + bytes([characteristic.properties])
            pdu += le16(characteristic.value_handle) + le16(characteristic.uuid)
        att("received", pdu)
        capture.advance(30)
        start = batch[-1].value_handle + 1

    # Descriptors of each characteristic that notifies or indicates, then the CCCD write.
    for characteristic in characteristics:
        if characteristic.cccd is None:
            continue
        att("sent", bytes([0x04]) + le16(characteristic.cccd) + le16(characteristic.cccd))
        capture.advance(30)
        att("received", bytes([0x05, 0x01]) + le16(characteristic.cccd) + le16(0x2902))
        capture.advance(30)
    for characteristic in characteristics:
        if characteristic.cccd is None:
            continue
        att("sent", bytes([0x12]) + le16(characteristic.cccd) + le16(characteristic.cccd_value))
        capture.advance(30)
        att("received", bytes([0x13]))
        capture.advance(30)

    received_times = []
    for characteristic, kind, value in values:
        capture.advance(1000)
        if kind == "indication":
            att("received", bytes([0x1D]) + le16(characteristic.value_handle) + value)
            received_times.append(capture.at())
            capture.advance(20)
            att("sent", bytes([0x1E]))
        elif kind == "notification":
            att("received", bytes([0x1B]) + le16(characteristic.value_handle) + value)
            received_times.append(capture.at())
        elif kind == "write":
            att("sent", bytes([0x12]) + le16(characteristic.value_handle) + value)
            capture.advance(20)
            att("received", bytes([0x13]))
            received_times.append(capture.at())
        else:
            raise ValueError(kind)
    capture.advance(2000)
    capture.disconnection_complete(HANDLE)
    return received_times


class Case:
    def __init__(self, name, build, fragmented=False):
        self.name = name
        self.build = build  # build(capture) -> expected records or error lines
        self.fragmented = fragmented


def write_case(folder, case):
    variants = [(case.name, None)]
    if case.fragmented:
        variants.append((case.name + "-fragmented", FRAGMENT_SIZES))
    for name, fragment_sizes in variants:
        capture = Capture(fragment_sizes=fragment_sizes)
        expected = case.build(capture)
        capture.write(os.path.join(folder, name + ".btsnoop"))
        # A bad case returns its error lines, and may also return the records it still yields.
        errors, records = (expected, None) if case.name.startswith("bad-") else (None, expected)
        if isinstance(expected, tuple):
            errors, records = expected
        if errors is not None:
            write_expected_error(os.path.join(folder, name + ".expected-error"), errors)
        if records is not None:
            write_expected(os.path.join(folder, name + ".expected.jsonl"), records)


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


# MARK: - xiaomi-scale

XIAOMI = "xiaomi-scale"
XIAOMI_ADDRESS = "50:FB:19:1B:B5:DC"  # the address xiaomi-ble's tests use


def mi_scale_advertisement(capture, name, uuid, payload, event_type=0x00):
    data = flags_ad() + name_ad(name) + service_data_ad(uuid, payload)
    capture.advertising_report(XIAOMI_ADDRESS, data, event_type=event_type, rssi=-60)


def mi_scale_v1_case(capture):
    """xiaomi-ble tests/test_parser.py: test_Xiaomi_Scale1_non_stabilized (0.1 kg, not final),
    test_Xiaomi_Scale1 (86.55 kg stabilized, clock 2021-04-11 16:19:01; rebroadcast),
    test_Xiaomi_Scale1_mass_removed, test_Xiaomi_Scale1_reset."""
    frames = [
        h("82 14 00 E5 07 04 0B 10 17 08"),
        h("22 9E 43 E5 07 04 0B 10 13 01"),
        h("22 9E 43 E5 07 04 0B 10 13 01"),
        h("22 9E 43 E5 07 04 0B 10 13 01"),
        h("A2 20 44 B2 07 01 01 0A 1A 15"),
        h("80 00 00 E5 07 04 0B 10 13 01"),
    ]
    for frame in frames:
        mi_scale_advertisement(capture, "MISCA", 0x181D, frame, event_type=0x03)
        capture.advance(250)
    moment = local(2021, 4, 11, 16, 19, 1)
    return [
        sample("BodyMass", 86.55, "kg", moment, source=XIAOMI,
               device=device_json(name="MISCA", manufacturer="Xiaomi", model="XMTZC01HM/XMTZC04HM",
                                  localIdentifier=XIAOMI_ADDRESS),
               metadata=metadata_json(sync_identifier="%s/2021-04-11T16:19:01/17310" % XIAOMI_ADDRESS,
                                      sync_version=1)),
    ]


def mi_scale_v2_case(capture):
    """xiaomi-ble tests/test_parser.py: test_Xiaomi_Scale2_non_stabilized (105.8 kg, not final),
    test_Xiaomi_Scale2 (85.15 kg, 428 Ω; clock 1970-05-04, i.e. never set), test_Xiaomi_Scale2_reset."""
    frames = [
        h("02 04 B2 07 01 01 12 10 1A 00 00 A8 52"),
        h("02 26 B2 07 05 04 0F 02 01 AC 01 86 42"),
        h("02 26 B2 07 05 04 0F 02 01 AC 01 86 42"),
        h("02 82 B2 07 05 04 0F 02 01 00 00 00 00"),
    ]
    received = None
    for index, frame in enumerate(frames):
        mi_scale_advertisement(capture, "MIBFS", 0x181B, frame)
        if index == 1:
            received = capture.at()
        capture.advance(250)
    return [
        sample("BodyMass", 85.15, "kg", received, source=XIAOMI,
               device=device_json(name="MIBFS", manufacturer="Xiaomi", model="XMTZC02HM/XMTZC05HM",
                                  localIdentifier=XIAOMI_ADDRESS),
               metadata=metadata_json(sync_identifier="%s/1970-05-04T15:02:01/17030" % XIAOMI_ADDRESS,
                                      sync_version=2, IngestDeviceClockUnset=True, IngestImpedanceOhm=428)),
    ]


def bad_mi_scale_case(capture):
    """Lengths the two layouts do not allow, cut from / grown out of xiaomi-ble's published frames:
    the v1 frame without its last byte, the v1 frame with one byte too many, and the v2 frame cut
    inside its impedance."""
    frames = [
        (0x181D, "MISCA", h("22 9E 43 E5 07 04 0B 10 13")),
        (0x181D, "MISCA", h("22 9E 43 E5 07 04 0B 10 13 01 00")),
        (0x181B, "MIBFS", h("02 26 B2 07 05 04 0F 02 01 AC")),
    ]
    for uuid, name, frame in frames:
        mi_scale_advertisement(capture, name, uuid, frame)
        capture.advance(250)
    prefix = XIAOMI + ": "
    return [
        prefix + "short-frame: %s: smartScale frame of 9 bytes ends before timestamp at offset 3: "
        "22 9e 43 e5 07 04 0b 10 13" % XIAOMI_ADDRESS,
        prefix + "long-frame: %s: smartScale frame has 11 bytes, the layout has 10: "
        "22 9e 43 e5 07 04 0b 10 13 01 00" % XIAOMI_ADDRESS,
        prefix + "short-frame: %s: bodyCompositionScale frame of 10 bytes ends before impedance at offset 9: "
        "02 26 b2 07 05 04 0f 02 01 ac" % XIAOMI_ADDRESS,
    ]


# MARK: - bthome

BTHOME = "bthome"
BTHOME_ADDRESS = "A4:C1:38:8D:18:B2"  # the address bthome-ble's tests use


def bthome_advertisement(capture, name, payload):
    data = flags_ad() + service_data_ad(0xFCD2, payload) + name_ad(name)
    capture.advertising_report(BTHOME_ADDRESS, data, event_type=0x00, rssi=-60)


def bthome_mass_case(capture):
    """bthome-ble tests/test_parser_v2.py: test_bthome_mass_kilograms (80.3 kg),
    test_bthome_mass_pounds (74.86 lb)."""
    times = []
    for payload in [h("40 06 5E 1F"), h("40 07 3E 1D")]:
        bthome_advertisement(capture, "TEST DEVICE", payload)
        times.append(capture.at())
        capture.advance(1000)
    device = device_json(name="TEST DEVICE", localIdentifier=BTHOME_ADDRESS)
    return [
        sample("BodyMass", 80.3, "kg", times[0], source=BTHOME, device=device, metadata=metadata_json()),
        sample("BodyMass", 74.86, "lb", times[1], source=BTHOME, device=device, metadata=metadata_json()),
    ]


def bthome_temperature_case(capture):
    """bthome-ble tests/test_parser_v2.py: test_bthome_temperature_humidity (25.06 °C),
    test_bthome_packet_id_temperature_humidity_battery (23.97 °C; sent twice, the repeat is
    dropped), test_bthome_double_temperature (25.06 and 25.11 °C)."""
    payloads = [
        h("40 02 CA 09 03 BF 13"),
        h("40 00 09 01 5D 02 5D 09 03 B7 18"),
        h("40 00 09 01 5D 02 5D 09 03 B7 18"),
        h("40 02 CA 09 02 CF 09"),
    ]
    times = []
    for payload in payloads:
        bthome_advertisement(capture, "ATC_8D18B2", payload)
        times.append(capture.at())
        capture.advance(1000)
    device = device_json(name="ATC_8D18B2", localIdentifier=BTHOME_ADDRESS)
    ambient = "IngestQuantityTypeIdentifierAmbientTemperature"
    return [
        sample(ambient, 25.06, "degC", times[0], source=BTHOME, device=device, metadata=metadata_json()),
        sample(ambient, 23.97, "degC", times[1], source=BTHOME, device=device, metadata=metadata_json()),
        sample(ambient, 25.06, "degC", times[3], source=BTHOME, device=device, metadata=metadata_json()),
        sample(ambient, 25.11, "degC", times[3], source=BTHOME, device=device, metadata=metadata_json()),
    ]


def bad_bthome_case(capture):
    """bthome-ble tests/test_parser_v2.py: test_bthome_wrong_object_id, test_bthome_battery_wrong_object_id_humidity,
    test_has_incorrect_version; and the 25.06 °C packet cut inside its temperature (synthetic)."""
    payloads = [
        h("40 FE CA 09"),
        h("40 01 5D FE 5D 09 03 B7 18"),
        h("E1 02 00 0C 04 04 13 8A 01"),
        h("40 02 CA"),
    ]
    for payload in payloads:
        bthome_advertisement(capture, "ATC_8D18B2", payload)
        capture.advance(1000)
    prefix = BTHOME + ": "
    return [
        prefix + "unknown-object: %s: unknown object id 0xfe at offset 1 (its length is unknown): 40 fe ca 09"
        % BTHOME_ADDRESS,
        prefix + "unknown-object: %s: unknown object id 0xfe at offset 3 (its length is unknown): "
        "40 01 5d fe 5d 09 03 b7 18" % BTHOME_ADDRESS,
        prefix + "unsupported-version: %s: device info 0xe1 at offset 0 names BTHome version 7, not 2: "
        "e1 02 00 0c 04 04 13 8a 01" % BTHOME_ADDRESS,
        prefix + "truncated-object: %s: object 0x02 at offset 1 needs 2 value bytes, 1 remain: 40 02 ca"
        % BTHOME_ADDRESS,
    ]


# MARK: - Catalogue

FOLDERS = {
    GATT: [
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
        Case("pulse-oximeter", pulse_oximeter_case, fragmented=True),
        Case("bad-pulse-oximeter", bad_pulse_oximeter_case),
        Case("bad-acl-lengths", bad_acl_lengths_case),
    ],
    XIAOMI: [
        Case("mi-scale-v1", mi_scale_v1_case),
        Case("mi-scale-v2", mi_scale_v2_case),
        Case("bad-mi-scale", bad_mi_scale_case),
    ],
    BTHOME: [
        Case("bthome-mass", bthome_mass_case),
        Case("bthome-temperature", bthome_temperature_case),
        Case("bad-bthome", bad_bthome_case),
    ],
}


def main():
    for adapter, cases in FOLDERS.items():
        folder = os.path.join(OUT, adapter)
        os.makedirs(folder, exist_ok=True)
        for case in cases:
            write_case(folder, case)
        print("%s: %d cases" % (adapter, len(cases)), file=sys.stderr)


if __name__ == "__main__":
    main()
