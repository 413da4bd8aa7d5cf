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
    """Home Assistant in its own process group, its output in `config`/ha.log."""
    log = open(os.path.join(config, "ha.log"), "w")
    return subprocess.Popen([python, "-m", "homeassistant", "--config", config],
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


def onboard(base, process, deadline, fail):
    """Waits (until `deadline`) for Home Assistant to answer, makes the test user through
    onboarding and returns its access token; `fail(message)` when it does not start."""
    while True:
        try:
            request(base, "GET", "/api/onboarding")
            break
        except Exception as error:  # not up yet
            if process.poll() is not None or time.time() > deadline:
                fail(f"Home Assistant did not start: {error}")
            time.sleep(1)
    client_id = base + "/"
    code = request(base, "POST", "/api/onboarding/users", {"client_id": client_id, "name": "Test", "username": "test",
                                                           "password": "test-password-1", "language": "en"})["auth_code"]
    return request(base, "POST", "/auth/token", {"grant_type": "authorization_code", "code": code, "client_id": client_id},
                   form=True)["access_token"]
