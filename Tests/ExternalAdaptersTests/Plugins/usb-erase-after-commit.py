#!/usr/bin/env python3
"""A protocol-2 USB external adapter: reports two step counts with its own uuids, then waits for
`committed` lines; once both are committed with deviceMayForget it logs that it erased the
device, if any batch was only held it logs that it kept the memory; then says done."""
import json
import os
import sys

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]


def emit(message):
    print(json.dumps(message), flush=True)


if sys.argv[1:] == ["--describe"]:
    emit({"protocol": 2, "id": ADAPTER_ID, "name": "USB erase after commit", "version": "1",
          "produces": ["HKQuantityTypeIdentifierStepCount"],
          "matches": [{"usb": {"vendorID": "0fcf", "productID": "1008"}}]})
    sys.exit(0)

uuids = {"0b0b0b0b-0000-4000-8000-000000000001", "0b0b0b0b-0000-4000-8000-000000000002"}
waiting = set(uuids)
kept = False
for line in sys.stdin:
    message = json.loads(line)
    if "device" in message:
        for number, sample_uuid in enumerate(sorted(uuids)):
            emit({"uuid": sample_uuid, "type": "stepCount", "value": 100 + number, "unit": "count",
                  "start": f"2026-01-01T{8 + number:02}:00:00Z", "end": f"2026-01-01T{9 + number:02}:00:00Z"})
    elif "committed" in message:
        committed = message["committed"]
        kept = kept or not committed["deviceMayForget"]
        waiting.difference_update(committed["uuids"])
        if not waiting:
            if kept:
                emit({"log": {"level": "info", "message": "kept: the samples wait for a grant"}})
            else:
                emit({"log": {"level": "info", "message": f"erased after the commit of {len(uuids)}"}})
            emit({"done": True})
            break
