#!/usr/bin/env python3
"""A real Home Assistant core (PyPI `homeassistant`, in a venv) on 127.0.0.1, driven only
through its public APIs, for the MQTT sink's acceptance checks.

    home_assistant.py VENV_PYTHON CONFIG_DIR HTTP_PORT MQTT_PORT OUT_JSON [SECONDS [ENTITIES]]

Writes configuration.yaml (recorder on SQLite in CONFIG_DIR, http on 127.0.0.1:HTTP_PORT),
starts `python -m homeassistant`, makes a user and a token through onboarding, adds the MQTT
integration through the config flow (broker 127.0.0.1:MQTT_PORT), waits for the retained
discovery and states to arrive, writes /api/states to OUT_JSON and stops Home Assistant.
Without ENTITIES (comma-separated entity ids) it waits SECONDS; with them it waits until each
has a state other than unknown/unavailable (at most SECONDS, a loaded machine is slow), then
2 s more so that an entity that should not be there has its chance to show up. Exits non-zero
with a message on stderr when a step fails, and with Home Assistant's own log lines when it
refused a discovery config (its schema) or could not render a state or attribute (its
templates): the validation against Home Assistant's discovery schemas. Bounded in time.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ha_harness  # noqa: E402

python, config, http_port, mqtt_port, out = sys.argv[1:6]
settle = float(sys.argv[6]) if len(sys.argv) > 6 else 10
expected = [e for e in sys.argv[7].split(",") if e] if len(sys.argv) > 7 else []
base = f"http://127.0.0.1:{http_port}"
ha_harness.write_configuration(config, http_port)


def request(method, path, body=None, token=None, form=False):
    return ha_harness.request(base, method, path, body, token, form)


process = ha_harness.start(python, config)


def fail(message):
    print(message, file=sys.stderr)
    print("FAILED: " + message)
    stop()
    sys.exit(1)


def stop():
    ha_harness.stop(process)


try:
    deadline = time.time() + 240
    token = ha_harness.onboard(base, process, deadline, fail)
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
    if expected:
        deadline = time.time() + settle
        while True:
            shown = {e["entity_id"]: e["state"] for e in request("GET", "/api/states", token=token)}
            missing = [e for e in expected if shown.get(e, "unknown") in ("unknown", "unavailable")]
            if not missing:
                break
            if time.time() > deadline:
                print(f"after {settle:.0f} s still unknown or missing: {missing}", file=sys.stderr)
                break  # the test names what is wrong
            time.sleep(1)
        time.sleep(2)
    else:
        time.sleep(settle)
    states = request("GET", "/api/states", token=token)
    with open(out, "w") as f:
        json.dump(states, f)
finally:
    stop()
refused = ha_harness.discovery_errors(config)
if refused:
    print("FAILED: Home Assistant refused or could not render what ingestd published:\n" + "\n".join(refused[:10]))
    sys.exit(1)
