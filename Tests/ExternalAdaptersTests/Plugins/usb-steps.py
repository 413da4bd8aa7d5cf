#!/usr/bin/env python3
"""A USB external adapter: reads its device line and reports one step count whose value is
bus * 100 + address (so a test can see the device line arrived), then says done."""
import json
import os
import sys

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]

if sys.argv[1:] == ["--describe"]:
    print(json.dumps({"protocol": 1, "id": ADAPTER_ID, "name": "USB steps", "version": "1",
                      "produces": ["HKQuantityTypeIdentifierStepCount"],
                      "matches": [{"usb": {"vendorID": "0fcf", "productID": "1008"}}]}))
    sys.exit(0)

device = json.loads(sys.stdin.readline())["device"]
print(json.dumps({"type": "stepCount", "value": device["bus"] * 100 + device["address"], "unit": "count",
                  "start": "2026-01-01T08:00:00Z", "end": "2026-01-01T09:00:00Z"}), flush=True)
print(json.dumps({"done": True}), flush=True)
