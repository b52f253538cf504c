#!/usr/bin/env python3
"""A tiny HTTP responder for the webhook executor's tests, loopback only.

    webhook_server.py PORT_FILE

Listens on 127.0.0.1 at an ephemeral port, writes the port number to
PORT_FILE once it accepts connections, and serves until killed.  Every
route answers POST (anything else is 405):

    /echo            200 {"echo": <the request's JSON>, "task": <X-Switchyard-Task>}
    /status/NNN      status NNN, body "boom NNN" (text)
    /text            200 with a body that is not JSON
    /slow?ms=N       waits N milliseconds, then answers like /echo

A request body that is not JSON is answered 400.
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: curl reuses connections
    disable_nagle_algorithm = True  # small replies go out at once

    def log_message(self, fmt, *args):  # quiet: tests read stdout
        pass

    def _send(self, status, body, ctype="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cancelled

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _echo(self, raw):
        try:
            doc = json.loads(raw or b"null")
        except ValueError:
            self._send(400, "request body is not JSON", "text/plain")
            return
        task = self.headers.get("X-Switchyard-Task")
        self._send(200, json.dumps({"echo": doc, "task": task}))

    def do_POST(self):
        url = urlsplit(self.path)
        raw = self._body()
        if url.path == "/echo":
            self._echo(raw)
        elif url.path.startswith("/status/"):
            code = int(url.path.rsplit("/", 1)[1])
            self._send(code, "boom %d" % code, "text/plain")
        elif url.path == "/text":
            self._send(200, "this is not json", "text/plain")
        elif url.path == "/slow":
            ms = int(parse_qs(url.query).get("ms", ["1000"])[0])
            time.sleep(ms / 1000.0)
            self._echo(raw)
        else:
            self._send(404, "no route %s" % url.path, "text/plain")

    def do_GET(self):
        self._send(405, "POST only", "text/plain")


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a /slow request never delays the exit
    request_queue_size = 128


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: webhook_server.py PORT_FILE\n")
        return 2
    server = Server(("127.0.0.1", 0), Handler)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, sys.argv[1])  # the reader never sees half a number
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
