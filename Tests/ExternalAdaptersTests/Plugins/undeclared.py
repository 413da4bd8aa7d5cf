#!/usr/bin/env python3
"""An external adapter that declares body mass only, and for each advertisement writes: a valid
body mass, a heart rate (not declared), a body mass of 1000 kg (out of range), a non-finite body
mass, a body mass in count (wrong unit), and a valid body mass claiming another source."""
import json
import os
import sys

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]


def line(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def sample(type_name, value, unit, time, **extra):
    record = {"type": type_name, "value": value, "unit": unit, "start": time, "end": time}
    record.update(extra)
    return json.dumps(record)


if sys.argv[1:] == ["--describe"]:
    line(json.dumps({"protocol": 1, "id": ADAPTER_ID, "name": "Undeclared types", "version": "1",
                     "produces": ["HKQuantityTypeIdentifierBodyMass"],
                     "matches": [{"ble": {"namePattern": "^UNDECLARED"}}]}))
    sys.exit(0)

for text in sys.stdin:
    message = json.loads(text)
    if "advertisement" not in message:
        continue
    time = message["advertisement"]["time"]
    line(sample("HKQuantityTypeIdentifierBodyMass", 70.5, "kg", time))
    line(sample("HKQuantityTypeIdentifierHeartRate", 60, "count/min", time))
    line(sample("HKQuantityTypeIdentifierBodyMass", 1000, "kg", time))
    line(sample("bodyMass", 1, "kg", time).replace('"value": 1,', '"value": 1e999,'))
    line(sample("HKQuantityTypeIdentifierBodyMass", 70, "count", time))
    line(sample("HKQuantityTypeIdentifierBodyMass", 71, "kg", time, source="xiaomi-scale"))
line(json.dumps({"done": True}))
