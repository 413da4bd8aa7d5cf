#!/usr/bin/env python3
"""Asserts, for the VM tests, that what an MQTT sink published equals what the store holds:
every sample of `ingestd samples TYPE --json` (the file given) arrived exactly once, by uuid, on
a topic ending in /TYPE, and nothing else arrived there.

  mqtt_check.py MESSAGES SAMPLES_JSON TYPE

MESSAGES is the output of `mosquitto_sub -v` (one `topic payload` line per message).
"""
import json
import sys
from collections import Counter


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    messages_path, samples_path, type_name = sys.argv[1:]
    with open(samples_path) as handle:
        text = handle.read().strip()
    samples = json.loads(text) if text.startswith("[") else [json.loads(l) for l in text.splitlines() if l.strip()]
    stored = {sample["uuid"].lower() for sample in samples}
    arrived = Counter()
    unreadable = 0
    with open(messages_path, errors="replace") as handle:
        for line in handle:
            topic, _, payload = line.rstrip("\n").partition(" ")
            if not topic.endswith("/" + type_name):
                continue
            try:
                arrived[json.loads(payload)["uuid"].lower()] += 1
            except (ValueError, KeyError, TypeError, AttributeError):
                unreadable += 1
    repeated = {uuid: n for uuid, n in arrived.items() if n > 1}
    missing = stored - set(arrived)
    unknown = set(arrived) - stored
    print(f"    {len(stored)} stored, {sum(arrived.values())} message(s) with {len(arrived)} uuid(s) on */{type_name}")
    problems = []
    if not stored:
        problems.append("the store holds no samples of this type")
    if repeated:
        problems.append(f"{len(repeated)} uuid(s) arrived more than once, e.g. {sorted(repeated.items())[:3]}")
    if missing:
        problems.append(f"{len(missing)} stored sample(s) never arrived, e.g. {sorted(missing)[:3]}")
    if unknown:
        problems.append(f"{len(unknown)} uuid(s) arrived that the store does not hold, e.g. {sorted(unknown)[:3]}")
    if unreadable:
        problems.append(f"{unreadable} message(s) without a JSON uuid")
    for problem in problems:
        print(f"    {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
