#!/usr/bin/env python3
"""What the BLE adapters' capture generators share: btsnoop writing, AD structures, expected records.

Each adapter's generator sits beside its captures, `Tests/AdapterTests/Captures/<adapter-id>/make-captures.py`,
imports this module and calls `generate(__file__, CASES)`. Python 3 standard library only.

For each case a generator writes
  <case>.btsnoop          btsnoop v1, datalink 1002 (HCI UART / H4), fixed timestamps
  <case>.expected.jsonl   the records `ingestd decode --json --tz Europe/Berlin` must print,
                          written here from the published values (not from ingestd's output);
                          `uuid` is a placeholder, the tests ignore it
and for each malformed case
  bad-<case>.btsnoop
  bad-<case>.expected-error   one line per rejection, in order: `<adapter>: <reason>: <detail>`,
                              then `trace: <malformation> <count>` for packets the HCI/ATT
                              reconstruction could not use
A case marked `fragmented` also gets a `-fragmented` twin in which every L2CAP frame travels in
several ACL fragments (start + continuation packets); its expected output is the same.
The ORIGIN in every adapter folder names where each byte sequence was published.
"""

import json
import os
import struct
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

BTSNOOP_EPOCH_OFFSET = 0x00DCDDB30F2F8000  # microseconds from 0000-01-01 to 1970-01-01
ZONE_NAME = "Europe/Berlin"
ZONE = ZoneInfo(ZONE_NAME)
UUID_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"
# Capture clock: every case starts at this instant (after every device time stamp used below).
CAPTURE_START = datetime(2025, 1, 15, 9, 0, 0, tzinfo=timezone.utc)
FRAGMENT_SIZES = [5, 3, 1, 4]  # bytes per ACL fragment, cycled


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

    def raw_event(self, packet):
        """An HCI event as a published test gives it: `04` (H4 event), code, length, parameters."""
        assert packet[0] == 0x04 and packet[2] == len(packet) - 3, packet.hex()
        self.add("received", 0x04, packet[1:])

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


def manufacturer_ad(company, payload):
    """Manufacturer-specific data: the company id (little-endian), then the vendor's bytes."""
    return ad(0xFF, le16(company) + payload)


def manufacturer_raw_ad(payload):
    """Manufacturer-specific data given whole, company id bytes included (devices such as Inkbird's
    put a reading where the company id belongs)."""
    return ad(0xFF, payload)


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


def uuid_bytes(uuid):
    """A 16-bit UUID (int) as 2 little-endian bytes; a 128-bit one (text, 8-4-4-4-12) as 16."""
    if isinstance(uuid, int):
        return le16(uuid)
    return bytes.fromhex(uuid.replace("-", ""))[::-1]


class Characteristic:
    def __init__(self, uuid, properties, cccd_value=None):
        self.uuid = uuid  # int (16-bit) or text (128-bit)
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
    return gatt_services_session(capture, address, name, [(service, characteristics)], values, advertise)


def gatt_services_session(capture, address, name, services, values, advertise=True):
    """`gatt_session` with several services [(uuid, characteristics)], all advertised, discovered in order."""
    att = lambda direction, pdu: capture.acl(direction, HANDLE, pdu)
    if advertise:
        capture.advertising_report(address, flags_ad() + uuid16_list_ad(*[uuid for uuid, _ in services]) + name_ad(name))
        capture.advance(120)
    # LE Create Connection (0x200D) as the host sends it, then the controller's event.
    capture.command(0x200D, le16(0x0060) + le16(0x0030) + bytes([0x00, 0x00]) + address_bytes(address)
                    + bytes([0x00]) + le16(0x0018) + le16(0x0028) + le16(0x0000) + le16(0x01F4)
                    + le16(0x0000) + le16(0x0000))
    capture.advance(40)
    capture.connection_complete(HANDLE, address)
    capture.advance(60)

    # Handles: GAP 1-7, GATT 8-11, then the services one after the other from 0x000C.
    ranges = []
    service_start = 0x000C
    for uuid, service_characteristics in services:
        service_end = layout(service_start, service_characteristics)
        ranges.append((service_start, service_end, uuid, service_characteristics))
        service_start = service_end + 1
    # Primary services, three per response at ATT_MTU 23, then Attribute Not Found.
    entries = [(0x0001, 0x0007, 0x1800), (0x0008, 0x000B, 0x1801)] + [(start, end, uuid) for start, end, uuid, _ in ranges]
    # A response holds entries of one length only: 16-bit UUIDs three at a time, a 128-bit one alone.
    start = 0x0001
    while entries:
        wide = not isinstance(entries[0][2], int)
        batch = []
        while entries and len(batch) < (1 if wide else 3) and (not isinstance(entries[0][2], int)) == wide:
            batch.append(entries.pop(0))
        att("sent", bytes([0x10]) + le16(start) + le16(0xFFFF) + le16(0x2800))
        capture.advance(30)
        if wide:
            att("received", bytes([0x11, 0x14]) + b"".join(le16(a) + le16(b) + uuid_bytes(u) for a, b, u in batch))
        else:
            att("received", bytes([0x11, 0x06]) + b"".join(le16(a) + le16(b) + le16(u) for a, b, u in batch))
        capture.advance(30)
        start = batch[-1][1] + 1
    att("sent", bytes([0x10]) + le16(start) + le16(0xFFFF) + le16(0x2800))
    capture.advance(30)
    att("received", bytes([0x01, 0x10]) + le16(start) + bytes([0x0A]))
    capture.advance(30)

    # Characteristic declarations in each service, three per response at ATT_MTU 23.
    characteristics = []
    for service_start, service_end, _, service_characteristics in ranges:
        characteristics += service_characteristics
        start = service_start
        remaining = list(service_characteristics)
        while True:
            att("sent", bytes([0x08]) + le16(start) + le16(service_end) + le16(0x2803))
            capture.advance(30)
            if not remaining:
                att("received", bytes([0x01, 0x08]) + le16(start) + bytes([0x0A]))
                capture.advance(30)
                break
            # Entries of one length per response, as many as ATT_MTU 23 holds (three 16-bit, one 128-bit).
            entry_length = 5 + len(uuid_bytes(remaining[0].uuid))
            batch = []
            while remaining and len(batch) < 21 // entry_length and 5 + len(uuid_bytes(remaining[0].uuid)) == entry_length:
                batch.append(remaining.pop(0))
            pdu = bytes([0x09, entry_length])
            for characteristic in batch:
                pdu += le16(characteristic.declaration) + bytes([characteristic.properties])
                pdu += le16(characteristic.value_handle) + uuid_bytes(characteristic.uuid)
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
    # Each value comes a second after the one before, or after the milliseconds of a fourth entry.
    # A value may be a function of the moment it is sent (a device's clock read).
    for entry in values:
        characteristic, kind, value = entry[:3]
        capture.advance(entry[3] if len(entry) > 3 else 1000)
        if callable(value):
            value = value(capture.at())
        if kind == "indication":
            att("received", bytes([0x1D]) + le16(characteristic.value_handle) + value)
            received_times.append(capture.at())
            capture.advance(20)
            att("sent", bytes([0x1E]))
        elif kind == "notification":
            att("received", bytes([0x1B]) + le16(characteristic.value_handle) + value)
            received_times.append(capture.at())
        elif kind == "read":
            att("sent", bytes([0x0A]) + le16(characteristic.value_handle))
            capture.advance(20)
            att("received", bytes([0x0B]) + value)
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


# MARK: - Cases



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



def generate(generator_file, cases):
    """Writes every case of `cases` into the folder of `generator_file` (the adapter's capture folder)."""
    folder = os.path.dirname(os.path.abspath(generator_file))
    for case in cases:
        write_case(folder, case)
    print("%s: %d cases" % (os.path.basename(folder), len(cases)), file=sys.stderr)
