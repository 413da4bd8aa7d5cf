#!/usr/bin/env python3
"""A protocol-2 external adapter that claims the ACME scale's connections (service FFB0) and then
says nothing at all: no request, no record, and it never reads its stdin or exits by itself
(issue 23, item 3: such a plugin held `decode`/`replay` for 600 s per connection)."""
import json
import os
import sys
import time

if sys.argv[1:] == ["--describe"]:
    print(json.dumps({"protocol": 2, "id": os.path.basename(sys.argv[0])[len("ingestd-adapter-"):],
                      "name": "silent claimer", "version": "1",
                      "produces": ["HKQuantityTypeIdentifierBodyMass"],
                      "matches": [{"ble": {"serviceUUIDs": ["FFB0"]}}], "connect": True}))
    sys.exit(0)
time.sleep(3600)
