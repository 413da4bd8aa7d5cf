#!/usr/bin/env python3
"""ingestd external adapter, protocol 2: an ACME vendor scale whose memory is erased, but only
after ingestd committed every weighing read from it.

Each sample carries a uuid the plugin made; ingestd answers each committed batch with
`{"committed":{"uuids":[…],"deviceMayForget":…}}`. When every weighing of the transfer is
committed with `deviceMayForget` true, the plugin writes `A5 02` (erase) and disconnects. When a
batch is only held (its type is not granted yet: `deviceMayForget` false), the memory is kept.
The scale's protocol is described in acme-scale.py. Install as `ingestd-adapter-acme-erasing-scale`.
"""
import datetime
import json
import os
import sys
import uuid

ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]
SERVICE, COMMAND, REPLY = "FFB0", "FFB1", "FFB2"


def emit(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


if sys.argv[1:] == ["--describe"]:
    emit({"protocol": 2, "id": ID, "name": "ACME scale, erased after commit (example)", "version": "1",
          "produces": ["HKQuantityTypeIdentifierBodyMass"],
          "matches": [{"ble": {"serviceUUIDs": [SERVICE]}}], "connect": True})
    sys.exit(0)

address = None
uncommitted = set()   # uuids of samples printed and not yet committed
transfer_ended = False
kept = False          # some weighing is only held: the scale must keep its memory
erasing = False


def next_step():
    global erasing
    if not transfer_ended or uncommitted or erasing:
        return
    if kept:
        emit({"log": {"level": "notice", "message": "memory kept: weighings wait for a grant"}})
        emit({"disconnect": {"id": "bye"}})
    else:
        erasing = True
        emit({"write": {"id": "erase", "characteristic": COMMAND, "value": "a502"}})


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
            seconds = int.from_bytes(value[5:9], "little")
            stamp = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            sample_uuid = str(uuid.uuid4())
            uncommitted.add(sample_uuid)
            emit({"uuid": sample_uuid, "type": "HKQuantityTypeIdentifierBodyMass",
                  "value": int.from_bytes(value[3:5], "little") / 100, "unit": "kg", "start": stamp, "end": stamp,
                  "metadata": {"HKMetadataKeySyncIdentifier": f"acme/{address}/{value[2]}/{seconds}",
                               "HKMetadataKeySyncVersion": 1}})
        elif value[:2] == b"\x5a\x0f":
            transfer_ended = True
            next_step()
    elif "committed" in message:
        committed = message["committed"]
        if not committed["deviceMayForget"]:
            kept = True
        uncommitted.difference_update(committed["uuids"])
        next_step()
    elif "result" in message and message["result"]["id"] == "erase":
        emit({"log": {"level": "info", "message": "memory erased after the commit"}})
        emit({"disconnect": {"id": "bye"}})
    elif "failed" in message:
        failure = message["failed"]
        emit({"log": {"level": "warning", "message": f"request {failure['id']} failed: {failure['message']}"}})
        if failure["id"] == "erase":
            emit({"disconnect": {"id": "bye"}})
    elif "disconnected" in message:
        break
emit({"done": True})
