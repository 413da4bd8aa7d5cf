"""What the real-Home-Assistant drivers (home_assistant.py, home_assistant_statistics.py) share:
the test configuration, a JSON request to Home Assistant's HTTP API, starting and stopping
`python -m homeassistant`, and onboarding a user (its access token)."""
import json
import os
import signal
import subprocess
import time
import urllib.parse
import urllib.request


def write_configuration(config, http_port):
    """configuration.yaml: recorder on SQLite in `config`, http on 127.0.0.1:`http_port`."""
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


def request(base, method, path, body=None, token=None, form=False):
    """One request to Home Assistant at `base`, its JSON answer (30 s bound)."""
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


def start(python, config):
    """Home Assistant in its own process group, its output in `config`/ha.log. --skip-pip: it never
    installs a package while a test runs (scripts/bootstrap-tests installs what the loaded
    integrations need); a missing one fails the start with its name instead of a pip download
    that hangs or reaches the network."""
    log = open(os.path.join(config, "ha.log"), "w")
    return subprocess.Popen([python, "-m", "homeassistant", "--config", config, "--skip-pip"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop(process):
    """SIGTERM to the process group, SIGKILL after 30 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def setup_failures(config):
    """The log lines of integrations that failed to set up, once Home Assistant has given up and
    activated recovery mode (it then never answers the onboarding API); empty before that."""
    try:
        with open(os.path.join(config, "ha.log"), errors="replace") as log:
            lines = log.read().splitlines()
    except OSError:
        return []
    if not any("Activating recovery mode" in line for line in lines):
        return []
    return [line.split("] ", 1)[-1] for line in lines
            if "Setup failed for" in line or "Error during setup of component" in line
            or "Unable to import component" in line][:5] or ["(no failed integration named)"]


def discovery_errors(config):
    """What Home Assistant's MQTT integration refused or could not render, from `config`/ha.log:
    a discovery config that fails its schema ("Error '…' when processing MQTT discovery
    message"), and every ERROR or WARNING line of the MQTT integration, its sensor platforms or
    the template engine (a value or attribute template that does not fit the payload)."""
    try:
        with open(os.path.join(config, "ha.log"), errors="replace") as log:
            lines = log.read().splitlines()
    except OSError:
        return []
    loggers = ("[homeassistant.components.mqtt", "[homeassistant.components.sensor",
               "[homeassistant.components.binary_sensor", "[homeassistant.helpers.template")
    return [line for line in lines
            if "when processing MQTT discovery message" in line
            or ((" ERROR " in line or " WARNING " in line) and any(name in line for name in loggers))]


def onboard(base, process, deadline, fail):
    """Waits (until `deadline`) for Home Assistant to answer, makes the test user through
    onboarding and returns its access token; `fail(message)` when it does not start."""
    config = os.path.dirname(process.args[process.args.index("--config") + 1] + "/")
    while True:
        try:
            request(base, "GET", "/api/onboarding")
            break
        except Exception as error:  # not up yet
            failed = setup_failures(config)
            if failed:
                fail("Home Assistant fell back to recovery mode (a requirement missing from the venv "
                     "scripts/bootstrap-tests makes?): " + " | ".join(failed))
            if process.poll() is not None or time.time() > deadline:
                fail(f"Home Assistant did not start: {error}")
            time.sleep(1)
    client_id = base + "/"
    code = request(base, "POST", "/api/onboarding/users", {"client_id": client_id, "name": "Test", "username": "test",
                                                           "password": "test-password-1", "language": "en"})["auth_code"]
    return request(base, "POST", "/auth/token", {"grant_type": "authorization_code", "code": code, "client_id": client_id},
                   form=True)["access_token"]
