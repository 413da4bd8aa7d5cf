#!/usr/bin/env python3
"""An external adapter that starts a helper in a session of its own (setsid), which would
outlive it, then exits when its input ends. The helper's pid goes to helper.pid beside it."""
import json
import os
import sys
import time

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]

if sys.argv[1:] == ["--describe"]:
    print(json.dumps({"protocol": 1, "id": ADAPTER_ID, "name": "Setsid helper", "version": "1",
                      "produces": ["HKQuantityTypeIdentifierBodyMass"],
                      "matches": [{"ble": {"namePattern": "^HELPER"}}]}))
    sys.exit(0)

sys.stdin.readline()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        # The grandchild: in its own session and group, no longer a member of the plugin's group.
        pid_file = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "helper.pid")
        with open(pid_file + ".tmp", "w") as handle:
            handle.write(str(os.getpid()))
        os.rename(pid_file + ".tmp", pid_file)
        time.sleep(3600)
    os._exit(0)
for line in sys.stdin:
    pass
