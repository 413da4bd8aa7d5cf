"""A test HTTP receiver on 127.0.0.1 for ingestd's HTTP sinks.

usage: http_receiver.py PORT LOG_FILE PLAN

PLAN is a comma-separated list of answers, one per request in arrival order, then 200 for the
rest: a status code (200, 400, 500, 301, ...), 'timeout' (hold the request 3 s, then close
without answering), 'slow' (wait 20 ms, then 200) or 'echoNNN' (answer status NNN with the request's
headers as the body, as a debug proxy or a WAF's error page does). Every request is logged as one JSON line:
{"n":N,"path":...,"status":S,"uuids":[...],"auth":...}; uuids are those of the body's samples
and deletions (or Health Auto Export points). 'READY' is printed on stdout once listening.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, log_path, plan = int(sys.argv[1]), sys.argv[2], [p for p in sys.argv[3].split(",") if p]
lock = threading.Lock()
counter = [0]
log = open(log_path, "a", buffering=1)


def uuids_of(body):
    try:
        document = json.loads(body)
    except ValueError:
        return ["<invalid json>"]
    found = [s.get("uuid") for s in document.get("samples", [])]
    found += [d.get("uuid") for d in document.get("deleted", [])]
    for metric in document.get("data", {}).get("metrics", []):
        found += [p.get("uuid") for p in metric.get("data", [])]
    return [str(u).lower() for u in found]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with lock:
            counter[0] += 1
            n = counter[0]
        answer = plan[n - 1] if n <= len(plan) else "200"
        if answer == "timeout":
            time.sleep(3)
            self.close_connection = True
            return
        if answer == "slow":
            time.sleep(0.02)
            answer = "200"
        echo = answer.startswith("echo")
        status = int(answer[4:] if echo else answer)
        entry = {"n": n, "path": self.path, "status": status, "uuids": uuids_of(body),
                 "auth": self.headers.get("Authorization"), "type": self.headers.get("Content-Type")}
        with lock:
            log.write(json.dumps(entry) + "\n")
        payload = b"refused: bad record" if 400 <= status < 500 else b"ok"
        if echo:
            payload = ("you sent: " + " | ".join("%s: %s" % item for item in self.headers.items())).encode()
        self.send_response(status)
        if 300 <= status < 400:
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True
print("READY", flush=True)
server.serve_forever()
