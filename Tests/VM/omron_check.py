#!/usr/bin/env python3
"""Compares what ingestd stored from the emulated Omron HJ-720IT with the vendor software's CSV
export of the same session (VM tests).

  omron_check.py --csv pedometerData1.csv --steps steps.json --distance distance.json
                 [--days 2009-05-18,2009-05-19,...] [--absent 2009-05-17,...]

steps.json / distance.json: `ingestd samples stepCount|distanceWalkingRunning --source
omron-hj720it --json --unit count|m` of a daemon run with --tz UTC. For every day of --days (default:
every day of the CSV) each hour's steps must equal the CSV's hourly column and the day's distance the
CSV's (miles); days of --absent must have no samples at all. Exits 1 listing each difference.
"""
import argparse
import csv
import datetime
import json
import sys

METRES_PER_MILE = 1609.344


def load_samples(path):
    with open(path) as handle:
        text = handle.read().strip()
    if not text:
        return []
    return json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line.strip()]


def vendor_days(path):
    """date -> (24 hourly step counts, distance in miles) from the vendor export."""
    days = {}
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    header_index = next(i for i, row in enumerate(rows) if row and row[0] == "Date")
    header = rows[header_index]
    hour_columns = [header.index(name) for name in header if name.startswith("Steps ")][:24]
    distance_column = header.index("Distance")
    for row in rows[header_index + 1:]:
        if not row or not row[0]:
            continue
        date = datetime.datetime.strptime(row[0], "%m/%d/%Y").date().isoformat()
        days[date] = ([int(row[c]) for c in hour_columns], float(row[distance_column]))
    return days


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--steps", required=True)
    parser.add_argument("--distance", required=True)
    parser.add_argument("--days")
    parser.add_argument("--absent", default="")
    arguments = parser.parse_args()
    vendor = vendor_days(arguments.csv)
    wanted = arguments.days.split(",") if arguments.days else sorted(vendor)
    absent = [day for day in arguments.absent.split(",") if day]

    stored_steps = {}  # (date, hour) -> steps
    for sample in load_samples(arguments.steps):
        start = sample["start"]
        key = (start[:10], int(start[11:13]))
        stored_steps[key] = stored_steps.get(key, 0) + float(sample["value"])
    stored_distance = {}
    for sample in load_samples(arguments.distance):
        day = sample["start"][:10]
        stored_distance[day] = stored_distance.get(day, 0) + float(sample["value"])

    problems = []
    for day in wanted:
        if day not in vendor:
            problems.append(f"{day} is not in the vendor export")
            continue
        hours, miles = vendor[day]
        for hour, expected in enumerate(hours):
            found = stored_steps.get((day, hour), 0)
            if found != expected:
                problems.append(f"{day} {hour:02d}:00 steps: vendor {expected}, stored {found:g}")
        expected_m = miles * METRES_PER_MILE
        found_m = stored_distance.get(day)
        if found_m is None or abs(found_m - expected_m) > 0.01:
            problems.append(f"{day} distance: vendor {miles} mi = {expected_m:.2f} m, stored {found_m}")
    for day in absent:
        if any(key[0] == day for key in stored_steps) or day in stored_distance:
            problems.append(f"{day}: stored although it should not have been read")
    total = sum(sum(vendor[day][0]) for day in wanted if day in vendor)
    print(f"    {len(wanted)} day(s) compared with the vendor export ({total} steps), {len(absent)} absent")
    for problem in problems[:20]:
        print("    " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
