#!/usr/bin/env python3
"""An external adapter whose --describe never answers. It starts a helper process first (whose
pid it writes to $HANG_PID_FILE) to show that the daemon's kill reaches the whole process group."""
import os
import subprocess
import sys
import time

if sys.argv[1:] == ["--describe"]:
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    pid_file = os.environ.get("HANG_PID_FILE")
    if pid_file:
        with open(pid_file + ".tmp", "w") as handle:
            handle.write(str(helper.pid))
        os.rename(pid_file + ".tmp", pid_file)
    time.sleep(3600)
sys.exit(1)
