#!/usr/bin/env python3
"""Writes the TEMPer captures in this folder: synthetic usbmon captures (pcapng, LINKTYPE_USB_LINUX_MMAPPED = 220,
bus 1 device 3) of a TEMPer USB thermometer's HID conversation, and the samples `ingestd decode <case>.pcapng --json
--adapter-option temper-interval=1` must print (<case>.expected.jsonl, uuid left out).

No usbmon capture of a TEMPer was available. The bytes follow the protocol as Plugins/TEMPer/README.md summarises it:
  * enumeration: device descriptor (vendor, product), a configuration with two HID interfaces (0: keyboard-like,
    interrupt IN 0x81; 1: data, interrupt IN 0x82, 8-byte packets), string descriptors (language, product,
    manufacturer), SET_CONFIGURATION 1;
  * a reading: HID SET_REPORT (bmRequestType 0x21, bRequest 0x09, wValue 0x0200, wIndex 1) carrying
    01 80 33 01 00 00 00 00, then an 8-byte interrupt IN read on 0x82; sent twice, the second answer is used;
  * the answer holds big-endian 16-bit values: FM75 degC = signed value / 256; Si7021 degC = value * 175.72 / 65536
    - 46.85 (humidity is decoded but not stored).
The expected values are worked out here from those rules, not from ingestd's output; each sample's time is the
completion of the answer used (the capture's clock).

Python 3 standard library only (and scripts/usbmon_capture_kit.py). Run from anywhere: `python3 Tests/AdapterTests/Captures/temper/make-captures.py`.
"""

import json
import os
import struct
import sys
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from usbmon_capture_kit import EINPROGRESS, XFER_INTERRUPT, UsbmonCapture, standard_enumeration  # noqa: E402

FOLDER = os.path.dirname(os.path.abspath(__file__))
BUS, DEVICE = 1, 3
START = 1_736_931_600_000_000  # 2025-01-15T09:00:00Z in microseconds
SOURCE = "temper"
READ_COMMAND = bytes.fromhex("0180330100000000")


class Capture(UsbmonCapture):
    """usbmon events of the thermometer, written as pcapng."""

    def __init__(self):
        super().__init__(BUS, DEVICE, first_urb=0xFFFF8880_10000000)

    def interrupt_in(self, time, endpoint, answer, delay):
        urb = self.urb()
        self.event(urb, "S", XFER_INTERRUPT, endpoint, time, EINPROGRESS, 8)
        self.event(urb, "C", XFER_INTERRUPT, endpoint, time + delay, 0, len(answer), answer)
        return time + delay


def descriptors(vendor, product):
    device = struct.pack("<BBHBBBBHHHBBBB", 18, 1, 0x0110, 0, 0, 0, 8, vendor, product, 0x0001, 1, 2, 0, 1)
    body = b""
    for number, endpoint, protocol in ((0, 0x81, 1), (1, 0x82, 0)):
        body += bytes([9, 4, number, 0, 1, 3, 1 if protocol else 0, protocol, 0])
        body += bytes([9, 0x21]) + struct.pack("<HBBBH", 0x0110, 0, 1, 0x22, 0x29)  # HID descriptor
        body += bytes([7, 5, endpoint, 3]) + struct.pack("<H", 8) + bytes([10])
    configuration = bytes([9, 2]) + struct.pack("<H", 9 + len(body)) + bytes([2, 1, 0, 0x80, 50]) + body
    return device, configuration


def enumerate_device(capture, time, vendor, product, product_string, manufacturer):
    """What the kernel asks a new device (standard requests, at the device's address)."""
    device, configuration = descriptors(vendor, product)
    return standard_enumeration(capture, time, device, configuration, ((2, product_string), (1, manufacturer)))


def reading(capture, time, answer):
    """The read command sent twice as SET_REPORT, each followed by the interrupt read; returns when the second
    answer completed."""
    set_report = bytes([0x21, 0x09, 0x00, 0x02, 0x01, 0x00, len(READ_COMMAND), 0x00])
    first = bytes.fromhex("8002000000000000")  # the stale first answer some units give
    for index, reply in enumerate((first, answer)):
        capture.control_out(time, set_report, READ_COMMAND)
        completed = capture.interrupt_in(time + 300, 0x82, reply, 12_000)
        time = completed + 1_000
    return completed


def iso(micros):
    seconds, fraction = divmod(micros, 1_000_000)
    text = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (".%06d" % fraction).rstrip("0").rstrip(".") + "Z"


def fm75(raw):
    return (raw - 0x10000 if raw & 0x8000 else raw) / 256


def si7021(raw):
    return raw * 175.72 / 65536 - 46.85


def sample(value, time, product, manufacturer, model, index=None):
    record = {"type": "IngestQuantityTypeIdentifierAmbientTemperature", "value": value, "unit": "degC",
              "start": iso(time), "end": iso(time), "source": SOURCE,
              "device": {"name": product, "manufacturer": manufacturer, "model": model,
                         "localIdentifier": "usb:%d-%d" % (BUS, DEVICE)}}
    if index is not None:
        record["metadata"] = {"IngestSensorIndex": index}
    return record


# name: (vendor, product, product string, manufacturer, model, [(answer, [temperatures])])
CASES = {
    # 0c45:7401, FM75 at offset 2: 23.5 degC, then 24.0625 degC, then -1.5 degC (a unit on a window sill).
    "temper-v1.4": (0x0C45, 0x7401, "TEMPerV1.4", "RDing", "TEMPerV1", [
        (bytes.fromhex("8002178000000000"), [fm75(0x1780)]),
        (bytes.fromhex("8002181000000000"), [fm75(0x1810)]),
        (bytes.fromhex("8002fe8000000000"), [fm75(0xFE80)]),
    ]),
    # 0c45:7402, TEMPer2: internal sensor at 2, probe at 4 (two samples, IngestSensorIndex 0 and 1).
    "temper2": (0x0C45, 0x7402, "TEMPer2V1.3", "RDing", "TEMPer2", [
        (bytes.fromhex("800216c01a400000"), [fm75(0x16C0), fm75(0x1A40)]),
    ]),
    # 1a86:e025, Si7021 (TEMPERHUM1): temperature at 2, humidity at 4 (not stored).
    "temperhum": (0x1A86, 0xE025, "TEMPERHUM1V1.3", "RDing", "TEMPERHUM1", [
        (bytes.fromhex("80026a0063000000"), [si7021(0x6A00)]),
    ]),
}


def main():
    for name, (vendor, product, product_string, manufacturer, model, readings) in CASES.items():
        capture = Capture()
        time = enumerate_device(capture, START, vendor, product, product_string, manufacturer)
        expected = []
        for answer, temperatures in readings:
            completed = reading(capture, time, answer)
            for index, value in enumerate(temperatures):
                expected.append(sample(value, completed, product_string, manufacturer, model,
                                       index if len(temperatures) > 1 else None))
            time = completed + 1_000_000  # temper-interval=1
        capture.write(os.path.join(FOLDER, name + ".pcapng"))
        with open(os.path.join(FOLDER, name + ".expected.jsonl"), "w") as handle:
            for record in expected:
                handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        with open(os.path.join(FOLDER, name + ".adapter-options"), "w") as handle:
            handle.write("temper-interval=1\n")
        print("%s: %d usbmon events, %d expected samples" % (name, len(capture.events), len(expected)))


if __name__ == "__main__":
    main()
