#!/usr/bin/env python3
"""ingestd external adapter, protocol 2: the stored weighings of an ACME vendor scale.

The scale (service FFB0) takes commands written to FFB1 and answers by notification on FFB2:
`A5 01` makes it send each stored weighing as `5A 01 <seq> <weight u16 LE, 0.01 kg> <time u32 LE,
Unix seconds>`, then `5A 0F <count>`. This plugin subscribes, writes the command, turns each
weighing into a BodyMass sample and disconnects after the end marker. It never erases anything
(acme-erasing-scale.py does, after `committed`). Install it as `ingestd-adapter-acme-scale`.
"""
import datetime
import json
import os
import sys

ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]
SERVICE, COMMAND, REPLY = "FFB0", "FFB1", "FFB2"


def emit(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def weighing(address, value):
    """A BodyMass sample from a `5A 01` notification."""
    sequence = value[2]
    kilograms = int.from_bytes(value[3:5], "little") / 100
    seconds = int.from_bytes(value[5:9], "little")
    stamp = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"type": "HKQuantityTypeIdentifierBodyMass", "value": kilograms, "unit": "kg", "start": stamp, "end": stamp,
            "metadata": {"HKMetadataKeySyncIdentifier": f"acme/{address}/{sequence}/{seconds}",
                         "HKMetadataKeySyncVersion": 1}}


if sys.argv[1:] == ["--describe"]:
    emit({"protocol": 2, "id": ID, "name": "ACME scale (example)", "version": "1",
          "summary": "Stored weighings of an ACME vendor scale, by command and notification",
          "produces": ["HKQuantityTypeIdentifierBodyMass"],
          "matches": [{"ble": {"serviceUUIDs": [SERVICE]}}], "connect": True})
    sys.exit(0)

address = None
for line in sys.stdin:
    message = json.loads(line)
    if "device" in message:
        address = message["device"]["address"]
    elif "database" in message:
        emit({"subscribe": {"id": "subscribe", "characteristic": REPLY}})
        emit({"write": {"id": "history", "characteristic": COMMAND, "value": "a501"}})
    elif "notification" in message:
        value = bytes.fromhex(message["notification"]["value"])
        if value[:2] == b"\x5a\x01" and len(value) == 9:
            emit(weighing(address, value))
        elif value[:2] == b"\x5a\x0f":
            emit({"disconnect": {"id": "bye"}})
    elif "failed" in message:
        failure = message["failed"]
        emit({"log": {"level": "warning", "message": f"request {failure['id']} failed: {failure['message']}"}})
    elif "disconnected" in message:
        break
emit({"done": True})
