#!/usr/bin/env python3
"""Emulated USB health devices for the VM tests: the device side of a real USB link, made with the
kernel's gadget stack (dummy_hcd as the controller, a configfs gadget, one FunctionFS function
served from this program). The host side in the same VM is the real kernel USB stack and libusb.

  usb_gadget.py configure --kind KIND --gadget /sys/kernel/config/usb_gadget/NAME
  usb_gadget.py serve --kind KIND --ffs /dev/ffs-NAME --gadget ... [options]

Kinds:
  ant     Dynastream ANT USB2 stick 0fcf:1008 (vendor interface, bulk OUT/IN). Answers the ANT
          start-up; once the host opens Rx scan mode (or a channel) it relays three ANT+ sensors
          with extended data: a heart-rate strap (type 120, --bpm), a foot pod (type 124: one
          stride and 1.5 m per page) and a weight scale (type 119, --kg).
  omron   Omron HJ-720IT pedometer 0590:0028 (HID, interrupt IN/OUT, 8-byte reports). Answers
          each command with the input reports the vendor software received for the same command
          in a real session (--capture: a usbmon pcapng of the session, e.g.
          Tests/AdapterTests/Captures/omron-hj720it/pedometerLog1-session.pcapng);
          --unplug-at-day N unbinds the gadget (the device is pulled out) when day N is asked for.
  temper  TEMPer thermometer 0c45:7401 "TEMPerV1.4" (two HID interfaces; interface 1 answers the
          read command sent by SET_REPORT with --celsius on its interrupt IN endpoint).
Every exchange is logged, one line each, for the scenarios' assertions.
"""
import argparse
import os
import queue
import struct
import subprocess
import sys
import threading
import time

# FunctionFS (include/uapi/linux/usb/functionfs.h)
DESCRIPTORS_MAGIC_V2, STRINGS_MAGIC = 3, 2
HAS_FS_DESC, HAS_HS_DESC = 1, 2
EVENT_NAMES = {0: "BIND", 1: "UNBIND", 2: "ENABLE", 3: "DISABLE", 4: "SETUP", 5: "SUSPEND", 6: "RESUME"}
ENABLE, DISABLE, UNBIND, SETUP = 2, 3, 1, 4
EVENT_SIZE = 12
BULK, INTERRUPT = 2, 3


def log(*parts):
    print("[gadget]", *parts, flush=True)


def interface_descriptor(number, endpoints, interface_class, subclass=0, protocol=0):
    return struct.pack("<BBBBBBBBB", 9, 4, number, 0, endpoints, interface_class, subclass, protocol, 1)


def endpoint_descriptor(address, kind, max_packet, interval):
    return struct.pack("<BBBBHB", 7, 5, address, kind, max_packet, interval)


def hid_descriptor(report_length):
    return struct.pack("<BBHBBBH", 9, 0x21, 0x0110, 0, 1, 0x22, report_length)


class Device:
    """One emulated device: identity, descriptors (full and high speed), and its behaviour once
    the host configured it (`start` with the endpoint files, in descriptor order)."""
    vendor = product = 0
    manufacturer = product_name = serial = ""
    interface_name = "data"
    report_descriptors = {}  # interface -> HID report descriptor

    def __init__(self, arguments, gadget):
        self.arguments = arguments
        self.gadget = gadget
        self.stopped = threading.Event()

    def descriptors(self, high_speed):
        raise NotImplementedError

    def start(self, endpoint_paths):
        raise NotImplementedError

    def set_report(self, interface, value, data):
        log("SET_REPORT interface %d value 0x%04x: %s (ignored)" % (interface, value, data.hex()))

    def stop(self):
        self.stopped.set()

    def unplug(self):
        """Unbinds the gadget from the controller, as pulling the cable out would (from a separate
        process: the unbind waits for this function's endpoints to be released)."""
        log("unplugging")
        subprocess.Popen(["sh", "-c", f"echo '' > {self.gadget}/UDC"])


class ReportWriter:
    """Writes input reports to an IN endpoint in order, one at a time (each write completes when
    the host reads it); ends when the endpoint goes away."""

    def __init__(self, path, name):
        self.reports = queue.Queue()
        self.name = name
        self.file = os.open(path, os.O_WRONLY)
        threading.Thread(target=self._run, daemon=True).start()

    def send(self, data):
        self.reports.put(bytes(data))

    def drop_pending(self):
        """Forgets the reports not yet being written (the one in progress stays)."""
        while True:
            try:
                self.reports.get_nowait()
            except queue.Empty:
                return

    def _run(self):
        while True:
            data = self.reports.get()
            try:
                os.write(self.file, data)
            except OSError as failure:
                log(f"{self.name} closed: {failure}")
                os.close(self.file)  # the unbind waits for the function's files to be released
                return
            log(f"IN  {self.name} {data.hex()}")


# ------------------------------------------------------------------------------------------ ANT

def ant_frame(message_id, payload):
    body = bytes([0xA4, len(payload), message_id]) + bytes(payload)
    checksum = 0
    for byte in body:
        checksum ^= byte
    return body + bytes([checksum])


class AntStick(Device):
    vendor, product = 0x0FCF, 0x1008
    manufacturer, product_name, serial = "Dynastream Innovations", "ANT USBStick2", "VM-ANT-1"
    interface_name = "ANT USB Interface"

    def descriptors(self, high_speed):
        packet = 512 if high_speed else 64
        return [interface_descriptor(0, 2, 0xFF),
                endpoint_descriptor(0x01, BULK, packet, 0),
                endpoint_descriptor(0x81, BULK, packet, 0)]

    def start(self, endpoint_paths):
        self.stopped.clear()
        self.writer = ReportWriter(endpoint_paths[1], "ep 0x81")
        self.broadcasting = False
        threading.Thread(target=self._receive, args=(endpoint_paths[0],), daemon=True).start()

    def _receive(self, path):
        out = os.open(path, os.O_RDONLY)
        pending = b""
        while not self.stopped.is_set():
            try:
                chunk = os.read(out, 512)
            except OSError as failure:
                log("OUT endpoint closed:", failure)
                os.close(out)
                return
            pending += chunk
            # Frames: A4 len id payload checksum; anything before a sync byte is dropped.
            while True:
                start = pending.find(b"\xA4")
                if start < 0 or len(pending) < start + 4:
                    pending = pending[start:] if start >= 0 else b""
                    break
                length = pending[start + 1]
                end = start + 4 + length
                if len(pending) < end:
                    pending = pending[start:]
                    break
                self._answer(pending[start:end])
                pending = pending[end:]

    def _answer(self, frame):
        message_id, payload = frame[2], frame[3:-1]
        log("OUT ant 0x%02X %s" % (message_id, payload.hex()))
        if message_id == 0x4A:  # reset system -> startup message
            self.writer.send(ant_frame(0x6F, [0x20]))
            return
        if message_id == 0x4D and payload[1:2] == b"\x54":  # request capabilities
            self.writer.send(ant_frame(0x54, [8, 3, 0x00, 0xBA, 0x36, 0x00]))
            return
        channel = payload[0] if payload else 0
        self.writer.send(ant_frame(0x40, [channel, message_id, 0x00]))  # channel response: no error
        if message_id in (0x5B, 0x4B) and not self.broadcasting:
            self.broadcasting = True
            log("radio open: relaying the heart-rate strap, foot pod and scale")
            threading.Thread(target=self._broadcast, daemon=True).start()

    def _broadcast(self):
        bpm = self.arguments.bpm
        beat_time = beat_count = 0
        sdm_time = strides = distance_sixteenths = 0
        weight = round(self.arguments.kg * 100)
        tick = 0
        while not self.stopped.is_set():
            time.sleep(0.25)
            tick += 1
            # Heart-rate strap 4242: a new beat on every page.
            beat_time = (beat_time + round(1024 * 60 / bpm)) & 0xFFFF
            beat_count = (beat_count + 1) & 0xFF
            toggle = 0x80 if (tick // 4) % 2 else 0
            heart = [toggle | 0x00, 0xFF, 0xFF, 0xFF, beat_time & 0xFF, beat_time >> 8, beat_count, bpm]
            frames = [self._extended(heart, 4242, 120)]
            if tick % 2 == 0:
                # Foot pod 1717, page 1: one stride and 1.5 m (24/16 m) more on every page, 3 m/s.
                sdm_time += 100  # 1/200 s
                strides = (strides + 1) & 0xFF
                distance_sixteenths = (distance_sixteenths + 24) & 0xFFF
                foot = [0x01, sdm_time % 200, (sdm_time // 200) & 0xFF, distance_sixteenths >> 4,
                        ((distance_sixteenths & 0x0F) << 4) | 3, 0x00, strides, 0x00]
                frames.append(self._extended(foot, 1717, 124))
            if tick % 4 == 0:
                # Scale 3131, page 1: user profile 0xFFFF (none), capabilities 0, weight in 0.01 kg.
                scale = [0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, weight & 0xFF, weight >> 8]
                frames.append(self._extended(scale, 3131, 119))
            for frame in frames:
                self.writer.send(frame)

    @staticmethod
    def _extended(page, device_number, device_type):
        return ant_frame(0x4E, [0] + page + [0x80, device_number & 0xFF, device_number >> 8, device_type, 0x01])


# ---------------------------------------------------------------------------------------- Omron

def read_usbmon_pcapng(path):
    """(kind, transfer type, endpoint, data, setup) of each usbmon record of a pcapng capture
    (LINKTYPE_USB_LINUX_MMAPPED: a 64-byte header, then the data)."""
    records = []
    with open(path, "rb") as capture:
        data = capture.read()
    offset = 0
    while offset + 12 <= len(data):
        block_type, block_length = struct.unpack_from("<II", data, offset)
        if block_length < 12 or offset + block_length > len(data):
            sys.exit(f"[gadget] {path}: malformed pcapng block at offset {offset}")
        if block_type == 6 and block_length >= 28 + 64:  # enhanced packet block
            captured = struct.unpack_from("<I", data, offset + 20)[0]
            packet = data[offset + 28:offset + 28 + min(captured, block_length - 28)]
            header = struct.unpack_from("<QBBBBHBBqiiII8siiII", packet, 0)
            records.append((chr(header[1]), header[2], header[3], packet[64:], header[13]))
        offset += block_length
    return records


def report_payload(report):
    count = report[0] if report else 0
    return report[1:1 + min(count, 7)]


class OmronPedometer(Device):
    vendor, product = 0x0590, 0x0028
    manufacturer, product_name, serial = "OMRON HEALTHCARE", "HJ-720IT", ""
    interface_name = "Omron pedometer"

    def __init__(self, arguments, gadget):
        super().__init__(arguments, gadget)
        self.replies, self.report_descriptor = self._exchanges(arguments.capture)
        self.report_descriptors = {0: self.report_descriptor}
        log(f"{len(self.replies)} distinct requests with their logged answers from {arguments.capture}")

    @staticmethod
    def _exchanges(path):
        """request -> the input reports that answered it in the capture (first occurrence). A
        request is a SET_REPORT (("mode", data)) or a message of output reports (("message", bytes))."""
        replies = {}
        report_descriptor = b""
        current = None
        recording = False
        message = b""
        for kind, transfer, endpoint, data, setup in read_usbmon_pcapng(path):
            if transfer == 2 and kind == "C" and data and endpoint == 0x80 and data[:1] == b"\x06":
                report_descriptor = data  # HID report descriptors start with a usage page item
            if transfer == 2 and kind == "S" and setup[:2] == b"\x21\x09":
                current = ("mode", bytes(data))
                recording = current not in replies
                replies.setdefault(current, [])
            elif transfer == 1 and kind == "S" and not endpoint & 0x80 and data:
                payload = report_payload(data)
                message += payload
                if len(payload) < 7:
                    current = ("message", message)
                    message = b""
                    recording = current not in replies
                    replies.setdefault(current, [])
            elif transfer == 1 and kind == "C" and endpoint & 0x80 and data and current is not None:
                if recording and len(replies[current]) < 64:
                    replies[current].append(bytes(data))
        return replies, report_descriptor

    def descriptors(self, high_speed):
        interval = 7 if high_speed else 10
        return [interface_descriptor(0, 2, 0x03),
                hid_descriptor(len(self.report_descriptor)),
                endpoint_descriptor(0x81, INTERRUPT, 8, interval),
                endpoint_descriptor(0x02, INTERRUPT, 8, interval)]

    def start(self, endpoint_paths):
        self.stopped.clear()
        self.writer = ReportWriter(endpoint_paths[0], "ep 0x81")
        threading.Thread(target=self._receive, args=(endpoint_paths[1],), daemon=True).start()

    def set_report(self, interface, value, data):
        log("SET_REPORT interface %d value 0x%04x: %s" % (interface, value, data.hex()))
        self.writer.drop_pending()  # a mode change starts a new conversation
        for report in self.replies.get(("mode", bytes(data)), []):
            self.writer.send(report)

    def _receive(self, path):
        out = os.open(path, os.O_RDONLY)
        message = b""
        while not self.stopped.is_set():
            try:
                # One report per read: a longer read would gather several full-size packets.
                report = os.read(out, 8)
            except OSError as failure:
                log("OUT endpoint closed:", failure)
                os.close(out)
                return
            payload = report_payload(report)
            message += payload
            if len(payload) == 7 and len(message) < 64:
                continue
            self._answer(message)
            message = b""

    def _answer(self, message):
        log("OUT omron %s %r" % (message.hex(), message[:3]))
        if message[:3] == b"GTD" and len(message) >= 6 and self.arguments.unplug_at_day is not None \
                and message[5] >= self.arguments.unplug_at_day:
            log(f"day {message[5]} asked for: pulled out")
            self.unplug()
            return
        if message[:3] == b"GTD" and len(message) >= 7 and message[6] == 1 and self.arguments.day_delay:
            time.sleep(self.arguments.day_delay)
        reports = self.replies.get(("message", message))
        if reports is None:
            log("request not in the capture: answering NO")
            reports = [bytes([2]) + b"NO" + bytes(5)]
        for report in reports:
            self.writer.send(report)


# --------------------------------------------------------------------------------------- TEMPer

class Temper(Device):
    vendor, product = 0x0C45, 0x7401
    manufacturer, product_name, serial = "RDing", "TEMPerV1.4", ""
    interface_name = "TEMPer"
    KEYBOARD = bytes.fromhex("05010906a101050719e029e7150025017501950881029501750881010507190029ff150025ff750695068100c0")
    DATA = bytes.fromhex("0600ff0901a1010901150026ff007508950881020902950891020c00")
    READ_COMMAND = bytes([0x01, 0x80, 0x33, 0x01, 0x00, 0x00, 0x00, 0x00])

    def __init__(self, arguments, gadget):
        super().__init__(arguments, gadget)
        self.report_descriptors = {0: self.KEYBOARD, 1: self.DATA}

    def descriptors(self, high_speed):
        interval = 7 if high_speed else 10
        return [interface_descriptor(0, 1, 0x03, 1, 1), hid_descriptor(len(self.KEYBOARD)),
                endpoint_descriptor(0x81, INTERRUPT, 8, interval),
                interface_descriptor(1, 1, 0x03), hid_descriptor(len(self.DATA)),
                endpoint_descriptor(0x82, INTERRUPT, 8, interval)]

    def start(self, endpoint_paths):
        self.stopped.clear()
        self.data = ReportWriter(endpoint_paths[1], "ep 0x82")

    def set_report(self, interface, value, data):
        log("SET_REPORT interface %d value 0x%04x: %s" % (interface, value, data.hex()))
        if interface == 1 and bytes(data[:8]) == self.READ_COMMAND:
            raw = round(self.arguments.celsius * 256) & 0xFFFF  # FM75: signed 1/256 degC, big-endian
            self.data.send(bytes([0x80, 0x02, raw >> 8, raw & 0xFF, 0x4E, 0x20, 0x00, 0x00]))


KINDS = {"ant": AntStick, "omron": OmronPedometer, "temper": Temper}


# ------------------------------------------------------------------------- configfs + FunctionFS

def configure(kind, gadget):
    """The configfs gadget with one FunctionFS function named after the gadget (not bound yet)."""
    name = os.path.basename(gadget)
    device = KINDS[kind]
    os.makedirs(f"{gadget}/strings/0x409", exist_ok=True)

    def put(path, value):
        with open(f"{gadget}/{path}", "w") as attribute:
            attribute.write(value)

    put("idVendor", "0x%04x" % device.vendor)
    put("idProduct", "0x%04x" % device.product)
    put("bcdDevice", "0x0100")
    put("bcdUSB", "0x0200")
    put("strings/0x409/manufacturer", device.manufacturer)
    put("strings/0x409/product", device.product_name)
    if device.serial:
        put("strings/0x409/serialnumber", device.serial)
    os.makedirs(f"{gadget}/configs/c.1/strings/0x409", exist_ok=True)
    put("configs/c.1/strings/0x409/configuration", "default")
    put("configs/c.1/MaxPower", "100")
    os.makedirs(f"{gadget}/functions/ffs.{name}", exist_ok=True)
    link = f"{gadget}/configs/c.1/ffs.{name}"
    if not os.path.islink(link):
        os.symlink(f"{gadget}/functions/ffs.{name}", link)


def write_descriptors(ep0, device):
    full, high = device.descriptors(False), device.descriptors(True)
    body = struct.pack("<II", len(full), len(high)) + b"".join(full) + b"".join(high)
    os.write(ep0, struct.pack("<III", DESCRIPTORS_MAGIC_V2, 12 + len(body), HAS_FS_DESC | HAS_HS_DESC) + body)
    strings = struct.pack("<H", 0x0409) + device.interface_name.encode() + b"\0"
    os.write(ep0, struct.pack("<IIII", STRINGS_MAGIC, 16 + len(strings), 1, 1) + strings)


def handle_setup(ep0, device, setup):
    request_type, request, value, index, length = struct.unpack("<BBHHH", setup)
    try:
        if request_type == 0x21 and request == 0x09:  # HID SET_REPORT
            data = os.read(ep0, length) if length else b""
            device.set_report(index & 0xFF, value, data)
        elif request_type == 0x21 and request == 0x0A:  # HID SET_IDLE
            os.read(ep0, 0)
        elif request_type == 0x81 and request == 0x06 and value >> 8 == 0x22 \
                and (index & 0xFF) in device.report_descriptors:
            os.write(ep0, device.report_descriptors[index & 0xFF][:length])
        else:
            log("SETUP %02x %02x %04x %04x %d: stalled" % (request_type, request, value, index, length))
            if request_type & 0x80:
                os.read(ep0, 0)
            else:
                os.write(ep0, b"")
    except OSError as failure:
        log("SETUP %02x %02x: %s" % (request_type, request, failure))


def serve(arguments):
    device = KINDS[arguments.kind](arguments, arguments.gadget)
    ep0 = os.open(f"{arguments.ffs}/ep0", os.O_RDWR)
    write_descriptors(ep0, device)
    endpoints = sorted((name for name in os.listdir(arguments.ffs) if name != "ep0"), key=lambda n: int(n[2:]))
    log(f"{arguments.kind} ready: {' '.join(endpoints)}")
    enabled = False
    while True:
        try:
            events = os.read(ep0, EVENT_SIZE * 4)
        except OSError as failure:
            log("ep0 closed:", failure)
            return
        for offset in range(0, len(events) - EVENT_SIZE + 1, EVENT_SIZE):
            event = events[offset:offset + EVENT_SIZE]
            kind = event[8]
            if kind != SETUP:
                log("event", EVENT_NAMES.get(kind, kind))
            if kind == ENABLE and not enabled:
                enabled = True
                device.start([f"{arguments.ffs}/{name}" for name in endpoints])
            elif kind in (DISABLE, UNBIND) and enabled:
                enabled = False
                device.stop()
            elif kind == SETUP:
                handle_setup(ep0, device, event[:8])


def main():
    parser = argparse.ArgumentParser(description="emulated USB devices over FunctionFS")
    parser.add_argument("mode", choices=["configure", "serve"])
    parser.add_argument("--kind", choices=sorted(KINDS), required=True)
    parser.add_argument("--gadget", required=True, help="the configfs gadget directory")
    parser.add_argument("--ffs", help="where the function's FunctionFS is mounted (serve)")
    parser.add_argument("--bpm", type=int, default=64)
    parser.add_argument("--kg", type=float, default=72.35)
    parser.add_argument("--celsius", type=float, default=21.5)
    parser.add_argument("--capture", help="omron: usbmon pcapng of a vendor session")
    parser.add_argument("--unplug-at-day", type=int, help="omron: pull out when this day is asked for")
    parser.add_argument("--day-delay", type=float, default=0, help="omron: seconds before answering each day's first block")
    arguments = parser.parse_args()
    if arguments.mode == "configure":
        configure(arguments.kind, arguments.gadget)
    else:
        if not arguments.ffs:
            parser.error("serve needs --ffs")
        if arguments.kind == "omron" and not arguments.capture:
            parser.error("omron needs --capture")
        serve(arguments)


if __name__ == "__main__":
    main()
