#!/usr/bin/env python3
"""A TLS-terminating TCP proxy on 127.0.0.1 (Python's ssl module), for the wss:// checks of the
Home Assistant statistics sink: Home Assistant speaks plain HTTP, as behind a reverse proxy.

usage: tls_proxy.py CERT_PEM KEY_PEM LISTEN_PORT UPSTREAM_PORT [SECONDS]

Each TLS connection accepted on 127.0.0.1:LISTEN_PORT is joined to 127.0.0.1:UPSTREAM_PORT in
plain TCP; a failed handshake (a client that does not trust CERT_PEM) closes that connection
only. Prints READY on stdout once listening; exits when its standard input closes (the test
ended) or after SECONDS (default 600).
"""
import os
import signal
import socket
import ssl
import sys
import threading

# A test process may hand down a blocked SIGTERM; the proxy must die when told to.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])

cert, key = sys.argv[1], sys.argv[2]
listen_port, upstream_port = int(sys.argv[3]), int(sys.argv[4])
lifetime = float(sys.argv[5]) if len(sys.argv) > 5 else 600
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)


def pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    for s in (source, target):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def join(raw):
    try:
        raw.settimeout(30)
        client = context.wrap_socket(raw, server_side=True)
        client.settimeout(None)
    except (OSError, ssl.SSLError):
        raw.close()
        return
    try:
        upstream = socket.create_connection(("127.0.0.1", upstream_port))
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
    pump(client, upstream)


server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen_port))
server.listen(16)

def wait_for_end_of_input():
    sys.stdin.buffer.read()
    os._exit(0)


threading.Thread(target=wait_for_end_of_input, daemon=True).start()
timer = threading.Timer(lifetime, lambda: os._exit(0))
timer.daemon = True
timer.start()
print("READY", flush=True)
try:
    while True:
        connection, _ = server.accept()
        threading.Thread(target=join, args=(connection,), daemon=True).start()
except OSError:
    pass
