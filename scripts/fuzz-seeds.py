#!/usr/bin/env python3
"""Seed corpora for the fuzz targets in Tests/Fuzz/, made from the adapter fixtures.

Usage: python3 scripts/fuzz-seeds.py OUTDIR   (writes OUTDIR/<target>/seed-*)
Standard library only. Each target's input format is described in its source file.
"""

import glob
import io
import json
import os
import struct
import sys
import zipfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPTURES = os.path.join(ROOT, "Tests", "AdapterTests", "Captures")
EPOCH_OFFSET = 0x00DCDDB30F2F8000

GATT_CHARACTERISTICS = [
    0x2A9D, 0x2A9C, 0x2A1C, 0x2A1E, 0x2A37, 0x2A53, 0x2A35, 0x2A36, 0x2A18, 0x2A34, 0x2A5E, 0x2A5F,
    0x2A1D, 0x2A38, 0x2A29, 0x2A24, 0x2A25, 0x2A27, 0x2A26, 0x2A28, 0x2A52,
]

UNITS = [
    "kg", "g", "lb", "st", "oz", "m", "cm", "in", "ft", "mi", "km", "count", "count/min", "count/s", "%",
    "degC", "degF", "K", "mmHg", "kPa", "cmAq", "atm", "mg/dL", "mmol<180.15588000005408>/L", "mol<180.1558800000541>",
    "kcal", "Cal", "kJ", "J", "kcal/(kg*hr)", "m/s", "m/s^2", "km/hr", "min", "hr", "d", "s", "ms", "L", "mL", "fl_oz_us",
    "IU", "dBASPL", "S", "mcS", "W", "V", "Hz", "lx", "ml/(kg*min)", "g/dL", "mg", "mcg", "ng", "(kg*m)/s^2", "m^-1",
]


def btsnoop_records(path):
    data = open(path, "rb").read()
    if data[:8] != b"btsnoop\0":
        return
    off = 16
    while off + 24 <= len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIq", data[off:off + 24])
        packet = data[off + 24:off + 24 + incl]
        if len(packet) < incl:
            return
        yield ts - EPOCH_OFFSET, flags, packet
        off += 24 + incl


def fixture_captures():
    return sorted(p for p in glob.glob(os.path.join(CAPTURES, "*", "*.btsnoop")))


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as file:
        file.write(data)


def pcap_from_btsnoop(path, link_type, nanoseconds=False, big_endian=False):
    order = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nanoseconds else 0xA1B2C3D4
    out = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, link_type)
    for ts, flags, packet in btsnoop_records(path):
        payload = (struct.pack(">I", flags & 1) + packet) if link_type == 201 else packet
        seconds, fraction = divmod(ts, 1_000_000)
        if nanoseconds:
            fraction *= 1000
        out += struct.pack(order + "IIII", seconds, fraction, len(payload), len(payload)) + payload
    return out


def pcapng_from_btsnoop(path):
    def block(block_type, body):
        body += b"\0" * (-len(body) % 4)
        length = 12 + len(body)
        return struct.pack("<II", block_type, length) + body + struct.pack("<I", length)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(0x00000001, struct.pack("<HHI", 201, 0, 65535))
    for ts, flags, packet in btsnoop_records(path):
        payload = struct.pack(">I", flags & 1) + packet
        out += block(0x00000006, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(payload), len(payload)) + payload)
    return out


def hci_stream(path):
    out = bytearray([1])  # time zone selector
    for ts, flags, packet in btsnoop_records(path):
        if not packet:
            continue
        h4, body = packet[0], packet[1:]
        out += bytes([h4, (flags & 1) | 0x04]) + struct.pack("<H", len(body)) + body
    return bytes(out)


def gatt_values(path):
    """(characteristic, kind, value) of the notifications and indications in a GATT fixture."""
    uuids = {}
    values = []
    for ts, flags, packet in btsnoop_records(path):
        if len(packet) < 10 or packet[0] != 0x02:
            continue
        header = int.from_bytes(packet[1:3], "little")
        if (header >> 12) & 3 == 1:
            continue  # continuation: the unfragmented twin has the same values
        l2len, cid = struct.unpack("<HH", packet[5:9])
        pdu = packet[9:9 + l2len]
        if cid != 4 or len(pdu) != l2len or not pdu:
            continue
        if pdu[0] == 0x09 and len(pdu) >= 2 and pdu[1] == 7:
            for i in range(2, len(pdu) - 6, 7):
                uuids[int.from_bytes(pdu[i + 3:i + 5], "little")] = int.from_bytes(pdu[i + 5:i + 7], "little")
        elif pdu[0] in (0x1B, 0x1D) and len(pdu) >= 3:
            handle = int.from_bytes(pdu[1:3], "little")
            values.append((uuids.get(handle, 0x2A9D), 0 if pdu[0] == 0x1B else 1, pdu[3:]))
    return values


def advertisement_service_data(path, uuid):
    """Service-data payloads of `uuid` in the advertising reports of a fixture."""
    payloads = []
    for ts, flags, packet in btsnoop_records(path):
        # H4 0x04, event 0x3E, length, subevent 0x02, reports, type, address type, address (6), data length
        if len(packet) < 15 or packet[0] != 0x04 or packet[1] != 0x3E or packet[3] != 0x02:
            continue
        data = packet[14:14 + packet[13]]
        i = 0
        while i + 1 < len(data) and data[i]:
            length, ad_type = data[i], data[i + 1]
            if ad_type == 0x16 and int.from_bytes(data[i + 2:i + 4], "little") == uuid:
                payloads.append(data[i + 4:i + 1 + length])
            i += 1 + length
    return payloads


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fuzz-seeds.py OUTDIR")
    out = sys.argv[1]
    captures = fixture_captures()
    real = sorted(glob.glob(os.path.join(CAPTURES, "unsupported", "*")))

    for index, path in enumerate(captures + [p for p in real if "btsnoop" in p]):
        write(os.path.join(out, "btsnoop"), "seed-%03d" % index, open(path, "rb").read())
    for index, path in enumerate(captures[:12]):
        write(os.path.join(out, "pcap"), "seed-%03d-h4phdr" % index, pcap_from_btsnoop(path, 201))
        write(os.path.join(out, "pcap"), "seed-%03d-h4-ns-be" % index, pcap_from_btsnoop(path, 187, True, True))
        write(os.path.join(out, "pcapng"), "seed-%03d" % index, pcapng_from_btsnoop(path))
    for path in real:
        if path.endswith(".pcapng"):
            write(os.path.join(out, "pcapng"), "seed-real", open(path, "rb").read())
    for index, path in enumerate(captures):
        write(os.path.join(out, "hci"), "seed-%03d" % index, hci_stream(path))

    gatt = os.path.join(out, "gatt")
    count = 0
    for path in glob.glob(os.path.join(CAPTURES, "gatt-health", "*.btsnoop")):
        if "-fragmented" in path:
            continue
        session = bytearray([1])
        for uuid, kind, value in gatt_values(path):
            selector = GATT_CHARACTERISTICS.index(uuid) if uuid in GATT_CHARACTERISTICS else 0
            record = bytes([selector | kind << 6, 1, len(value)]) + value
            session += record
            write(gatt, "seed-value-%03d" % count, bytes([0]) + record)
            count += 1
        write(gatt, "seed-session-%s" % os.path.basename(path)[:-8], bytes(session))

    for folder, target, uuids in [("xiaomi-scale", "xiaomi", [(0x181D, 0), (0x181B, 2)]),
                                  ("xiaomi-mibeacon", "mibeacon", [(0xFE95, 0)]),
                                  ("bthome", "bthome", [(0xFCD2, 0)])]:
        for path in glob.glob(os.path.join(CAPTURES, folder, "*.btsnoop")):
            session = bytearray([1])
            for uuid, mode in uuids:
                for payload in advertisement_service_data(path, uuid):
                    session += bytes([mode, 1, len(payload)]) + payload
            write(os.path.join(out, target), "seed-%s" % os.path.basename(path)[:-8], bytes(session))

    for index, path in enumerate(glob.glob(os.path.join(CAPTURES, "*", "*.expected.jsonl"))):
        write(os.path.join(out, "records"), "seed-%03d" % index, open(path, "rb").read())
    write(os.path.join(out, "records"), "seed-short",
          b'{"type":"stepCount","value":12,"unit":"count","start":"2026-01-01T08:00:00+01:00",'
          b'"end":"2026-01-01T08:01:00.5Z","source":"pod","metadata":{"HKWasUserEntered":true}}\n')
    for index, unit in enumerate(UNITS):
        write(os.path.join(out, "units"), "seed-%03d" % index, unit.encode())
    # A plugin's stdout: log, record and done lines (only the declared types of the fuzz target).
    plugin = os.path.join(out, "plugin-output")
    write(plugin, "seed-log", b'{"log":{"level":"info","message":"hello"}}\n{"done":true}\n')
    write(plugin, "seed-sample",
          b'{"type":"heartRate","value":72,"unit":"count/min","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}\n')
    write(plugin, "seed-correlation",
          b'{"type":"bloodPressure","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","objects":['
          b'{"type":"bloodPressureSystolic","value":120,"unit":"mmHg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"},'
          b'{"type":"bloodPressureDiastolic","value":80,"unit":"mmHg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}]}\n')
    write(plugin, "seed-mass",
          b'{"type":"bodyMass","value":160.5,"unit":"lb","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z",'
          b'"metadata":{"HKMetadataKeySyncIdentifier":"a","HKMetadataKeySyncVersion":2}}\n{"type":"stepCount","value":1e999}\n')
    # The redaction layer: a secret, NUL, a text echoing it (URLs, headers, conninfo).
    redaction = os.path.join(out, "redaction")
    write(redaction, "seed-header", b"s3cr3t-t0ken\x00HTTP 500: echo Authorization: Bearer s3cr3t-t0ken")
    write(redaction, "seed-url", b"hunter2!\x00postgresql://u:hunter2%21@db/x?password=hunter2!&token=abc sslmode=require")
    write(redaction, "seed-conninfo", b"p\xc3\xa4ss\x00host=db password=p\xc3\xa4ss user=me mqtts://a:b@c:8883/t")
    # The MQTT topic builder: two names separated by NUL.
    topics = os.path.join(out, "mqtt-topics")
    write(topics, "seed-simple", b"alice\x00raspberrypi")
    write(topics, "seed-wildcards", b"a+b\x00a#b")
    write(topics, "seed-unicode", "Zo\u00eb\x00Zo\u00e9".encode())
    write(topics, "seed-cyrillic", "\u0418\u0432\u0430\u043d\x00\u041e\u043b\u0435\u0433".encode())
    write(topics, "seed-space", b"x y\x00a/b")
    # The archive reader (fuzz-zip): byte 0 picks the shape (see Tests/Fuzz/ZipEntries).
    zips = os.path.join(out, "zip")
    document = (b'<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_US">\n'
                b' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" '
                b'startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:20:04 +0200" value="12"/>\n'
                b'</HealthData>\n')
    for name, method in (("deflated", zipfile.ZIP_DEFLATED), ("stored", zipfile.ZIP_STORED)):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", method) as archive:
            archive.writestr("apple_health_export/export.xml", document)
            archive.writestr("apple_health_export/export_cda.xml", b"<ClinicalDocument/>")
        data = buffer.getvalue()
        write(zips, "seed-%s" % name, b"\x00" + data)
        write(zips, "seed-%s-stub" % name, b"\x00" + b"MZ" + bytes(62) + data)
        flipped = bytearray(data)
        flipped[60] ^= 0x01
        write(zips, "seed-%s-flipped" % name, b"\x00" + bytes(flipped))
    crc = zlib.crc32(document)
    header = struct.pack("<II", crc, len(document))
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    write(zips, "seed-entry-deflated", b"\x03" + header + squeeze.compress(document) + squeeze.flush())
    write(zips, "seed-entry-stored", b"\x01" + header + document)
    write(zips, "seed-entry-wrong-crc", b"\x01" + struct.pack("<II", crc ^ 1, len(document)) + document)
    print("seeds in %s" % out, file=sys.stderr)


if __name__ == "__main__":
    main()
