#!/usr/bin/env python3
"""An emulated Bluetooth LE health device for the VM tests: an ATT server on a kernel L2CAP LE
socket (fixed channel 4) bound to one local controller, standard library only (no bluetoothd).

Profiles (any combination, --profiles heart-rate,weight,thermometer,blood-pressure):
  heart-rate      0x180D: Heart Rate Measurement 0x2A37 notified every second (--bpm),
                  Body Sensor Location 0x2A38 = chest
  weight          0x181D: Weight Measurement 0x2A9D indicated once (--kg, SI, 0.005 kg resolution)
  thermometer     0x1809: Temperature Measurement 0x2A1C indicated once (--celsius, FLOAT),
                  Temperature Type 0x2A1D = body (general)
  blood-pressure  0x1810: Blood Pressure Measurement 0x2A35 indicated once
                  (--systolic/--diastolic mmHg, with a pulse rate --pulse)
plus Generic Access and Device Information. Every exchange is logged (one line per PDU) so a
scenario can assert on what the daemon asked for. The server accepts connections one after the
other until killed.
"""
import argparse
import ctypes
import os
import select
import socket
import struct
import sys
import time

AF_BLUETOOTH = 31
BTPROTO_L2CAP = 0
ATT_FIXED_CHANNEL = 4
BDADDR_LE_PUBLIC = 1
PRIMARY_SERVICE = 0x2800
CHARACTERISTIC = 0x2803
CCCD = 0x2902
READ, NOTIFY, INDICATE = 0x02, 0x10, 0x20
SERVER_MTU = 185

# ATT opcodes
ERROR_RSP, MTU_REQ, MTU_RSP = 0x01, 0x02, 0x03
FIND_INFO_REQ, FIND_INFO_RSP = 0x04, 0x05
FIND_BY_TYPE_REQ, FIND_BY_TYPE_RSP = 0x06, 0x07
READ_BY_TYPE_REQ, READ_BY_TYPE_RSP = 0x08, 0x09
READ_REQ, READ_BLOB_REQ = 0x0A, 0x0C
READ_BY_GROUP_REQ, READ_BY_GROUP_RSP = 0x10, 0x11
WRITE_REQ, WRITE_RSP, WRITE_CMD = 0x12, 0x13, 0x52
NOTIFICATION, INDICATION, CONFIRMATION = 0x1B, 0x1D, 0x1E
INVALID_HANDLE, NOT_SUPPORTED, NOT_FOUND, UNSUPPORTED_GROUP = 0x01, 0x06, 0x0A, 0x10


def log(*parts):
    print("[peripheral]", *parts, flush=True)


def le16(value):
    return struct.pack("<H", value)


def sfloat(mantissa, exponent=0):
    """IEEE-11073 16-bit SFLOAT."""
    return le16(((exponent & 0xF) << 12) | (mantissa & 0x0FFF))


def float32(mantissa, exponent):
    """IEEE-11073 32-bit FLOAT."""
    return struct.pack("<I", ((exponent & 0xFF) << 24) | (mantissa & 0xFFFFFF))


class Attribute:
    def __init__(self, handle, kind, value):
        self.handle, self.kind, self.value = handle, kind, value


class Database:
    """The attribute table: services, characteristic declarations, values, CCCDs."""

    def __init__(self):
        self.attributes = []
        self.services = []  # [start, end, uuid]
        self.pushed = {}  # value handle -> (uuid, "notify"|"indicate")

    def _add(self, kind, value):
        attribute = Attribute(len(self.attributes) + 1, kind, value)
        self.attributes.append(attribute)
        if self.services:
            self.services[-1][1] = attribute.handle
        return attribute

    def service(self, uuid):
        attribute = self._add(PRIMARY_SERVICE, le16(uuid))
        self.services.append([attribute.handle, attribute.handle, uuid])

    def characteristic(self, uuid, properties, value):
        declaration = self._add(CHARACTERISTIC, b"")
        attribute = self._add(uuid, value)
        declaration.value = bytes([properties]) + le16(attribute.handle) + le16(uuid)
        if properties & (NOTIFY | INDICATE):
            self._add(CCCD, b"\x00\x00")
            self.pushed[attribute.handle] = (uuid, "indicate" if properties & INDICATE else "notify")
        return attribute.handle

    def get(self, handle):
        if 1 <= handle <= len(self.attributes):
            return self.attributes[handle - 1]
        return None

    def cccd(self, value_handle):
        return self.get(value_handle + 1)


def build_database(arguments):
    database = Database()
    database.service(0x1800)
    database.characteristic(0x2A00, READ, arguments.name.encode())
    database.characteristic(0x2A01, READ, le16(0))
    database.service(0x180A)
    database.characteristic(0x2A29, READ, b"ingestd VM tests")
    database.characteristic(0x2A24, READ, arguments.name.encode())
    database.characteristic(0x2A25, READ, arguments.serial.encode())
    measurements = {}  # value handle -> bytes sent once (indications) or repeatedly (notifications)
    profiles = arguments.profiles.split(",")
    if "heart-rate" in profiles:
        database.service(0x180D)
        handle = database.characteristic(0x2A37, NOTIFY, bytes([0x00, arguments.bpm]))
        measurements[handle] = bytes([0x00, arguments.bpm])  # flags 0: 8-bit rate
        database.characteristic(0x2A38, READ, bytes([0x01]))  # chest
    if "weight" in profiles:
        database.service(0x181D)
        database.characteristic(0x2A9E, READ, struct.pack("<I", 0))
        value = bytes([0x00]) + le16(round(arguments.kg / 0.005))  # flags 0: SI, no time stamp
        measurements[database.characteristic(0x2A9D, INDICATE, b"")] = value
    if "thermometer" in profiles:
        database.service(0x1809)
        value = bytes([0x00]) + float32(round(arguments.celsius * 10), -1)  # flags 0: Celsius
        measurements[database.characteristic(0x2A1C, INDICATE, b"")] = value
        database.characteristic(0x2A1D, READ, bytes([0x02]))  # body (general)
    if "blood-pressure" in profiles:
        database.service(0x1810)
        mean = round((arguments.systolic + 2 * arguments.diastolic) / 3)
        value = (bytes([0x04]) + sfloat(arguments.systolic) + sfloat(arguments.diastolic) + sfloat(mean)
                 + sfloat(arguments.pulse))  # flags: mmHg, pulse rate present
        measurements[database.characteristic(0x2A35, INDICATE, b"")] = value
        database.characteristic(0x2A49, READ, le16(0))
    return database, measurements


def error(opcode, handle, code):
    return bytes([ERROR_RSP, opcode]) + le16(handle) + bytes([code])


def parse_range(pdu):
    if len(pdu) < 5:
        return None
    start, end = struct.unpack("<HH", pdu[1:5])
    if start == 0 or start > end:
        return None
    return start, end


def answer(database, pdu, mtu):
    """The response to one request (None for commands and confirmations), and the new MTU."""
    opcode = pdu[0]
    if opcode == MTU_REQ and len(pdu) >= 3:
        client_mtu = struct.unpack("<H", pdu[1:3])[0]
        return bytes([MTU_RSP]) + le16(SERVER_MTU), max(23, min(client_mtu, SERVER_MTU))
    if opcode in (READ_BY_GROUP_REQ, READ_BY_TYPE_REQ, FIND_INFO_REQ, FIND_BY_TYPE_REQ):
        bounds = parse_range(pdu)
        if bounds is None:
            return error(opcode, 0, 0x01), mtu
        start, end = bounds
        if opcode == READ_BY_GROUP_REQ:
            if pdu[5:7] != le16(PRIMARY_SERVICE):
                return error(opcode, start, UNSUPPORTED_GROUP), mtu
            body = b""
            for first, last, uuid in database.services:
                if start <= first <= end and len(body) + 6 <= mtu - 2:
                    body += le16(first) + le16(last) + le16(uuid)
            return (bytes([READ_BY_GROUP_RSP, 6]) + body if body else error(opcode, start, NOT_FOUND)), mtu
        if opcode == READ_BY_TYPE_REQ:
            if len(pdu) != 7:
                return error(opcode, start, NOT_FOUND), mtu  # 128-bit types: none here
            kind = struct.unpack("<H", pdu[5:7])[0]
            found = [a for a in database.attributes if start <= a.handle <= end and a.kind == kind]
            if not found:
                return error(opcode, start, NOT_FOUND), mtu
            length = 2 + len(found[0].value)
            body = b""
            for attribute in found:
                if 2 + len(attribute.value) != length or len(body) + length > mtu - 2:
                    break
                body += le16(attribute.handle) + attribute.value
            return bytes([READ_BY_TYPE_RSP, length]) + body, mtu
        if opcode == FIND_INFO_REQ:
            body = b""
            for attribute in database.attributes:
                if start <= attribute.handle <= end and len(body) + 4 <= mtu - 2:
                    body += le16(attribute.handle) + le16(attribute.kind)
            return (bytes([FIND_INFO_RSP, 0x01]) + body if body else error(opcode, start, NOT_FOUND)), mtu
        body = b""
        if pdu[5:7] == le16(PRIMARY_SERVICE):
            for first, last, uuid in database.services:
                if start <= first <= end and le16(uuid) == pdu[7:]:
                    body += le16(first) + le16(last)
        return (bytes([FIND_BY_TYPE_RSP]) + body if body else error(opcode, start, NOT_FOUND)), mtu
    if opcode in (READ_REQ, READ_BLOB_REQ) and len(pdu) >= 3:
        handle = struct.unpack("<H", pdu[1:3])[0]
        offset = struct.unpack("<H", pdu[3:5])[0] if opcode == READ_BLOB_REQ and len(pdu) >= 5 else 0
        attribute = database.get(handle)
        if attribute is None:
            return error(opcode, handle, INVALID_HANDLE), mtu
        return bytes([opcode + 1]) + attribute.value[offset:offset + mtu - 1], mtu
    if opcode in (WRITE_REQ, WRITE_CMD) and len(pdu) >= 3:
        handle = struct.unpack("<H", pdu[1:3])[0]
        attribute = database.get(handle)
        if attribute is not None:
            attribute.value = bytes(pdu[3:])
            log("write 0x%04x = %s" % (handle, attribute.value.hex()))
        if opcode == WRITE_CMD:
            return None, mtu
        return (bytes([WRITE_RSP]) if attribute else error(opcode, handle, INVALID_HANDLE)), mtu
    if opcode == CONFIRMATION:
        log("indication confirmed")
        return None, mtu
    if opcode & 0x40:
        return None, mtu  # other commands need no answer
    return error(opcode, 0, NOT_SUPPORTED), mtu


def serve(connection, database, measurements):
    """One connection: answers requests, notifies the heart rate every second, indicates each
    stored measurement once its CCCD asks for indications (one outstanding at a time)."""
    mtu = 23
    sent_once = set()
    awaiting_confirmation = False
    last_notification = 0.0
    while True:
        readable, _, _ = select.select([connection], [], [], 0.25)
        if readable:
            try:
                pdu = connection.recv(SERVER_MTU)
            except OSError as failure:
                log("link ended:", failure)
                return
            if not pdu:
                log("disconnected")
                return
            log("rx", pdu.hex())
            if pdu[0] == CONFIRMATION:
                awaiting_confirmation = False
            response, mtu = answer(database, pdu, mtu)
            if response is not None:
                connection.send(response)
        now = time.monotonic()
        for handle, value in measurements.items():
            uuid, mode = database.pushed[handle]
            enabled = database.cccd(handle).value[:1]
            if mode == "notify" and enabled == b"\x01" and now - last_notification >= 1.0:
                connection.send(bytes([NOTIFICATION]) + le16(handle) + value)
                last_notification = now
                log("notified 0x%04X" % uuid)
            elif (mode == "indicate" and enabled == b"\x02" and handle not in sent_once
                  and not awaiting_confirmation):
                connection.send(bytes([INDICATION]) + le16(handle) + value)
                sent_once.add(handle)
                awaiting_confirmation = True
                log("indicated 0x%04X" % uuid)


def listen(address):
    server = socket.socket(AF_BLUETOOTH, socket.SOCK_SEQPACKET, BTPROTO_L2CAP)
    # struct sockaddr_l2: family, psm, bdaddr (little-endian), cid, bdaddr_type (+ padding).
    bdaddr = bytes(int(part, 16) for part in reversed(address.split(":")))
    raw = struct.pack("<HH6sHB", AF_BLUETOOTH, 0, bdaddr, ATT_FIXED_CHANNEL, BDADDR_LE_PUBLIC) + b"\0"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.bind(server.fileno(), ctypes.create_string_buffer(raw, len(raw)), len(raw)) != 0:
        number = ctypes.get_errno()
        sys.exit(f"[peripheral] binding the ATT channel on {address} failed: {os.strerror(number)}")
    server.listen(2)
    return server


def main():
    parser = argparse.ArgumentParser(description="emulated BLE health peripheral (ATT server)")
    parser.add_argument("--address", required=True, help="bdaddr of the local controller to serve on")
    parser.add_argument("--profiles", default="heart-rate,weight")
    parser.add_argument("--name", default="VM-Sensor")
    parser.add_argument("--serial", default="VM0001")
    parser.add_argument("--bpm", type=int, default=72)
    parser.add_argument("--kg", type=float, default=70.5)
    parser.add_argument("--celsius", type=float, default=37.2)
    parser.add_argument("--systolic", type=int, default=120)
    parser.add_argument("--diastolic", type=int, default=80)
    parser.add_argument("--pulse", type=int, default=66)
    arguments = parser.parse_args()
    database, measurements = build_database(arguments)
    server = listen(arguments.address)
    log("serving %s on %s: services %s" % (arguments.name, arguments.address,
                                          " ".join("0x%04X" % s[2] for s in database.services)))
    while True:
        connection, peer = server.accept()
        log("connection from", peer)
        serve(connection, database, measurements)
        connection.close()
        for handle in measurements:
            database.cccd(handle).value = b"\x00\x00"


if __name__ == "__main__":
    main()
