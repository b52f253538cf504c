"""The HTTP side of the loopback API server: TLS (and client certificates
when a client CA is given), bearer tokens, the routes of jobs and pods,
watches as chunked streams, pod logs, and the test-only endpoints
/_test/faults and /_test/state."""
import io
import json
import os
import re
import select
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import discovery, tables
from .jobs import delete_policy
from .store import ApiError, Selector, Watcher, status_object

NS_PATH = re.compile(r"^/(api/v1|apis/batch/v1)(?:/watch)?(?:/namespaces/([^/]+))?/(jobs|pods)(?:/([^/]+)(?:/(log|status))?)?$")
GROUP = {"jobs": "batch", "pods": ""}
KIND = {"jobs": ("JobList", "batch/v1"), "pods": ("PodList", "v1")}


class Faults:
    """The faults armed through POST /_test/faults, and the counters of
    GET /_test/state (all under the store's lock)."""

    def __init__(self):
        self.gone = 0            # the next N watches answer 410 Expired
        self.rules = []          # {"kind", "count", "prefix", "method", "code", "retry_after", "after"}
        self.requests = {}
        self.verbs = {}
        self.throttled = 0
        self.injected = 0
        self.gone_sent = 0
        self.watches = 0
        self.watches_total = 0
        # Watches opened, by resource ("jobs", "pods"), counted when they
        # start: the request log has a watch only once it has ended.
        self.watches_by_resource = {}

    def add(self, kind, t):
        code = 429 if kind == "throttle" else int(t.get("code", 503))
        self.rules.append({"kind": kind, "count": int(t.get("count", 1)), "prefix": t.get("prefix", "/"),
                           "method": t.get("method"), "code": code, "after": bool(t.get("after")),
                           "retry_after": int(t.get("retry_after", 1)) if kind == "throttle" else None})

    def match(self, method, path):
        """The armed rule this request meets, counted down; or None."""
        for t in self.rules:
            if t["count"] > 0 and path.startswith(t["prefix"]) and t["method"] in (None, method):
                t["count"] -= 1
                if t["kind"] == "throttle":
                    self.throttled += 1
                else:
                    self.injected += 1
                return t
        return None


MESSAGES = {429: ("TooManyRequests", "Too many requests, please try again later."),
            500: ("InternalError", "Internal error occurred: injected by the test server"),
            503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
            504: ("Timeout", "Timeout: request did not complete within requested timeout - context deadline exceeded")}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def __init__(self, addr, store, controller, token, tls, bookmark_interval, watch_timeout, log):
        super().__init__(addr, Handler)
        self.store, self.controller, self.token, self.tls = store, controller, token, tls
        self.bookmark_interval, self.watch_timeout = bookmark_interval, watch_timeout
        self.faults = Faults()
        self.log_file = open(log, "a") if log else None
        self.log_lock = threading.Lock()

    def get_request(self):
        sock, addr = super().get_request()
        # Headers and body are two writes: without this, Nagle's algorithm
        # and the client's delayed ACK hold every answer back 40 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if not isinstance(e, (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout, OSError)):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "switchyard-k8s-test"

    def setup(self):
        if self.server.tls is not None:
            self.request.settimeout(10)
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()

    def log_message(self, fmt, *args):
        pass

    # --- answers ------------------------------------------------------------------

    def send_text(self, code, text, ctype="application/json", headers=None):
        data = text.encode() if isinstance(text, str) else text
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_obj(self, code, obj, headers=None):
        self.send_text(code, obj if isinstance(obj, str) else json.dumps(obj), headers=headers)

    def start_chunked(self, ctype="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")

    # --- dispatch -----------------------------------------------------------------

    def do_GET(self):
        self.dispatch()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_GET

    def authenticated(self):
        if self.server.tls is not None and self.request.getpeercert():
            return True
        auth = self.headers.get("Authorization", "")
        return auth == f"Bearer {self.server.token}"

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = urllib.parse.parse_qs(url.query)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        srv = self.server
        code = 0
        try:
            if not self.authenticated():
                raise ApiError(401, "Unauthorized", "Unauthorized")
            with srv.store.lock:
                key = f"{self.command} {path}"
                srv.faults.requests[key] = srv.faults.requests.get(key, 0) + 1
                rule = None if path.startswith("/_test/") else srv.faults.match(self.command, path)
            if rule is not None and not rule["after"]:
                code = self.inject(rule)
            else:
                body = None
                if raw:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        raise ApiError(400, "BadRequest", "the body of the request could not be decoded as JSON")
                if rule is None:
                    code = self.route(path, query, body)
                else:   # done, then the answer lost: the client cannot tell whether it was
                    real, self.wfile = self.wfile, io.BytesIO()
                    try:
                        self.route(path, query, body)
                    except ApiError:
                        pass
                    finally:
                        self.wfile = real
                    code = self.inject(rule)
        except ApiError as e:
            code = e.code
            self.send_obj(e.code, e.status, e.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug of this server: say it, as a 500 Status
            import traceback
            traceback.print_exc()
            code = 500
            self.close_connection = True
            try:
                self.send_obj(500, status_object(500, "InternalError", f"Internal error occurred: {e!r}"))
            except OSError:
                pass
        if srv.log_file:
            with srv.log_lock:
                srv.log_file.write(json.dumps({"method": self.command, "path": self.path, "code": code}) + "\n")
                srv.log_file.flush()

    def inject(self, rule):
        """An armed fault's answer: none (the connection closed), or a Status."""
        self.close_connection = rule["kind"] == "drop" or self.close_connection
        if rule["kind"] == "drop":
            return 0
        reason, msg = MESSAGES.get(rule["code"], ("InternalError", f"injected HTTP {rule['code']}"))
        details = {"retryAfterSeconds": rule["retry_after"]} if rule["retry_after"] else None
        headers = {"Retry-After": rule["retry_after"]} if rule["retry_after"] else None
        self.send_obj(rule["code"], status_object(rule["code"], reason, msg, details), headers)
        return rule["code"]

    def route(self, path, query, body):
        srv = self.server
        m = self.command
        if path.startswith("/_test/"):
            return self.test_endpoint(path, body)
        if m == "GET":
            fixed = {"/version": discovery.VERSION,
                     "/api": discovery.api_versions(f"127.0.0.1:{srv.server_address[1]}"),
                     "/api/v1": discovery.CORE_V1, "/apis": discovery.API_GROUPS,
                     "/apis/batch": discovery.BATCH, "/apis/batch/v1": discovery.BATCH_V1}
            if path in fixed:
                self.send_obj(200, fixed[path])
                return 200
            if path == "/openapi/v2":
                if "protobuf" in self.headers.get("Accept", ""):
                    self.send_text(200, discovery.OPENAPI_PB,
                                   "application/octet-stream")
                else:
                    self.send_obj(200, discovery.OPENAPI_JSON)
                return 200
            if path in ("/healthz", "/livez", "/readyz"):
                self.send_text(200, "ok", "text/plain")
                return 200
            if path == "/api/v1/namespaces":
                self.send_obj(200, {"kind": "NamespaceList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                    "items": [discovery.namespace("default")]})
                return 200
            nm = re.match(r"^/api/v1/namespaces/([^/]+)$", path)
            if nm:
                self.send_obj(200, discovery.namespace(nm.group(1)))
                return 200
        r = NS_PATH.match(path)
        if not r or (r.group(1) == "api/v1") != (r.group(3) == "pods"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource",
                           {} if m == "GET" else None)
        _, ns, resource, name, sub = r.groups()
        self.table = None
        if m == "GET" and sub is None and tables.wants_table(self.headers.get("Accept")):
            self.table = (query.get("includeObject") or ["Metadata"])[0]
        watch = "/watch/" in path or (query.get("watch") or [""])[0] in ("1", "true", "True")
        self.verb(resource, sub, name, watch)
        if sub == "log" and m == "GET" and resource == "pods":
            return self.pod_log(ns, name, query)
        if sub is not None and not (sub == "status" and m == "GET"):
            raise ApiError(405, "MethodNotAllowed", f"the server does not allow this method on the requested resource")
        if name is None and ns is None and m != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if m == "GET" and name is None:
            sel = Selector(ns, (query.get("labelSelector") or [""])[0], (query.get("fieldSelector") or [""])[0])
            if watch:
                return self.watch(resource, sel, query)
            return self.list(resource, sel)
        if m == "GET":
            if watch:
                return self.watch(resource, Selector(ns, "", f"metadata.name={name}"), query)
            with srv.store.lock:
                obj = srv.store.get(resource, ns, name)
                if obj is None:
                    raise ApiError(404, "NotFound", f'{resource}{"." + GROUP[resource] if GROUP[resource] else ""} "{name}" not found',
                                   {"name": name, "group": GROUP[resource], "kind": resource})
                if self.table is not None:
                    text = srv.store.snapshot(tables.table(resource, [obj], srv.store.rv, self.table))
                else:
                    text = srv.store.snapshot(obj)
            self.send_obj(200, text)
            return 200
        if m == "POST" and name is None and resource == "jobs":
            if ns is None:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            if (query.get("dryRun") or [""])[0] == "All":
                raise ApiError(400, "BadRequest", "dryRun is not supported by the test server")
            text = srv.controller.create_job(ns, body)
            self.send_obj(201, text)
            return 201
        if m == "DELETE" and name is not None:
            grace = (body or {}).get("gracePeriodSeconds") if isinstance(body, dict) else None
            if grace is None and query.get("gracePeriodSeconds"):
                grace = int(query["gracePeriodSeconds"][0])
            if resource == "jobs":
                text = srv.controller.delete_job(ns, name, delete_policy(query, body), grace)
            else:
                text = srv.controller.delete_pod(ns, name, grace)
            self.send_obj(200, text)
            return 200
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def verb(self, resource, sub, name, watch):
        m = self.command
        v = {"POST": "create", "DELETE": "delete", "PUT": "update", "PATCH": "patch"}.get(m)
        if v is None:
            v = "watch" if watch else ("list" if name is None else "get")
        key = f"{v} {resource}" + (f"/{sub}" if sub else "")
        f = self.server.faults
        with self.server.store.lock:
            f.verbs[key] = f.verbs.get(key, 0) + 1

    def list(self, resource, sel):
        store = self.server.store
        with store.lock:
            objs = sorted(store.list(resource, sel), key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
            if self.table is not None:
                text = store.snapshot(tables.table(resource, objs, store.rv, self.table))
            else:
                items = ",".join(store.snapshot(o) for o in objs)
            rv = store.rv
        if self.table is not None:
            self.send_obj(200, text)
            return 200
        kind, api = KIND[resource]
        self.send_obj(200, '{"kind":"%s","apiVersion":"%s","metadata":{"resourceVersion":"%d"},"items":[%s]}'
                      % (kind, api, rv, items))
        return 200

    # --- watch --------------------------------------------------------------------

    def watch(self, resource, sel, query):
        srv = self.server
        store, faults = srv.store, srv.faults
        rv_arg = (query.get("resourceVersion") or [""])[0]
        try:
            rv = int(rv_arg) if rv_arg not in ("", "0") else None
        except ValueError:
            raise ApiError(400, "BadRequest", f'invalid resource version: "{rv_arg}"')
        timeout = srv.watch_timeout
        if query.get("timeoutSeconds"):
            timeout = min(timeout, float(query["timeoutSeconds"][0]))
        bookmarks = (query.get("allowWatchBookmarks") or [""])[0] in ("1", "true", "True")
        kind, api = KIND[resource]
        bookmark_kind = kind[:-4]
        self.start_chunked()
        end = time.monotonic() + timeout
        next_mark = time.monotonic() + srv.bookmark_interval
        with store.lock:
            faults.watches += 1
            faults.watches_total += 1
            faults.watches_by_resource[resource] = faults.watches_by_resource.get(resource, 0) + 1
            if faults.gone > 0:
                faults.gone -= 1
                pending = None
            elif rv is None:
                objs = sorted(store.list(resource, sel), key=lambda o: o["metadata"]["name"])
                pending = [b'{"type":"ADDED","object":%s}\n' % store.snapshot(o).encode() for o in objs]
            else:
                evs = store.since(rv)
                pending = None if evs is None else [e.line for e in evs if e.resource == resource and sel.match(e.obj)]
            last = store.rv
            oldest = store.first
            w = Watcher(store, resource, sel)
            if pending is not None:
                store.add_watcher(w)    # under the same lock as the replay: no event falls between
        try:
            if pending is None:
                with store.lock:
                    faults.gone_sent += 1
                self.chunk(gone_line(rv if rv is not None else last, oldest))
                return 200
            for line in pending:
                self.event(line, resource)
            while True:
                with store.lock:
                    until = min(end, next_mark) if bookmarks else end
                    gone = False
                    while not w.queue and not w.closed and time.monotonic() < until:
                        w.cond.wait(min(until - time.monotonic(), 0.5))
                        gone = self.peer_gone()
                        if gone:
                            break
                    if w.closed or gone:
                        break
                    out, w.queue = w.queue, []
                    if w.overflow:
                        faults.gone_sent += 1
                        out = [gone_line(last, store.first)]
                    last = store.rv
                    now = time.monotonic()
                    if bookmarks and (now >= next_mark or now >= end):
                        out.append(b'{"type":"BOOKMARK","object":{"kind":"%s","apiVersion":"%s",'
                                   b'"metadata":{"resourceVersion":"%d"}}}\n' % (bookmark_kind.encode(), api.encode(), last))
                        next_mark = now + srv.bookmark_interval
                for line in out:
                    self.event(line, resource)
                if w.overflow or time.monotonic() >= end:
                    break
        finally:
            with store.lock:
                faults.watches -= 1
                store.remove_watcher(w)
            try:
                self.end_chunked()
            except OSError:
                pass
            self.close_connection = True
        return 200

    def event(self, line, resource):
        """One watch event, as a Table of one row when kubectl asked for one."""
        if self.table is not None:
            e = json.loads(line)
            if e["type"] in ("ADDED", "MODIFIED", "DELETED"):
                rv = e["object"]["metadata"].get("resourceVersion", "0")
                e["object"] = tables.table(resource, [e["object"]], rv, self.table)
                line = (json.dumps(e, separators=(",", ":")) + "\n").encode()
        self.chunk(line)

    def peer_gone(self):
        """The client closed its end (or sent what a watch never gets)."""
        try:
            return bool(select.select([self.connection], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    # --- logs ---------------------------------------------------------------------

    def pod_log(self, ns, name, query):
        path, done = self.server.controller.pod_log(ns, name)
        tail = query.get("tailLines")
        limit = query.get("limitBytes")
        follow = (query.get("follow") or [""])[0] in ("1", "true", "True")
        if not follow or done:
            with open(path, "rb") as f:
                data = f.read()
            if tail:
                n = int(tail[0])
                lines = data.splitlines(keepends=True)
                data = b"".join(lines[-n:]) if n > 0 else b""
            if limit:
                data = data[:int(limit[0])]
            self.send_text(200, data, "text/plain")
            return 200
        self.start_chunked("text/plain")
        left = int(limit[0]) if limit else None
        with open(path, "rb") as f:
            while True:
                data = f.read(65536)
                if data:
                    if left is not None:
                        data = data[:left]
                        left -= len(data)
                    self.chunk(data)
                    if left == 0:
                        break
                    continue
                if done:
                    break
                time.sleep(0.05)
                done = self.server.controller.pod_log(ns, name)[1]
        self.end_chunked()
        return 200

    # --- the test endpoints -------------------------------------------------------

    def test_endpoint(self, path, body):
        srv = self.server
        f = srv.faults
        store, ctl = srv.store, srv.controller
        with store.lock:
            if path == "/_test/faults" and self.command == "POST":
                body = body or {}
                if body.get("reset"):
                    f.gone, f.rules = 0, []
                f.gone += int(body.get("gone", 0))
                if body.get("expire"):
                    store.expire()
                if body.get("close_watches"):
                    store.close_watches()
                for kind in ("throttle", "error", "drop"):
                    if body.get(kind):
                        f.add(kind, body[kind])
            elif not (path == "/_test/state" and self.command == "GET"):
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            state = {"resource_version": store.rv, "oldest_retained": store.first,
                     "events_retained": len(store.events),
                     "jobs_created": ctl.stats["jobs_created"], "jobs_by_name": dict(ctl.stats["jobs_by_name"]),
                     "jobs_conflicts": ctl.stats["jobs_conflicts"], "pods_created": ctl.stats["pods_created"],
                     "processes_started": ctl.stats["processes_started"],
                     "jobs": len(store.objects["jobs"]), "pods": len(store.objects["pods"]),
                     "processes": ctl.running(), "watches": f.watches, "watches_total": f.watches_total,
                     "watches_by_resource": dict(f.watches_by_resource),
                     "requests": dict(f.requests), "verbs": dict(f.verbs), "throttled": f.throttled,
                     "injected": f.injected, "gone_sent": f.gone_sent,
                     "faults": {"gone": f.gone, "rules": [dict(t) for t in f.rules if t["count"] > 0]}}
        self.send_obj(200, state)
        return 200


def gone_line(rv, oldest):
    st = status_object(410, "Expired", f"too old resource version: {rv} ({oldest - 1 if oldest > 1 else oldest})")
    return (json.dumps({"type": "ERROR", "object": st}, separators=(",", ":")) + "\n").encode()
