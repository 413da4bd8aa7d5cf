#!/usr/bin/env python3
"""A real Home Assistant core (PyPI `homeassistant`, in a venv) on 127.0.0.1, driven only
through its public APIs, for the MQTT sink's acceptance checks.

    home_assistant.py VENV_PYTHON CONFIG_DIR HTTP_PORT MQTT_PORT OUT_JSON [SECONDS]

Writes configuration.yaml (recorder on SQLite in CONFIG_DIR, http on 127.0.0.1:HTTP_PORT),
starts `python -m homeassistant`, makes a user and a token through onboarding, adds the MQTT
integration through the config flow (broker 127.0.0.1:MQTT_PORT), waits SECONDS for the
retained discovery and states to arrive, writes /api/states to OUT_JSON and stops Home
Assistant. Exits non-zero with a message on stderr when a step fails. Bounded in time.
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

python, config, http_port, mqtt_port, out = sys.argv[1:6]
settle = float(sys.argv[6]) if len(sys.argv) > 6 else 10
base = f"http://127.0.0.1:{http_port}"
os.makedirs(config, exist_ok=True)
with open(os.path.join(config, "configuration.yaml"), "w") as f:
    f.write(f"""homeassistant:
  name: ingestd test
  time_zone: UTC
  unit_system: metric
  latitude: 0
  longitude: 0
  elevation: 0
recorder:
  db_url: sqlite:///{config}/home-assistant_v2.db
  commit_interval: 1
history:
http:
  server_host: 127.0.0.1
  server_port: {http_port}
api:
websocket_api:
""")


def request(method, path, body=None, token=None, form=False):
    data = None
    headers = {}
    if body is not None:
        if form:
            data = urllib.parse.urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read() or b"null")


import urllib.parse  # noqa: E402

log = open(os.path.join(config, "ha.log"), "w")
process = subprocess.Popen([python, "-m", "homeassistant", "--config", config],
                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def fail(message):
    print(message, file=sys.stderr)
    print("FAILED: " + message)
    stop()
    sys.exit(1)


def stop():
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


try:
    deadline = time.time() + 240
    while True:
        try:
            request("GET", "/api/onboarding")
            break
        except Exception as error:  # not up yet
            if process.poll() is not None or time.time() > deadline:
                fail(f"Home Assistant did not start: {error}")
            time.sleep(1)
    client_id = base + "/"
    code = request("POST", "/api/onboarding/users", {"client_id": client_id, "name": "Test", "username": "test",
                                                     "password": "test-password-1", "language": "en"})["auth_code"]
    token = request("POST", "/auth/token", {"grant_type": "authorization_code", "code": code, "client_id": client_id},
                    form=True)["access_token"]
    flow = request("POST", "/api/config/config_entries/flow", {"handler": "mqtt"}, token=token)
    result = request("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                     {"broker": "127.0.0.1", "port": int(mqtt_port)}, token=token)
    if result.get("type") != "create_entry":
        fail(f"MQTT config flow: {result}")
    deadline = time.time() + 60
    while not any(e["domain"] == "mqtt" and e["state"] == "loaded"
                  for e in request("GET", "/api/config/config_entries/entry", token=token)):
        if time.time() > deadline:
            fail("the MQTT integration did not load")
        time.sleep(1)
    time.sleep(settle)
    states = request("GET", "/api/states", token=token)
    with open(out, "w") as f:
        json.dump(states, f)
finally:
    stop()
