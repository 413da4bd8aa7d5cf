#!/usr/bin/env python3
"""Write synthetic usbmon captures (pcapng, LINKTYPE_USB_LINUX_MMAPPED = 220) of an ANT USB2 stick (0fcf:1008,
bus 1 device 2) hearing ANT+ sensors, and the samples ingestd should decode from them.

No real stick with real sensors was available, so the traffic is made here from the ANT message protocol (framing
A4 | length | id | payload | XOR checksum) and the ANT+ profiles' page layouts:
  * heart rate (device type 120): bytes 4-5 beat event time (1/1024 s), byte 6 beat count, byte 7 computed rate
    (0 = invalid); bit 7 of byte 0 toggles every 4 messages; page 4 has the previous beat time in bytes 2-3;
  * stride-based speed and distance (124), page 1: byte 1 time fraction (1/200 s), byte 2 time (s), byte 3 distance
    (m), byte 4 high nibble distance fraction (1/16 m) and low nibble speed (m/s), byte 5 speed fraction (1/256),
    byte 6 stride count, byte 7 update latency (1/32 s); page 2: byte 3 cadence, byte 4 high nibble cadence
    fraction, low nibble speed, byte 5 speed fraction, byte 7 status;
  * weight scale (119), page 1: bytes 1-2 user profile, byte 3 capabilities, bytes 6-7 body weight (0.01 kg;
    0xFFFE computing, 0xFFFF invalid).

Scenarios (the first argument):
  hrm               another program's channel start-up (openant style: reset, capabilities request, network key,
                    assign channel, channel id 12345/120, search timeout, period 8070, RF 57, open) and heart-rate
                    pages 0 and 4 WITHOUT extended data; an IN read kept pending across every command; a few reads
                    that time out; an RX-fail event; at the end close channel.
  sdm               the same style for a stride sensor with a wildcard channel id (0/124), lib config 0xE0 so every
                    broadcast carries the sender's channel id (4242/124/5), RSSI and a time stamp; page 1 with the
                    stride and distance counters crossing their wraps, page 2, common pages 80/81; reads of 4096
                    bytes, some holding three messages (more than 64 bytes).
  scale             a weight scale (wildcard 0/119, no extended data); after pairing the program asks the stick for
                    the channel id (0x4D -> 0x51 5150/119/1); weights: computing, 72.35 kg, invalid, computing,
                    72.40 kg; body-composition page 2 in between.
  scale-unmeasured  a scale that only ever says computing (0xFFFE) or invalid (0xFFFF).
  daemon            ingestd's own live start-up in its exact order, one synchronous 64-byte read per transfer (for a
                    strict replay under umockdev): reset, network key (--key), assign, wildcard channel id, period,
                    RF, extended messages, Rx scan mode; then broadcasts with extended data from two heart-rate
                    monitors, a stride sensor and a scale.
                    At the end (after SIGTERM) the session's close-channel command.
  daemon-refused    the same start-up, but the stick refuses the network key (code 0x28): the session must fail.

Each scenario writes OUT.pcapng and, except the daemon ones, OUT.expected.jsonl: the samples `ingestd decode
--json` must print (uuid left out; stride samples for --adapter-option ant-batch-seconds=3600, one batch). They are
worked out here from the profiles' rules as the adapter README states them: a heart-rate sample for a new beat with
a valid rate at most every 5 s; steps = 2 x strides; one weight per weighing, never computing or invalid.

Python 3 standard library only. Example:
  Tests/AdapterTests/Captures/ant-plus/make-captures.py hrm Tests/AdapterTests/Captures/ant-plus/hrm.pcapng
  Tests/AdapterTests/Captures/ant-plus/make-captures.py daemon Tests/LibUSBTransportTests/Fixtures/ant-daemon-session.pcapng --key 0123456789abcdef
"""

import argparse
import datetime
import json
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'scripts'))
from usbmon_capture_kit import EINPROGRESS, XFER_BULK, UsbmonCapture, standard_enumeration  # noqa: E402

BUS = 1
DEVICE = 2             # the device address; --address changes it (a second stick in a umockdev tree)
VENDOR, PRODUCT = 0x0FCF, 0x1008   # --product 1009 makes the stick an ANTUSB-m
PRODUCT_NAMES = {0x1008: 'ANT USBStick2', 0x1009: 'ANT USB-m Stick'}
EP_IN, EP_OUT = 0x81, 0x01
ENOENT = -2
START = 1_710_054_000_000_000          # 2024-03-10T07:00:00Z in microseconds
SOURCE = 'ant-plus'
EXAMPLE_KEY = bytes.fromhex('0123456789abcdef')   # made up; the ANT+ key is not in this project


def ant(message_id, payload):
    body = bytes([0xA4, len(payload), message_id]) + bytes(payload)
    checksum = 0
    for byte in body:
        checksum ^= byte
    return body + bytes([checksum])


def response(channel, message_id, code=0):
    return ant(0x40, [channel, message_id, code])


def iso(micros):
    moment = datetime.datetime.fromtimestamp(micros // 1_000_000, tz=datetime.timezone.utc)
    text = moment.strftime('%Y-%m-%dT%H:%M:%S')
    if micros % 1_000_000:
        text += ('.%06d' % (micros % 1_000_000)).rstrip('0')
    return text + 'Z'


class Capture(UsbmonCapture):
    """usbmon events of the stick, written as pcapng."""

    def __init__(self):
        super().__init__(BUS, DEVICE)

    def bulk_out(self, time, data):
        urb = self.urb()
        self.event(urb, 'S', XFER_BULK, EP_OUT, time, EINPROGRESS, len(data), data)
        self.event(urb, 'C', XFER_BULK, EP_OUT, time + 120, 0, len(data))

    def bulk_in_submit(self, time, length):
        urb = self.urb()
        self.event(urb, 'S', XFER_BULK, EP_IN, time, EINPROGRESS, length)
        return urb

    def bulk_in_complete(self, urb, time, data, status=0):
        self.event(urb, 'C', XFER_BULK, EP_IN, time, status, len(data), data)


def descriptors():
    device = struct.pack('<BBHBBBBHHHBBBB', 18, 1, 0x0200, 0, 0, 0, 64, VENDOR, PRODUCT, 0x0100, 1, 2, 3, 1)
    interface = bytes([9, 4, 0, 0, 2, 0xFF, 0, 0, 0])
    endpoint_in = bytes([7, 5, EP_IN, 2]) + struct.pack('<H', 64) + bytes([1])
    endpoint_out = bytes([7, 5, EP_OUT, 2]) + struct.pack('<H', 64) + bytes([1])
    total = 9 + len(interface) + len(endpoint_in) + len(endpoint_out)
    configuration = bytes([9, 2]) + struct.pack('<H', total) + bytes([1, 1, 0, 0x80, 50])
    return device, configuration + interface + endpoint_in + endpoint_out


def enumerate_device(capture, time):
    """What the kernel asks a new device (standard requests, at the device's address)."""
    device, configuration = descriptors()
    strings = ((2, PRODUCT_NAMES[PRODUCT]), (1, 'Dynastream Innovations'), (3, '123'))
    return standard_enumeration(capture, time, device, configuration, strings)


class OtherProgram:
    """A host program that keeps one IN read of `read_length` bytes pending at all times (as openant's reader
    thread does) and writes commands in between."""

    def __init__(self, capture, time, read_length=4096):
        self.capture = capture
        self.time = time
        self.read_length = read_length
        self.pending = capture.bulk_in_submit(time, read_length)

    def answer(self, data, after=800, status=0):
        """The pending read completes with `data`; the next one is submitted at once."""
        self.time += after
        self.capture.bulk_in_complete(self.pending, self.time, data, status)
        self.time += 40
        self.pending = self.capture.bulk_in_submit(self.time, self.read_length)
        return self.time - 40

    def command(self, message, *answers):
        self.time += 2000
        self.capture.bulk_out(self.time, message)
        for answer in answers:
            self.answer(answer)

    def until(self, time):
        self.time = max(self.time, time)


def channel_start_up(program, key, channel_id, period, search_timeout=12, lib_config=None):
    device_number, device_type, transmission = channel_id
    program.command(ant(0x4A, [0x00]), ant(0x6F, [0x20]))
    program.command(ant(0x4D, [0x00, 0x54]), ant(0x54, [8, 3, 0x00, 0xBA, 0x36, 0x00]))
    program.command(ant(0x46, [0x00] + list(key)), response(0, 0x46))
    program.command(ant(0x42, [0, 0x00, 0]), response(0, 0x42))
    program.command(ant(0x51, [0, device_number & 0xFF, device_number >> 8, device_type, transmission]),
                    response(0, 0x51))
    program.command(ant(0x44, [0, search_timeout]), response(0, 0x44))
    program.command(ant(0x43, [0, period & 0xFF, period >> 8]), response(0, 0x43))
    program.command(ant(0x45, [0, 57]), response(0, 0x45))
    if lib_config is not None:
        program.command(ant(0x6E, [0x00, lib_config]), response(0, 0x6E))
    program.command(ant(0x4B, [0]), response(0, 0x4B))
    program.until(program.time + 400_000)


def close_channel(program):
    program.command(ant(0x4C, [0]), response(0, 0x4C), ant(0x40, [0, 0x01, 0x07]))


def sample(kind, value, unit, start, end, device_name, identifier, metadata=None):
    record = {'type': kind, 'value': value, 'unit': unit, 'start': iso(start), 'end': iso(end), 'source': SOURCE,
              'device': {'name': device_name, 'localIdentifier': identifier}}
    if metadata:
        record['metadata'] = metadata
    return record


# --- heart rate -----------------------------------------------------------------------------------------------

def heart_pages(count, start, period_us, first_beat_us, rates):
    """(time, page bytes, beat count, computed rate) per message of a heart-rate monitor whose beats come at the
    given rates (beats per minute, one per beat)."""
    beats = []              # (time in microseconds, rate)
    time = first_beat_us
    for rate in rates:
        beats.append((time, rate))
        time += round(60_000_000 / rate)
    pages = []
    for n in range(count):
        now = start + n * period_us
        heard = [beat for beat in beats if beat[0] <= now]
        count_so_far = len(heard)
        last_time = heard[-1][0] if heard else 0
        previous_time = heard[-2][0] if len(heard) > 1 else 0
        rate = heard[-1][1] if heard else 0
        event = round((last_time - start) * 1024 / 1_000_000) & 0xFFFF if heard else 0
        previous = round((previous_time - start) * 1024 / 1_000_000) & 0xFFFF if len(heard) > 1 else 0
        toggle = 0x80 if (n // 4) % 2 else 0x00
        if 40 <= n < 48:
            page = [0x00 | toggle, 0xFF, 0xFF, 0xFF]
        elif n % 65 == 64:
            page = [0x02 | toggle, 0x01, 0x34, 0x12]           # manufacturer 1, serial 0x1234
        else:
            page = [0x04 | toggle, 0xFF, previous & 0xFF, previous >> 8]
        page += [event & 0xFF, event >> 8, count_so_far & 0xFF, rate]
        pages.append((now, page, count_so_far & 0xFF, rate))
    return pages


def expected_heart_rates(messages, identifier, interval_us=5_000_000):
    """The adapter's rule: a sample when a new beat arrives with a valid rate, at most one every 5 s per sensor."""
    records = []
    last_count = None
    last_sample = None
    for time, beat_count, rate in messages:
        if beat_count == last_count:
            continue
        last_count = beat_count
        if rate == 0:
            continue
        if last_sample is not None and time - last_sample < interval_us:
            continue
        last_sample = time
        records.append(sample('HKQuantityTypeIdentifierHeartRate', rate, 'count/min', time, time,
                              'ANT+ heart rate monitor', identifier))
    return records


def scenario_hrm(capture):
    time = enumerate_device(capture, START)
    program = OtherProgram(capture, time + 200_000)
    channel_start_up(program, EXAMPLE_KEY, (12345, 120, 0), 8070)
    period = round(8070 * 1_000_000 / 32768)
    first = program.time + 50_000
    rates = [62 + (k % 9) for k in range(40)]
    pages = heart_pages(96, first, period, first + 600_000, rates)
    heard = []
    for n, (when, page, beat_count, rate) in enumerate(pages):
        program.until(when - 800)
        if n in (10, 55):
            program.answer(b'', after=800, status=ENOENT)           # a read that timed out
            program.until(when - 800)
        if n == 30:
            program.answer(ant(0x40, [0, 0x01, 0x02]))              # EVENT_RX_FAIL
            program.until(when - 800)
        completed = program.answer(ant(0x4E, [0] + page))
        heard.append((completed, beat_count, rate))
    close_channel(program)
    return expected_heart_rates(heard, 'ant+/120/12345')


# --- stride-based speed and distance --------------------------------------------------------------------------

def scenario_sdm(capture):
    time = enumerate_device(capture, START)
    program = OtherProgram(capture, time + 200_000)
    channel_start_up(program, EXAMPLE_KEY, (0, 124, 0), 8134, lib_config=0xE0)
    sender = [4242 & 0xFF, 4242 >> 8, 124, 0x05]
    period = round(8134 * 1_000_000 / 32768)
    first = program.time + 50_000
    count = 124
    stride0, distance0 = 240.0, 230.0
    messages = []
    for n in range(count):
        t = n * period / 1_000_000
        speed = 2.5 + 0.02 * t
        distance = distance0 + 2.5 * t + 0.01 * t * t
        strides = stride0 + 80 / 60 * t
        sixteenths = int(distance * 16)
        speed_units = int(speed * 256)
        if n % 65 == 64:
            page = [80, 0xFF, 0xFF, 0x01, 0x0F, 0x00, 0x01, 0x00]
        elif n % 4 == 3:
            cadence = 80.0
            page = [2, 0xFF, 0xFF, int(cadence), (int((cadence % 1) * 16) << 4) | (speed_units >> 8),
                    speed_units & 0xFF, 0xFF, 0x00]
        else:
            ticks = int(t * 200) % 51200
            page = [1, ticks % 200, ticks // 200, (sixteenths >> 4) & 0xFF, ((sixteenths & 0x0F) << 4) | (speed_units >> 8),
                    speed_units & 0xFF, int(strides) & 0xFF, 4]
        rssi = [0x20, 0xC4 & 0xFF, 0xA0]
        stamp = (n * 8134) & 0xFFFF
        message = ant(0x4E, [0] + page + [0xE0] + sender + rssi + [stamp & 0xFF, stamp >> 8])
        messages.append((first + n * period, page, sixteenths, int(strides), speed_units / 256, message))
    n = 0
    delivered = []       # (completion time, page, sixteenths, strides, speed)
    while n < count:
        when = messages[n][0]
        program.until(when - 800)
        group = 3 if n % 10 == 5 and n + 3 <= count else 1      # three messages in one read: 66 bytes
        data = b''.join(message[5] for message in messages[n:n + group])
        completed = program.answer(data)
        for message in messages[n:n + group]:
            delivered.append((completed, message[1], message[2], message[3], message[4]))
        n += group
    close_channel(program)
    # One batch (ant-batch-seconds=3600): steps and distance from the first page 1 (the baseline) to the last,
    # counted through the wraps; the speed of the last page that carried one.
    firsts = [entry for entry in delivered if entry[1][0] == 1]
    baseline, last = firsts[0], firsts[-1]
    strides = last[3] - baseline[3]
    sixteenths = last[2] - baseline[2]
    speeds = [entry for entry in delivered if entry[1][0] in (1, 2) and entry[4] > 0]
    identifier = 'ant+/124/4242'
    return [
        sample('HKQuantityTypeIdentifierStepCount', 2 * strides, 'count', baseline[0], last[0],
               'ANT+ stride sensor', identifier),
        sample('HKQuantityTypeIdentifierDistanceWalkingRunning', sixteenths / 16, 'm', baseline[0], last[0],
               'ANT+ stride sensor', identifier),
        sample('HKQuantityTypeIdentifierRunningSpeed', speeds[-1][4], 'm/s', speeds[-1][0], speeds[-1][0],
               'ANT+ stride sensor', identifier),
    ]


# --- weight scale ---------------------------------------------------------------------------------------------

def scale_page(weight, profile=3):
    return [1, profile & 0xFF, profile >> 8, 0x00, 0xFF, 0xFF, weight & 0xFF, weight >> 8]


def scenario_scale(capture, weights):
    time = enumerate_device(capture, START)
    program = OtherProgram(capture, time + 200_000)
    channel_start_up(program, EXAMPLE_KEY, (0, 119, 0), 8192, search_timeout=30)
    period = round(8192 * 1_000_000 / 32768)
    first = program.time + 50_000
    records = []
    last_weight = None
    for n, weight in enumerate(weights):
        when = first + n * period
        program.until(when - 800)
        if n == 3:
            # Paired: the program asks which scale it hears.
            program.command(ant(0x4D, [0x00, 0x51]), ant(0x51, [0, 5150 & 0xFF, 5150 >> 8, 119 | 0x80, 0x01]))
            program.until(when - 800)
        page = scale_page(weight)
        if weight not in (0xFFFE, 0xFFFF) and n % 3 == 2:
            page = [2, 0x03, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]     # body composition, not read
        completed = program.answer(ant(0x4E, [0] + page))
        if page[0] != 1:
            continue
        if weight == 0xFFFE:
            last_weight = None
        elif weight != 0xFFFF and weight != last_weight:
            last_weight = weight
            records.append(sample('HKQuantityTypeIdentifierBodyMass', weight / 100, 'kg', completed, completed,
                                  'ANT+ weight scale', 'ant+/119/5150', {'IngestANTUserProfile': 3}))
    close_channel(program)
    return records


def weighings():
    return [0xFFFE] * 8 + [7235] * 20 + [0xFFFF] * 4 + [0xFFFE] * 6 + [7240] * 14


# --- ingestd's own start-up (strict replay under umockdev) -----------------------------------------------------

class OurSession:
    """ingestd's ANT session as the stick sees it: each transfer one synchronous call, reads of 64 bytes."""

    def __init__(self, capture, time):
        self.capture = capture
        self.time = time

    def write(self, message):
        self.time += 300
        self.capture.bulk_out(self.time, message)

    def read(self, data):
        self.time += 300
        urb = self.capture.bulk_in_submit(self.time, 64)
        self.time += 2000
        self.capture.bulk_in_complete(urb, self.time, data)

    def command(self, message, code=0):
        self.write(message)
        channel = message[3] if message[2] not in (0x46, 0x66) else 0
        self.read(response(channel, message[2], code))


def scenario_daemon(capture, key, refuse_key=False):
    session = OurSession(capture, START + 200_000)
    session.write(ant(0x4A, [0x00]))
    session.read(ant(0x6F, [0x20]))
    session.command(ant(0x46, [0x00] + list(key)), code=0x28 if refuse_key else 0)
    if refuse_key:
        return []
    session.command(ant(0x42, [0, 0x00, 0]))
    session.command(ant(0x51, [0, 0, 0, 0, 0]))
    session.command(ant(0x43, [0, 8070 & 0xFF, 8070 >> 8]))
    session.command(ant(0x45, [0, 57]))
    session.command(ant(0x66, [0x00, 0x01]))
    session.command(ant(0x5B, [0x00]))

    def from_sender(page, number, device_type, transmission):
        return ant(0x4E, [0] + page + [0x80, number & 0xFF, number >> 8, device_type, transmission])

    # Two heart-rate monitors (one beat each with a valid rate after an invalid first page), a stride sensor
    # (baseline, then 12 strides and 20 m), a scale (computing, then 80.50 kg twice, then invalid).
    session.read(from_sender([0x04, 0xFF, 0, 0, 0x00, 0x04, 7, 0], 1001, 120, 0x01))
    session.read(from_sender([0x04, 0xFF, 0, 0, 0x00, 0x08, 8, 71], 1001, 120, 0x01))
    session.read(from_sender([0x84, 0xFF, 0, 0, 0x00, 0x10, 20, 64], 2002, 120, 0x11))
    session.read(from_sender([1, 0, 10, 100, 0x02, 0x80, 250, 4], 4242, 124, 0x05))
    session.read(from_sender(scale_page(0xFFFE), 5150, 119, 0x01))
    session.read(from_sender([1, 0, 14, 100 + 20, 0x02, 0x80, (250 + 12) & 0xFF, 4], 4242, 124, 0x05))
    session.read(from_sender(scale_page(8050), 5150, 119, 0x01))
    session.read(from_sender(scale_page(8050), 5150, 119, 0x01))
    session.read(from_sender(scale_page(0xFFFF), 5150, 119, 0x01))
    # Stopped (SIGTERM): the session closes its channel and reads no more.
    session.time += 5_000_000
    session.write(ant(0x4C, [0x00]))
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('scenario', choices=['hrm', 'sdm', 'scale', 'scale-unmeasured', 'daemon', 'daemon-refused'])
    parser.add_argument('output', help='the .pcapng to write (the expected samples go next to it)')
    parser.add_argument('--key', help='network key (16 hex digits) for the daemon scenarios', default=EXAMPLE_KEY.hex())
    parser.add_argument('--address', type=int, default=2, help='the stick\'s device address on bus 1 (default 2)')
    parser.add_argument('--product', choices=['1008', '1009'], default='1008',
                        help='the stick\'s USB product id: 1008 ANT USB2 (default), 1009 ANTUSB-m')
    arguments = parser.parse_args()
    global DEVICE, PRODUCT
    DEVICE = arguments.address
    PRODUCT = int(arguments.product, 16)
    capture = Capture()
    key = bytes.fromhex(arguments.key)
    if len(key) != 8:
        sys.exit('error: --key needs 16 hex digits')
    if arguments.scenario == 'hrm':
        expected = scenario_hrm(capture)
    elif arguments.scenario == 'sdm':
        expected = scenario_sdm(capture)
    elif arguments.scenario == 'scale':
        expected = scenario_scale(capture, weighings())
    elif arguments.scenario == 'scale-unmeasured':
        expected = scenario_scale(capture, [0xFFFE] * 10 + [0xFFFF] * 10 + [0xFFFE] * 4)
    else:
        expected = scenario_daemon(capture, key, refuse_key=arguments.scenario == 'daemon-refused')
    capture.write(arguments.output)
    if not arguments.scenario.startswith('daemon'):
        stem = arguments.output[:-len('.pcapng')] if arguments.output.endswith('.pcapng') else arguments.output
        with open(stem + '.expected.jsonl', 'w') as handle:
            for record in expected:
                handle.write(json.dumps(record, separators=(',', ':')) + '\n')
    print(f'{arguments.output}: {len(capture.events)} usbmon events, {len(expected)} expected samples')


if __name__ == '__main__':
    main()
