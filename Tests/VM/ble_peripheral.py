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
  glucose         0x1808: a meter with stored records 1..--records; the Record Access Control
                  Point 0x2A52 (write, indicate) answers Report Stored Records (all, or sequence
                  number >= N) with one Glucose Measurement 0x2A18 notification per record and
                  its response indication. SIGUSR1 adds --add-on-signal new records (readings
                  taken between two connections). Record N: (95 + N) mg/dL at
                  2026-11-30 08:00 + N minutes.
  dsd6            the DS-D6 band's vendor service 0x190A: AT commands written to 0x0001 (lines
                  ending CR LF), replies notified on 0x0002 in 20-byte pieces: AT+TOPACE=0
                  (--steps), AT+TIMEZONE, AT+SN (--serial), AT+BATT, AT+DT=... (echoed).
  qn              a QN-protocol scale (ES-30M dialect) on its vendor service 0xFFF0: frames
                  notified on 0xFFF1, written to 0xFFF2. Once 0xFFF1 is subscribed it sends its
                  information frame (0x12); it answers the unit (0x13) with ready (0x14), the clock
                  (0x20) with its configuration request (0x21), the start (0x22) with two settling
                  frames and the stable frame of --kg with the resistance --ohm (0x10), and logs
                  the acknowledgement (0x1F).
plus Generic Access and Device Information. Every exchange is logged (one line per PDU) so a
scenario can assert on what the daemon asked for. The server accepts connections one after the
other until killed.
"""
import argparse
import ctypes
import os
import select
import signal
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
    responders = {}  # value handle written -> function(value) -> [(handle, bytes, indicate)]
    if "glucose" in profiles:
        database.service(0x1808)
        measurement = database.characteristic(0x2A18, NOTIFY, b"")
        database.characteristic(0x2A51, READ, le16(0))
        control_point = database.characteristic(0x2A52, 0x08 | INDICATE, b"")
        meter = GlucoseMeter(arguments.records, arguments.add_on_signal, measurement, control_point)
        responders[control_point] = meter.respond
    if "dsd6" in profiles:
        database.service(0x190A)
        reply = database.characteristic(0x0002, NOTIFY, b"")
        command = database.characteristic(0x0001, 0x04 | 0x08, b"")
        band = Band(arguments.steps, arguments.serial, reply)
        responders[command] = band.respond
    if "qn" in profiles:
        database.service(0xFFF0)
        frames = database.characteristic(0xFFF1, NOTIFY, b"")
        command = database.characteristic(0xFFF2, 0x04 | 0x08, b"")
        scale = QNScale(round(arguments.kg * 10), arguments.ohm, frames)
        responders[command] = scale.respond
        # A write to the CCCD of 0xFFF1 (its handle follows the value's) is the subscription.
        responders[frames + 1] = scale.subscribed
    return database, measurements, responders


class GlucoseMeter:
    """Numbered stored records; RACP Report Stored Records (op 0x01) with operator all (0x01) or
    greater than or equal to (0x03, filter type 0x01: sequence number)."""

    def __init__(self, records, added_on_signal, measurement, control_point):
        self.records = list(range(1, records + 1))
        self.measurement, self.control_point = measurement, control_point
        self.added_on_signal = added_on_signal
        signal.signal(signal.SIGUSR1, lambda *_: self.add(self.added_on_signal))

    def add(self, count):
        following = (self.records[-1] if self.records else 0) + 1
        self.records += list(range(following, following + count))
        log("records now 1..%d" % self.records[-1])

    @staticmethod
    def record(sequence):
        """Flags 0x02 (type and sample location present, kg/L), sequence, base time, concentration
        (95 + sequence) x 10^-5 kg/L = mg/dL, capillary whole blood from a finger."""
        minutes = sequence
        mantissa = (95 + minutes) & 0x0FFF
        return (bytes([0x02]) + le16(sequence) + le16(2026) + bytes([11, 30, 8 + minutes // 60, minutes % 60, 0])
                + sfloat(mantissa, -5) + bytes([0x11]))

    def respond(self, value):
        log("racp request %s" % value.hex())
        if value == b"\x01\x01":
            selected = list(self.records)
        elif len(value) == 5 and value[:3] == b"\x01\x03\x01":
            first = struct.unpack("<H", value[3:5])[0]
            selected = [r for r in self.records if r >= first]
        else:
            return [(self.control_point, bytes([0x06, 0x00, value[:1][0] if value else 0, 0x02]), True)]
        log("racp: reporting %d record(s)" % len(selected))
        replies = [(self.measurement, self.record(r), False) for r in selected]
        replies.append((self.control_point, bytes([0x06, 0x00, 0x01, 0x01 if selected else 0x06]), True))
        return replies


class Band:
    """The DS-D6's AT command responder."""

    def __init__(self, steps, serial, reply):
        self.steps, self.serial, self.reply = steps, serial, reply
        self.pending = b""

    def respond(self, value):
        self.pending = (self.pending + value)[-256:]
        replies = []
        while b"\n" in self.pending:
            line, _, self.pending = self.pending.partition(b"\n")
            command = line.rstrip(b"\r").decode(errors="replace")
            log("band command %s" % command)
            if command == "AT+TOPACE=0":
                text = "AT+TOPACE:%d" % self.steps
            elif command == "AT+TIMEZONE":
                text = "AT+TIMEZONE:3600"
            elif command == "AT+SN":
                text = "AT+SN:%s" % self.serial
            elif command == "AT+BATT":
                text = "AT+BATT:80"
            elif command.startswith("AT+DT="):
                text = "AT+DT:" + command[6:]
            else:
                text = "AT+ERR"
            data = (text + "\r\n").encode()
            replies += [(self.reply, data[i:i + 20], False) for i in range(0, len(data), 20)]
        return replies


class QNScale:
    """The QN ES-30M dialect's answers (Plugins/QNGATTScale/README.md): every frame ends with the
    low byte of the sum of the bytes before it; weights in tenths of a kilogram, big-endian."""

    def __init__(self, tenths, ohm, frames):
        self.tenths, self.ohm, self.frames = tenths, ohm, frames

    @staticmethod
    def sealed(body):
        return bytes(body) + bytes([sum(body) & 0xFF])

    def weight(self, state, tenths, ohm):
        second = max(ohm - 2, 0) if ohm else 0
        return self.sealed([0x10, 0x0E, 0xFF, 0x01, state, tenths >> 8, tenths & 0xFF, ohm >> 8, ohm & 0xFF,
                            second >> 8, second & 0xFF, 0x00, 0x33])

    def subscribed(self, value):
        if value[:1] != b"\x01":
            return []
        log("qn subscribed: sending information")
        return [(self.frames, self.sealed([0x12, 0x0C, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0]), False)]

    def respond(self, value):
        log("qn command %s" % value.hex())
        opcode = value[:1]
        if opcode == b"\x13":
            return [(self.frames, bytes.fromhex("140bff000001000000001f"), False)]
        if opcode == b"\x20":
            return [(self.frames, bytes.fromhex("2105ff0126"), False)]
        if opcode == b"\x22":
            return [(self.frames, self.weight(0, self.tenths - 23, 0), False),
                    (self.frames, self.weight(0, self.tenths - 4, 0), False),
                    (self.frames, self.weight(2, self.tenths, self.ohm), False)]
        if opcode == b"\x1f":
            log("qn weighing acknowledged")
        return []


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


def serve(connection, database, measurements, responders):
    """One connection: answers requests, notifies the heart rate every second, indicates each
    stored measurement once its CCCD asks for indications (one outstanding at a time), and
    sends what a responder (glucose RACP, DS-D6 commands) gives for a write, in order, each
    only while its CCCD enables it (a client that did not subscribe gets nothing)."""
    mtu = 23
    sent_once = set()
    awaiting_confirmation = False
    last_notification = 0.0
    outbox = []  # (handle, value, indicate) from responders
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
            if pdu[0] in (WRITE_REQ, WRITE_CMD) and len(pdu) >= 3:
                handle = struct.unpack("<H", pdu[1:3])[0]
                if handle in responders:
                    outbox += responders[handle](bytes(pdu[3:]))
        while outbox and not (outbox[0][2] and awaiting_confirmation):
            handle, value, indicate = outbox.pop(0)
            enabled = database.cccd(handle).value[:1]
            if enabled != (b"\x02" if indicate else b"\x01"):
                log("not subscribed to 0x%04x: dropped %s" % (handle, value.hex()))
                continue
            connection.send(bytes([INDICATION if indicate else NOTIFICATION]) + le16(handle) + value[:mtu - 3])
            awaiting_confirmation = awaiting_confirmation or indicate
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
    parser.add_argument("--records", type=int, default=50, help="glucose: stored records 1..N")
    parser.add_argument("--add-on-signal", type=int, default=3, help="glucose: records SIGUSR1 adds")
    parser.add_argument("--steps", type=int, default=4321, help="dsd6: the band's step count")
    parser.add_argument("--ohm", type=int, default=512, help="qn: the resistance of the stable frame")
    arguments = parser.parse_args()
    database, measurements, responders = build_database(arguments)
    server = listen(arguments.address)
    log("serving %s on %s: services %s" % (arguments.name, arguments.address,
                                          " ".join("0x%04X" % s[2] for s in database.services)))
    while True:
        connection, peer = server.accept()
        log("connection from", peer)
        serve(connection, database, measurements, responders)
        connection.close()
        for handle in list(measurements) + list(database.pushed):
            database.cccd(handle).value = b"\x00\x00"


if __name__ == "__main__":
    main()
