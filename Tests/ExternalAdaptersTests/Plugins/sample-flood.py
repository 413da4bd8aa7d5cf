#!/usr/bin/env python3
"""A plugin that floods valid samples: as soon as it has its device line it prints
SAMPLE_FLOOD_COUNT (default 20000) distinct step-count samples, one minute apart, as fast as it
can; then it reads its input to the end and says done. ingestd must take them in bounded batches.
"""
import os
import sys
import time

ADAPTER_ID = os.path.basename(sys.argv[0])[len("ingestd-adapter-"):]


def describe():
    print('{"protocol":1,"id":"%s","name":"Sample flood","version":"1.0","summary":"Floods valid samples",'
          '"produces":["HKQuantityTypeIdentifierStepCount"],"matches":[{"ble":{"serviceUUIDs":["181D"]}}]}' % ADAPTER_ID,
          flush=True)


def stamp(seconds):
    return "%04d-%02d-%02dT%02d:%02d:%02dZ" % time.gmtime(seconds)[:6]


def run():
    count = int(os.environ.get("SAMPLE_FLOOD_COUNT", "20000"))
    sys.stdin.readline()
    base = 1764000000
    lines = []
    for i in range(count):
        start = base + i * 60
        lines.append('{"type":"HKQuantityTypeIdentifierStepCount","value":%d,"unit":"count","start":"%s","end":"%s"}\n'
                     % (i % 100 + 1, stamp(start), stamp(start + 60)))
        if len(lines) == 1000:
            sys.stdout.write("".join(lines))
            lines = []
    sys.stdout.write("".join(lines))
    sys.stdout.flush()
    for _ in sys.stdin:
        pass
    sys.stdout.write('{"done":true}\n')
    sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--describe"]:
        describe()
    elif sys.argv[1:] == ["--run"]:
        run()
    else:
        sys.exit("usage: %s --describe | --run" % sys.argv[0])
