#!/usr/bin/env python3
"""An external adapter that reads its device line and then never reads stdin again."""
import json
import os
import sys
import time

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]

if sys.argv[1:] == ["--describe"]:
    print(json.dumps({"protocol": 1, "id": ADAPTER_ID, "name": "Sleepy", "version": "1",
                      "produces": ["HKQuantityTypeIdentifierBodyMass"],
                      "matches": [{"ble": {"namePattern": "^SLEEPY"}}]}))
    sys.exit(0)

sys.stdin.readline()
time.sleep(3600)
