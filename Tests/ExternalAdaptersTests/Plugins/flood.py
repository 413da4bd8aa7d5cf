#!/usr/bin/env python3
"""A hostile external adapter: describes itself correctly, then floods stdout with garbage
(not JSON, lines over 64 KiB, objects that are no protocol message, deep nesting, unknown types)
without ever reading its stdin."""
import json
import os
import sys

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]

if sys.argv[1:] == ["--describe"]:
    print(json.dumps({"protocol": 1, "id": ADAPTER_ID, "name": "Flood", "version": "6.6.6",
                      "produces": ["HKQuantityTypeIdentifierStepCount"],
                      "matches": [{"ble": {"namePattern": "^FLOOD"}}]}))
    sys.exit(0)

pattern = [
    "this is not json",
    "x" * (70 * 1024),
    '{"hello":"world"}',
    "[" * 10000 + "]" * 10000,
    '{"type":"HKQuantityTypeIdentifierNoSuchThing","value":1,"unit":"count",'
    '"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z"}',
]
chunk = "".join(line + "\n" for line in pattern)
while True:
    sys.stdout.write(chunk)
