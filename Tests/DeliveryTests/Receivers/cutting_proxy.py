"""A TCP proxy on 127.0.0.1 that cuts every connection after a number of bytes, for ingestd's
MQTT delivery tests (a link that drops every so many kilobytes).

usage: cutting_proxy.py LISTEN_PORT UPSTREAM_PORT CUT_BYTES LOG_FILE

Each accepted connection is joined to 127.0.0.1:UPSTREAM_PORT; once CUT_BYTES bytes went from
the client upstream (the rest of that read is dropped), both sides are closed. Every connection
appends one line 'connection N' to LOG_FILE when it is accepted. 'READY' is printed on stdout.
"""
import socket
import sys
import threading

listen_port, upstream_port, cut, log_path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
log = open(log_path, "a", buffering=1)
counter = [0]


def close(*sockets):
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def join(client):
    upstream = socket.create_connection(("127.0.0.1", upstream_port))
    counter[0] += 1
    log.write("connection %d\n" % counter[0])

    def downstream():
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                client.sendall(data)
        except OSError:
            pass
        close(client, upstream)

    threading.Thread(target=downstream, daemon=True).start()
    sent = 0
    try:
        while sent < cut:
            data = client.recv(65536)
            if not data:
                break
            data = data[: cut - sent]
            upstream.sendall(data)
            sent += len(data)
    except OSError:
        pass
    close(client, upstream)


server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen_port))
server.listen(16)
print("READY", flush=True)
while True:
    connection, _ = server.accept()
    threading.Thread(target=join, args=(connection,), daemon=True).start()
