#!/usr/bin/env python3
"""A well-behaved ingestd external adapter (protocol 1): the Mi Smart Scale's weight broadcasts.

Service data 0x181D carries 10 bytes: a control byte (bit0 pounds, bit4 jin, bit5 stabilized,
bit7 weight removed), the weight (uint16 little-endian: 1/200 kg, 1/100 lb or 1/100 jin) and the
scale's clock (year uint16 LE, month, day, hour, minute, second) in local time. One sample per
distinct stabilized reading. The adapter id is taken from the file name (ingestd-adapter-<id>).
"""
import json
import os
import sys
from datetime import datetime, timezone

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]


def emit(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def describe():
    emit({"protocol": 1, "id": ADAPTER_ID, "name": "Mi Smart Scale (Python)", "version": "1.0",
          "summary": "Body mass from Mi Smart Scale advertisements",
          "produces": ["HKQuantityTypeIdentifierBodyMass"],
          "matches": [{"ble": {"serviceUUIDs": ["181D"], "namePattern": "^MI"}}]})


def zone_named(name):
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(name)
    except Exception:  # no zoneinfo module or no tzdata: read the scale clock as UTC
        return timezone.utc


def run():
    zone = timezone.utc
    device = {}
    last = None
    for line in sys.stdin:
        message = json.loads(line)
        if "device" in message:
            device = message["device"]
            zone = zone_named(message.get("timeZone", "UTC"))
            emit({"log": {"level": "info", "message": "serving " + device.get("address", "?")}})
            print("scale plugin started", file=sys.stderr, flush=True)
            continue
        advertisement = message.get("advertisement")
        if advertisement is None:
            continue
        frame = bytes.fromhex(advertisement.get("serviceData", {}).get("181d", ""))
        if len(frame) != 10:
            continue
        control = frame[0]
        if not control & 0x20 or control & 0x80:
            continue  # not stabilized, or the weight is off the scale
        raw = int.from_bytes(frame[1:3], "little")
        if control & 0x01:
            value, unit = raw / 100, "lb"
        else:
            value, unit = raw / 200, "kg"  # kilograms, or jin (1/100 jin = 1/200 kg)
        year = int.from_bytes(frame[3:5], "little")
        month, day, hour, minute, second = frame[5:10]
        reading = (raw, year, month, day, hour, minute, second)
        if reading == last:
            continue
        last = reading
        when = datetime(year, month, day, hour, minute, second, tzinfo=zone).astimezone(timezone.utc)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        address = advertisement["address"]
        emit({"type": "HKQuantityTypeIdentifierBodyMass", "value": value, "unit": unit,
              "start": stamp, "end": stamp,
              "device": {"name": advertisement.get("name") or device.get("name") or "MI_SCALE",
                         "manufacturer": "Xiaomi", "localIdentifier": address},
              "metadata": {"HKMetadataKeySyncIdentifier": "%s/%s/%d" % (address, stamp, raw),
                           "HKMetadataKeySyncVersion": 1}})
    emit({"done": True})


if __name__ == "__main__":
    if sys.argv[1:] == ["--describe"]:
        describe()
    elif sys.argv[1:] == ["--run"]:
        run()
    else:
        sys.exit("usage: %s --describe | --run" % sys.argv[0])
