#!/usr/bin/env python3
"""Builds the berrymed-oximeter captures in this folder to the published packet layout (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/berrymed-oximeter/make-captures.py` (it rewrites
every generated file in this folder). Shared parts: scripts/ble_capture_kit.py.
"""

import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SOURCE = "berrymed-oximeter"
ADDRESS = "00:A0:50:3B:7E:11"
NAME = "BM1000C"
SERVICE = "49535343-fe7d-4ae5-8fa9-9fafd205e455"
STREAM = "49535343-1e4d-4bd9-ba61-23c647249616"
COMMAND = "49535343-8841-43f4-a8d4-ecbe34729bb3"


def packet(spo2, pulse, pleth, finger=True, signal=6, beep=False):
    """One 5-byte packet: header (bit 7; signal strength 0-3, signal 4, probe unplugged 5, beep 6), pleth,
    bar graph 0-3 / no finger 4 / searching 5 / pulse bit 7 at 6, pulse bits 0-6, SpO2."""
    header = 0x80 | signal | (0x10 if signal else 0) | (0x40 if beep else 0)
    third = (pleth // 8) & 0x0F | (0x00 if finger else 0x10) | ((pulse >> 7) & 1) << 6
    return bytes([header, pleth & 0x7F, third, pulse & 0x7F, spo2])


def wave(index):
    """A plethysmogram-like waveform 0..100 (ignored by the adapter)."""
    return int(50 + 45 * math.sin(index / 3.0))


def bm1000c_case(capture):
    stream = Characteristic(STREAM, 0x10, cccd_value=0x0001)  # notify
    command = Characteristic(COMMAND, 0x0C)  # write, write without response
    capture.advertising_report(ADDRESS, flags_ad() + name_ad(NAME))
    capture.advance(120)
    index = [0]

    def notification(packets, delay):
        return (stream, "notification", b"".join(packets), delay)

    def packets(n, spo2, pulse, finger=True):
        out = []
        for _ in range(n):
            out.append(packet(spo2, pulse, wave(index[0]), finger=finger))
            index[0] += 1
        return out

    # Groups of four notifications 50 ms apart, each group in its own second (checked below).
    # 1: no finger (SpO2 127, pulse 255: "no value"): no reading.
    no_finger = [notification(packets(4, 127, 255, finger=False), 1000 if i == 0 else 50) for i in range(4)]
    # 2: 97 %, 72 /min, one glitching packet (90 %, 60 /min) the median ignores.
    second_two = [notification(packets(4, 97, 72), 850), notification(packets(3, 97, 72) + [packet(90, 60, 40)], 50),
                  notification(packets(4, 97, 72), 50), notification(packets(4, 97, 72), 50)]
    # 3: 96 %, 131 /min (bit 7 of the pulse rate in byte 2), one packet split across two notifications.
    split = packet(96, 131, 70)
    second_three = [notification(packets(3, 96, 131) + [split[:2]], 850), notification([split[2:]] + packets(3, 96, 131), 50),
                    notification(packets(4, 96, 131), 50), notification(packets(4, 96, 131), 50)]
    values = no_finger + second_two + second_three
    times = gatt_services_session(capture, ADDRESS, NAME, [(SERVICE, [stream, command])], values, advertise=False)

    seconds = [int(t.timestamp()) for t in times]
    groups = [seconds[0:4], seconds[4:8], seconds[8:12]]
    assert all(len(set(g)) == 1 for g in groups) and len({g[0] for g in groups}) == 3, groups
    device = device_json(name=NAME, manufacturer="BerryMed", localIdentifier=ADDRESS)
    records = []
    for second, spo2, pulse in [(groups[1][0], 97, 72), (groups[2][0], 96, 131)]:
        moment = datetime.fromtimestamp(second, tz=timezone.utc)
        meta = metadata_json(sync_identifier="%s/bci/%d" % (ADDRESS, second), sync_version=1)
        records.append(sample("OxygenSaturation", spo2 / 100, "%", moment, source=SOURCE, device=device, metadata=meta))
        records.append(sample("HeartRate", pulse, "count/min", moment, source=SOURCE, device=device, metadata=meta))
    return records


def bm1000_plx_case(capture):
    """A BerryMed-named oximeter with the standard Pulse Oximeter profile and no vendor stream: the standard
    conversation, its values SpeziBluetooth's PLX test frames (ORIGIN): continuous 100 % / 90 /min, then
    95 % / 90 /min with status fields."""
    address, name = "00:A0:50:3B:7E:12", "BerryMed"
    continuous = Characteristic(0x2A5F, 0x10, cccd_value=0x0001)
    values = [
        (continuous, "notification", h("00 64 00 5A 00")),
        (continuous, "notification", h("1C 5F 00 5A 00 20 00 00 00 00 57 F0")),
    ]
    times = gatt_session(capture, address, name, 0x1822, [continuous], values)
    device = device_json(name=name, localIdentifier=address)
    records = []
    for index, (spo2, pulse) in enumerate([(1.00, 90), (0.95, 90)]):
        meta = metadata_json(sync_identifier="%s/2A5F/%s" % (address, iso(times[index])), sync_version=1)
        records.append(sample("OxygenSaturation", spo2, "%", times[index], source=SOURCE, device=device, metadata=meta))
        records.append(sample("HeartRate", pulse, "count/min", times[index], source=SOURCE, device=device, metadata=meta))
    return records


CASES = [Case("bm1000c", bm1000c_case, fragmented=True), Case("bm1000-plx", bm1000_plx_case)]


if __name__ == "__main__":
    generate(__file__, CASES)
