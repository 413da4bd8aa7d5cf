#!/usr/bin/env python3
"""Asserts on the output of `ingestd samples TYPE --json` (read from stdin) for the VM tests.

  store_check.py [--count N | --min-count N] [--value V] [--values V1,V2,...] [--tolerance T]
                 [--device-contains TEXT] [--allowed V1,V2] [--occurs V=N]...

--value: every sample has this value; --values: the samples' values, oldest first, are exactly
these (as a multiset when --unordered). Prints what it found and exits 1 with the reason when an
expectation does not hold, 2 when the input is not the JSON `samples --json` prints.
"""
import argparse
import json
import sys


def load(text):
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int)
    parser.add_argument("--min-count", type=int)
    parser.add_argument("--value", type=float)
    parser.add_argument("--values")
    parser.add_argument("--unordered", action="store_true")
    parser.add_argument("--tolerance", type=float, default=1e-6)
    parser.add_argument("--device-contains")
    parser.add_argument("--allowed", help="every value is one of these (comma separated)")
    parser.add_argument("--occurs", action="append", default=[], help="VALUE=N: this value occurs exactly N times")
    arguments = parser.parse_args()
    try:
        samples = load(sys.stdin.read())
        values = [float(sample["value"]) for sample in samples]
    except (ValueError, KeyError, TypeError) as failure:
        print(f"store_check: not the output of samples --json: {failure}")
        return 2
    shown = ", ".join("%g" % v for v in values[:12]) + (" …" if len(values) > 12 else "")
    print(f"    {len(samples)} sample(s): {shown}")
    problems = []
    if arguments.count is not None and len(samples) != arguments.count:
        problems.append(f"expected {arguments.count} samples, found {len(samples)}")
    if arguments.min_count is not None and len(samples) < arguments.min_count:
        problems.append(f"expected at least {arguments.min_count} samples, found {len(samples)}")
    if arguments.value is not None:
        wrong = [v for v in values if abs(v - arguments.value) > arguments.tolerance]
        if wrong:
            problems.append(f"expected every value to be {arguments.value:g}, found {wrong[:5]}")
    if arguments.values is not None:
        expected = [float(v) for v in arguments.values.split(",") if v]
        found = sorted(values) if arguments.unordered else values
        wanted = sorted(expected) if arguments.unordered else expected
        if len(found) != len(wanted) or any(abs(a - b) > arguments.tolerance for a, b in zip(found, wanted)):
            problems.append(f"expected values {wanted}, found {found}")
    if arguments.allowed is not None:
        allowed = [float(v) for v in arguments.allowed.split(",") if v]
        wrong = [v for v in values if all(abs(v - a) > arguments.tolerance for a in allowed)]
        if wrong:
            problems.append(f"values outside {allowed}: {wrong[:5]}")
    for occurrence in arguments.occurs:
        value, _, count = occurrence.partition("=")
        found = sum(1 for v in values if abs(v - float(value)) <= arguments.tolerance)
        if found != int(count):
            problems.append(f"expected {value} {count} time(s), found {found}")
    if arguments.device_contains is not None:
        missing = [s for s in samples if arguments.device_contains not in json.dumps(s.get("device", {}))]
        if missing:
            problems.append(f"{len(missing)} sample(s) without '{arguments.device_contains}' in device")
    for problem in problems:
        print(f"    {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
