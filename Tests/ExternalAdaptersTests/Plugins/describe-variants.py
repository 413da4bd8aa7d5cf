#!/usr/bin/env python3
"""--describe misbehaving in the way $DESCRIBE_VARIANT names (for the describe tests)."""
import json
import os
import sys

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]
variant = os.environ.get("DESCRIBE_VARIANT", "good")
good = {"protocol": 1, "id": ADAPTER_ID, "name": "Variant", "version": "1",
        "produces": ["HKQuantityTypeIdentifierBodyMass"],
        "matches": [{"ble": {"serviceUUIDs": ["181D"]}}, {"usb": {"vendorID": "0fcf", "productID": "1008"}}]}

if variant == "garbage":
    print("Usage: frobnicate [options]")
elif variant == "fails":
    print("cannot find libfoo.so.1", file=sys.stderr)
    sys.exit(3)
elif variant == "wrong-id":
    print(json.dumps(dict(good, id="somebody-else")))
elif variant == "protocol-3":
    print(json.dumps(dict(good, protocol=3)))
elif variant == "unknown-type":
    print(json.dumps(dict(good, produces=["HKQuantityTypeIdentifierUnicornCount"])))
elif variant == "huge":
    sys.stdout.write("{" + " " * (100 * 1024) + "}\n")
elif variant == "segfault":
    import signal
    os.kill(os.getpid(), signal.SIGSEGV)
else:
    print(json.dumps(good))
