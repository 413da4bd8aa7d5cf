#!/usr/bin/env python3
"""A real Home Assistant core (PyPI `homeassistant`, in a venv) on 127.0.0.1 for the statistics
sink's acceptance checks, driven only through its public APIs.

    home_assistant_statistics.py VENV_PYTHON CONFIG_DIR HTTP_PORT WORK_DIR

Writes configuration.yaml (recorder on SQLite in CONFIG_DIR, http on 127.0.0.1:HTTP_PORT), starts
`python -m homeassistant`, makes a user through onboarding and a long-lived access token over the
WebSocket API (`auth/long_lived_access_token`), writes it to WORK_DIR/token (mode 0600) and then
WORK_DIR/ready. Then, for N = 1, 2, …: when WORK_DIR/request-N appears (a JSON list of statistic
ids), waits until the recorder's answer is stable and writes `recorder/statistics_during_period`
(hourly, every type) to WORK_DIR/response-N.json. WORK_DIR/stop (or 600 s) stops Home Assistant.
"""
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ha_harness  # noqa: E402

import aiohttp

python, config, http_port, work = sys.argv[1:5]
base = f"http://127.0.0.1:{http_port}"
ha_harness.write_configuration(config, http_port)


async def command(token, message):
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(base + "/api/websocket", timeout=30) as ws:
            await ws.receive_json(timeout=30)
            await ws.send_json({"type": "auth", "access_token": token})
            answer = await ws.receive_json(timeout=30)
            if answer.get("type") != "auth_ok":
                raise RuntimeError(f"auth: {answer}")
            await ws.send_json(dict(message, id=1))
            while True:
                answer = await ws.receive_json(timeout=60)
                if answer.get("id") == 1:
                    if not answer.get("success"):
                        raise RuntimeError(f"{message['type']}: {answer}")
                    return answer["result"]


process = ha_harness.start(python, config)


def stop():
    ha_harness.stop(process)


def fail(message):
    print("FAILED: " + message, file=sys.stderr)
    with open(os.path.join(work, "failed"), "w") as f:
        f.write(message)
    stop()
    sys.exit(1)


try:
    deadline = time.time() + 600
    access = ha_harness.onboard(base, process, deadline, fail)
    token = asyncio.run(command(access, {"type": "auth/long_lived_access_token", "client_name": "ingestd test",
                                         "lifespan": 1}))
    path = os.path.join(work, "token")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(token + "\n")
    open(os.path.join(work, "ready"), "w").close()
    number = 1
    while time.time() < deadline and not os.path.exists(os.path.join(work, "stop")):
        wanted = os.path.join(work, f"request-{number}")
        if not os.path.exists(wanted):
            time.sleep(0.5)
            continue
        with open(wanted) as f:
            ids = json.load(f)
        query = {"type": "recorder/statistics_during_period", "start_time": "2000-01-01T00:00:00+00:00",
                 "statistic_ids": ids, "period": "hour", "types": ["mean", "min", "max", "sum", "state"]}
        previous, stable = None, 0
        settle = time.time() + 120
        while time.time() < settle:
            answer = asyncio.run(command(token, query))
            stable = stable + 1 if answer == previous and answer else 0
            if stable >= 2:
                break
            previous = answer
            time.sleep(2)
        # Written under another name and renamed: the test waits for the file to exist and
        # must never read it half written.
        partial = os.path.join(work, f"response-{number}.json.partial")
        with open(partial, "w") as f:
            json.dump(answer, f)
        os.replace(partial, os.path.join(work, f"response-{number}.json"))
        number += 1
finally:
    stop()
