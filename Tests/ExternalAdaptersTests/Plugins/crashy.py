#!/usr/bin/env python3
"""An external adapter that crashes (SIGABRT) after every third advertisement it answers (every
CRASH_EVERY-th; never when CRASH_EVERY is 0).

Each advertisement with manufacturer data for company 0xFFFF becomes one heart-rate sample whose
value is the first payload byte (beats per minute), at the advertisement's time.
"""
import json
import os
import sys

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]


def emit(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


if sys.argv[1:] == ["--describe"]:
    emit({"protocol": 1, "id": ADAPTER_ID, "name": "Crashing heart rate", "version": "0.1",
          "produces": ["HKQuantityTypeIdentifierHeartRate"],
          "matches": [{"ble": {"companyIDs": [65535]}}]})
    sys.exit(0)

crash_every = int(os.environ.get("CRASH_EVERY", "3"))
answered = 0
for line in sys.stdin:
    message = json.loads(line)
    if "device" in message:
        emit({"log": {"level": "info", "message": "started"}})
        continue
    advertisement = message["advertisement"]
    payload = bytes.fromhex(advertisement.get("manufacturerData", {}).get("ffff", ""))
    if not payload:
        continue
    emit({"type": "HKQuantityTypeIdentifierHeartRate", "value": payload[0], "unit": "count/min",
          "start": advertisement["time"], "end": advertisement["time"]})
    answered += 1
    if crash_every and answered % crash_every == 0:
        os.abort()
emit({"done": True})
