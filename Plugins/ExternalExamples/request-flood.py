#!/usr/bin/env python3
"""ingestd external adapter, protocol 2: a misbehaving plugin that floods its device with
requests once connected (20,000 writes at once). ingestd lets through what the rate and
pending limits allow, refuses the rest (`failed` with `rate-limited` / `too-many-requests`,
counted), kills the plugin after 1,000 refused lines in a row and disconnects; the daemon and
other devices carry on. Install as `ingestd-adapter-request-flood` only to see that happen.
"""
import json
import os
import sys

ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]


def emit(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")


if sys.argv[1:] == ["--describe"]:
    emit({"protocol": 2, "id": ID, "name": "Request flood (example)", "version": "1",
          "produces": ["HKQuantityTypeIdentifierBodyMass"],
          "matches": [{"ble": {"serviceUUIDs": ["FFB0"]}}], "connect": True})
    sys.exit(0)

for line in sys.stdin:
    if "database" in json.loads(line):
        try:
            for number in range(20000):
                emit({"write": {"id": number, "characteristic": "FFB1", "value": "a503", "withResponse": False}})
            sys.stdout.flush()
        except BrokenPipeError:
            sys.exit(1)
emit({"done": True})
