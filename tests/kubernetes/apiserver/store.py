"""The object store of the loopback API server: Jobs and Pods by namespace
and name, one global resourceVersion counter, a bounded history of watch
events (each kept as the JSON line a watcher sends), label and field
selectors, and the Status objects of the API's errors."""
import datetime
import json
import random
import re
import threading
import uuid

RANDOM_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # as k8s.io/apimachinery's rand


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rand5():
    return "".join(random.choice(RANDOM_CHARS) for _ in range(5))


def new_uid():
    return str(uuid.uuid4())


def status_object(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    return s


class ApiError(Exception):
    """An answer other than success, as the API server words it."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.status = status_object(code, reason, message, details)
        self.headers = headers or {}


def not_found(resource, group, name):
    full = resource + ("." + group if group else "")
    return ApiError(404, "NotFound", f'{full} "{name}" not found',
                    {"name": name, "group": group, "kind": resource} if group
                    else {"name": name, "kind": resource})


# --- selectors --------------------------------------------------------------------

def split_top(s):
    """Splits on commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip() for p in out if p.strip()]


SET_RE = re.compile(r"^([A-Za-z0-9_./-]+)\s+(in|notin)\s*\((.*)\)$")
EQ_RE = re.compile(r"^([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_.-]*)$")
KEY_RE = re.compile(r"^(!?)\s*([A-Za-z0-9_./-]+)$")


def parse_label_selector(s):
    """labelSelector's syntax: a=b, a==b, a!=b, a in (x,y), a notin (x), a, !a."""
    reqs = []
    for part in split_top(s or ""):
        m = SET_RE.match(part)
        if m:
            vals = {v.strip() for v in m.group(3).split(",") if v.strip()}
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = EQ_RE.match(part)
        if m:
            reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", {m.group(3)}))
            continue
        m = KEY_RE.match(part)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", set()))
            continue
        raise ApiError(400, "BadRequest",
                       f'unable to parse requirement: found \'{part}\', expected: valid label selector')
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=" or op == "in":
            if not has or v not in vals:
                return False
        elif op == "!=" or op == "notin":
            if has and v in vals:
                return False
        elif op == "exists":
            if not has:
                return False
        elif op == "!":
            if has:
                return False
    return True


FIELDS = {"metadata.name", "metadata.namespace", "status.phase", "spec.nodeName",
          "status.successful"}


def parse_field_selector(s):
    reqs = []
    for part in split_top(s or ""):
        m = re.match(r"^([A-Za-z.]+)\s*(==|!=|=)\s*(.*)$", part)
        if not m or m.group(1) not in FIELDS:
            raise ApiError(400, "BadRequest",
                           f'"{part}" is not a known field selector: only "metadata.name", "metadata.namespace"')
        reqs.append((m.group(1), m.group(2) == "!=", m.group(3)))
    return reqs


def field(obj, path):
    cur = obj
    for p in path.split("."):
        cur = cur.get(p) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def fields_match(reqs, obj):
    return all((field(obj, p) != v) if neg else (field(obj, p) == v) for p, neg, v in reqs)


class Selector:
    """A namespace (or None for all) and the label and field selectors of a
    list or watch."""

    def __init__(self, ns, labels="", fields=""):
        self.ns = ns
        self.labels = parse_label_selector(labels)
        self.fields = parse_field_selector(fields)

    def match(self, obj):
        md = obj["metadata"]
        if self.ns is not None and md.get("namespace") != self.ns:
            return False
        return labels_match(self.labels, md.get("labels")) and fields_match(self.fields, obj)


# --- the store --------------------------------------------------------------------

class Event:
    """One watch event: its line as sent, and what selectors look at."""
    __slots__ = ("rv", "resource", "obj", "line")

    def __init__(self, rv, resource, obj, line):
        self.rv, self.resource, self.obj, self.line = rv, resource, obj, line


class Watcher:
    """One open watch: the lines queued for it and the condition that wakes
    its thread (on the store's lock).  More than `history` lines queued (a
    reader that fell behind) ends it with 410, as the API server does."""
    __slots__ = ("resource", "sel", "queue", "cond", "overflow", "closed", "key")

    def __init__(self, store, resource, sel):
        self.resource, self.sel = resource, sel
        self.queue = []
        self.cond = threading.Condition(store.lock)
        self.overflow = self.closed = False
        self.key = None
        for path, neg, v in sel.fields:
            if path == "metadata.name" and not neg:
                self.key = (resource, "name", v)
        for key, op, vals in sel.labels:
            if self.key is None and op in ("=", "in") and len(vals) == 1:
                self.key = (resource, "label", key, next(iter(vals)))


class Store:
    """Every write takes the next resourceVersion and appends one event; the
    events are a dict by resourceVersion (they are consecutive), the oldest
    dropped beyond `history`.  Each event is queued at once to the open
    watches it matches, found through an index on the name or one label
    equality of their selectors, so that a write wakes only the watches it
    concerns.  One lock guards the store and the controller."""

    def __init__(self, history=1000):
        self.lock = threading.RLock()
        self.rv = 0
        self.history = max(1, history)
        self.objects = {"jobs": {}, "pods": {}}
        self.events = {}
        self.first = 1              # the oldest resourceVersion still in events
        self.watchers = {}          # key (or resource, for the rest) -> set of Watcher

    @staticmethod
    def snapshot(obj):
        """The object as the JSON text of an answer."""
        return json.dumps(obj, separators=(",", ":"))

    def get(self, resource, ns, name):
        return self.objects[resource].get((ns, name))

    def list(self, resource, sel):
        return [o for o in self.objects[resource].values() if sel.match(o)]

    def _record(self, etype, resource, obj):
        text = json.dumps(obj, separators=(",", ":"))
        line = ('{"type":"%s","object":%s}\n' % (etype, text)).encode()
        md, st = obj["metadata"], obj.get("status") or {}
        view = {"metadata": {"namespace": md.get("namespace"), "name": md.get("name"),
                             "labels": dict(md.get("labels") or {})},
                "status": {"phase": st.get("phase"), "succeeded": st.get("succeeded")},
                "spec": {"nodeName": (obj.get("spec") or {}).get("nodeName")}}
        self.events[self.rv] = Event(self.rv, resource, view, line)
        while len(self.events) > self.history:
            self.events.pop(self.first, None)
            self.first += 1
        ws = self.watchers
        groups = [ws.get(resource), ws.get((resource, "name", md.get("name")))]
        groups += [ws.get((resource, "label", k, v)) for k, v in view["metadata"]["labels"].items()]
        for group in groups:
            for w in group or ():
                if w.sel.match(view):
                    w.queue.append(line)
                    if len(w.queue) > self.history:
                        w.overflow = True
                    w.cond.notify()

    def add_watcher(self, w):
        self.watchers.setdefault(w.key or w.resource, set()).add(w)

    def remove_watcher(self, w):
        group = self.watchers.get(w.key or w.resource)
        if group is not None:
            group.discard(w)
            if not group:
                del self.watchers[w.key or w.resource]

    def put(self, resource, obj, etype="MODIFIED"):
        """Stores obj (new or changed) under the next resourceVersion."""
        self.rv += 1
        md = obj["metadata"]
        md["resourceVersion"] = str(self.rv)
        self.objects[resource][(md["namespace"], md["name"])] = obj
        self._record(etype, resource, obj)
        return obj

    def remove(self, resource, obj):
        md = obj["metadata"]
        if self.objects[resource].pop((md["namespace"], md["name"]), None) is None:
            return
        self.rv += 1
        md["resourceVersion"] = str(self.rv)
        self._record("DELETED", resource, obj)

    def expire(self):
        """Forgets every event: a watch from an older resourceVersion is 410."""
        self.events.clear()
        self.first = self.rv + 1

    def since(self, rv):
        """The events after rv, or None when some of them are gone."""
        if rv + 1 < self.first and rv < self.rv:
            return None
        return [self.events[i] for i in range(max(rv + 1, self.first), self.rv + 1)]

    def close_watches(self):
        for group in self.watchers.values():
            for w in group:
                w.closed = True
                w.cond.notify()
