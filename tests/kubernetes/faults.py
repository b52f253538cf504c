#!/usr/bin/env python3
"""The loopback API server's faults and deadlines, through http.client:
410 Expired on a watch, watches closed by the server, 429 with Retry-After,
503, a create whose answer is lost (then 409 AlreadyExists),
OOMKilled, ErrImagePull/ImagePullBackOff, eviction, Unschedulable,
preemption, activeDeadlineSeconds, ttlSecondsAfterFinished, Foreground
and Orphan deletion, logs with tailLines/limitBytes, bookmarks, and at
last SIGTERM to the server (its pid is the argument): every process group
it started dies with it.  Speaks TAP.

Reads SY_K8S_URL, SY_K8S_TOKEN, SY_K8S_CA (tests/kubernetes/lib.sh)."""
import http.client
import json
import os
import ssl
import sys
import time

PORT = int(os.environ["SY_K8S_URL"].rsplit(":", 1)[1])
CTX = ssl.create_default_context(cafile=os.environ["SY_K8S_CA"])
AUTH = {"Authorization": "Bearer " + os.environ["SY_K8S_TOKEN"], "Content-Type": "application/json"}
JOBS = "/apis/batch/v1/namespaces/ft/jobs"
PODS = "/api/v1/namespaces/ft/pods"
n = failed = 0


def ok(cond, name, detail=None):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {name}", flush=True)
    if not cond:
        failed += 1
        if detail is not None:
            print("#   " + json.dumps(detail)[:2000])


def conn(timeout=20):
    return http.client.HTTPSConnection("127.0.0.1", PORT, context=CTX, timeout=timeout)


def call(method, path, body=None):
    c = conn()
    c.request(method, path, json.dumps(body) if body is not None else None, AUTH)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        return r.status, json.loads(data), r
    except ValueError:
        return r.status, data.decode(), r


def fault(**kw):
    return call("POST", "/_test/faults", kw)[1]


def watch(path, rv=None, extra=""):
    """(events, ended): every event line until the server ends the stream."""
    c = conn(30)
    q = "?watch=true" + (f"&resourceVersion={rv}" if rv is not None else "") + extra
    c.request("GET", path + q, headers=AUTH)
    r = c.getresponse()
    return c, r


def events(r, until=None, limit=100):
    out = []
    while len(out) < limit:
        line = r.readline()
        if not line:
            break
        out.append(json.loads(line))
        if until and until(out[-1]):
            break
    return out


def job(name, cmd, fault_=None, **spec):
    ann = {"test.switchyard/fault": fault_} if fault_ else {}
    body = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {"suite": "faults"}},
            "spec": dict({"backoffLimit": 0, "template": {
                "metadata": {"labels": {"suite": "faults", "case": name}, "annotations": ann},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", cmd]}]}}},
                **spec)}
    st, obj, _ = call("POST", JOBS, body)
    assert st == 201, (st, obj)
    return obj


def wait_for(fn, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    return fn()


def pod_of(name):
    st, lst, _ = call("GET", f"{PODS}?labelSelector=job-name%3D{name}")
    return lst["items"][0] if st == 200 and lst["items"] else None


def job_cond(name, ctype):
    st, j, _ = call("GET", f"{JOBS}/{name}")
    if st != 200:
        return None
    return next((c for c in j["status"].get("conditions", []) if c["type"] == ctype and c["status"] == "True"), None)


def cstate(pod):
    return (pod or {}).get("status", {}).get("containerStatuses", [{}])[0].get("state", {})


def main():
    # --- watches: 410, server-side close, bookmarks ------------------------------
    job("w0", "true")
    st, lst, _ = call("GET", JOBS)
    rv0 = int(lst["metadata"]["resourceVersion"])
    job("w1", "true")
    fault(gone=1)
    c, r = watch(JOBS, rv0)
    ev = events(r)
    ok(r.status == 200 and len(ev) == 1 and ev[0]["type"] == "ERROR" and ev[0]["object"]["code"] == 410
       and ev[0]["object"]["reason"] == "Expired", "an armed 410 answers the next watch with one ERROR event, Expired", ev)
    c.close()
    c, r = watch(JOBS, rv0, "&timeoutSeconds=1")
    ev = events(r)
    ok([e["object"]["metadata"]["name"] for e in ev if e["type"] == "ADDED"] == ["w1"],
       "the watch after it replays from its resourceVersion (ADDED w1, not w0)", [e["type"] for e in ev])
    c.close()
    fault(expire=True)
    c, r = watch(JOBS, rv0)
    ev = events(r)
    ok(len(ev) == 1 and ev[0]["object"].get("code") == 410 and "too old resource version" in ev[0]["object"]["message"],
       "after the history is expired, a watch from an old resourceVersion gets 410", ev)
    c.close()
    st, lst, _ = call("GET", JOBS)
    c, r = watch(JOBS, lst["metadata"]["resourceVersion"], "&allowWatchBookmarks=true")
    ev = events(r, until=lambda e: e["type"] == "BOOKMARK")
    ok(ev and ev[-1]["type"] == "BOOKMARK" and int(ev[-1]["object"]["metadata"]["resourceVersion"]) >= int(lst["metadata"]["resourceVersion"]),
       "a watch from the list's resourceVersion is accepted and gets a BOOKMARK", ev)
    state = call("GET", "/_test/state")[1]
    ok(state["watches"] >= 1, "the state counts the open watch", state["watches"])
    fault(close_watches=True)
    t0 = time.monotonic()
    rest = events(r)
    ok(time.monotonic() - t0 < 5 and all(e["type"] != "ERROR" for e in rest),
       "close_watches ends the open stream cleanly", rest)
    c.close()
    ok(wait_for(lambda: call("GET", "/_test/state")[1]["watches"] == 0, 3), "no watch stays open")

    # --- 429 ----------------------------------------------------------------------
    fault(throttle={"count": 2, "prefix": "/apis/batch/v1", "method": "POST", "retry_after": 2})
    st1, body1, r1 = call("POST", JOBS, {"kind": "Job"})
    st2, _, _ = call("POST", JOBS, {"kind": "Job"})
    ok(st1 == 429 and st2 == 429 and r1.getheader("Retry-After") == "2" and body1["reason"] == "TooManyRequests"
       and body1["details"]["retryAfterSeconds"] == 2, "two POSTs answered 429 with Retry-After: 2 and a Status", body1)
    st3, _, _ = call("GET", JOBS)
    ok(st3 == 200, "a GET under the prefix was not throttled (method POST only)")
    job("after429", "true")
    ok(call("GET", "/_test/state")[1]["throttled"] == 2, "the third POST went through; 2 counted throttled")

    fault(error={"count": 1, "code": 503, "prefix": JOBS, "method": "GET"})
    st1, body1, _ = call("GET", JOBS)
    st2, _, _ = call("GET", JOBS)
    ok(st1 == 503 and body1["reason"] == "ServiceUnavailable" and st2 == 200,
       "an armed 503 answers one GET with a Status; the next is 200", body1)
    fault(drop={"count": 1, "prefix": JOBS, "method": "POST", "after": True})
    try:
        job("lost", "true")
        lost = False
    except (http.client.HTTPException, OSError):
        lost = True
    ok(lost and call("GET", f"{JOBS}/lost")[0] == 200,
       "drop after: the create is done, the connection closed unanswered")
    st, body, _ = call("POST", JOBS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "lost"},
                                      "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                                          {"name": "c", "image": "x", "command": ["true"]}]}}}})
    state = call("GET", "/_test/state")[1]
    ok(st == 409 and body["reason"] == "AlreadyExists" and state["jobs_conflicts"] == 1
       and state["jobs_by_name"]["lost"] == 1 and state["injected"] == 2,
       "its retry is 409 AlreadyExists; one create, one conflict counted", [st, body, state["jobs_conflicts"]])

    # --- pod faults ---------------------------------------------------------------
    job("oom", "sleep 30", "oom:0.3")
    cond = wait_for(lambda: job_cond("oom", "Failed"))
    term = cstate(pod_of("oom")).get("terminated", {})
    ok(cond and cond["reason"] == "BackoffLimitExceeded" and term.get("reason") == "OOMKilled"
       and term.get("exitCode") == 137, "oom: the container terminates OOMKilled, 137; the Job fails", term)

    c, r = watch(PODS, None, "&labelSelector=job-name%3Dpull")
    job("pull", "echo never", "image-pull")
    ev = events(r, until=lambda e: cstate(e["object"]).get("waiting", {}).get("reason") == "ImagePullBackOff")
    c.close()
    waits = [cstate(e["object"]).get("waiting", {}) for e in ev]
    reasons = [w.get("reason") for w in waits]
    msg = next((w.get("message", "") for w in waits if w.get("reason") == "ErrImagePull"), "")
    ok('Failed to pull image "busybox:1.36"' in msg, "image-pull: the container waits in ErrImagePull", reasons)
    p = ev[-1]["object"] if ev else {}
    ok(reasons[-1:] == ["ImagePullBackOff"] and p["status"]["phase"] == "Pending",
       "then ImagePullBackOff, the pod Pending", reasons)
    st, body, _ = call("GET", f"{PODS}/{p['metadata']['name']}/log")
    ok(st == 400 and "waiting to start" in body["message"], "its log is 400: waiting to start", body)
    st, j, _ = call("GET", f"{JOBS}/pull")
    ok(j["status"].get("active") == 1 and "conditions" not in j["status"], "the Job stays active", j["status"])

    job("evict", "sleep 30", "evict:0.3")
    cond = wait_for(lambda: job_cond("evict", "Failed"))
    p = pod_of("evict")
    dt = [c for c in p["status"].get("conditions", []) if c["type"] == "DisruptionTarget"]
    ok(cond and p["status"]["phase"] == "Failed" and p["status"].get("reason") == "Evicted"
       and "low on resource" in p["status"].get("message", "") and dt and dt[0]["reason"] == "TerminationByKubelet",
       "evict: the pod Failed, reason Evicted, DisruptionTarget; the Job fails", p["status"])

    job("unsched", "echo never", "unschedulable")
    p = wait_for(lambda: pod_of("unsched"))
    cs = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
    ok(p["status"]["phase"] == "Pending" and cs and cs[0]["status"] == "False" and cs[0]["reason"] == "Unschedulable"
       and "nodes are available" in cs[0]["message"], "unschedulable: Pending, PodScheduled False Unschedulable", p["status"])

    c, r = watch(PODS, None, "&labelSelector=job-name%3Dpreempt")
    job("preempt", "sleep 30", "preempt:0.3")
    ev = events(r, until=lambda e: e["type"] == "DELETED")
    c.close()
    last = ev[-1]["object"] if ev else {}
    dt = [x for x in last.get("status", {}).get("conditions", []) if x["type"] == "DisruptionTarget"]
    ok(ev and ev[-1]["type"] == "DELETED" and dt and dt[0]["reason"] == "PreemptionByScheduler"
       and last["status"]["phase"] == "Failed",
       "preempt: the pod gets DisruptionTarget PreemptionByScheduler, fails and is deleted", [e["type"] for e in ev])
    ok(wait_for(lambda: job_cond("preempt", "Failed")), "and its Job fails")

    # --- deadlines, ttl, deletion, logs -------------------------------------------
    t0 = time.monotonic()
    job("deadline", "sleep 30", activeDeadlineSeconds=1)
    cond = wait_for(lambda: job_cond("deadline", "Failed"))
    ok(cond and cond["reason"] == "DeadlineExceeded" and time.monotonic() - t0 < 8,
       "activeDeadlineSeconds 1: Failed, DeadlineExceeded, in about a second", cond)
    ok(wait_for(lambda: pod_of("deadline") is None), "and its pod was killed and deleted")

    job("ttl", "echo done", ttlSecondsAfterFinished=1)
    ok(wait_for(lambda: job_cond("ttl", "Complete")), "a Job with ttlSecondsAfterFinished completes")
    ok(wait_for(lambda: call("GET", f"{JOBS}/ttl")[0] == 404, 5), "and is deleted about a second later")

    job("logs", "for i in 1 2 3 4 5; do echo line$i; done")
    wait_for(lambda: job_cond("logs", "Complete"))
    name = pod_of("logs")["metadata"]["name"]
    st, text, _ = call("GET", f"{PODS}/{name}/log?tailLines=2")
    ok(text == "line4\nline5\n", "log tailLines=2 is the last two lines", text)
    st, text, _ = call("GET", f"{PODS}/{name}/log?limitBytes=8")
    ok(text == "line1\nli", "log limitBytes=8 is the first 8 bytes", text)

    job("fg", "sleep 30")
    wait_for(lambda: (pod_of("fg") or {}).get("status", {}).get("phase") == "Running")
    st, j, _ = call("DELETE", f"{JOBS}/fg", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})
    ok(st == 200 and j["metadata"].get("finalizers") == ["foregroundDeletion"] and j["metadata"].get("deletionTimestamp"),
       "Foreground: the Job gets deletionTimestamp and the foregroundDeletion finalizer", j["metadata"])
    ok(wait_for(lambda: call("GET", f"{JOBS}/fg")[0] == 404 and pod_of("fg") is None, 5),
       "its pod goes first (SIGTERM), then the Job")

    job("orphan", "sleep 30")
    wait_for(lambda: (pod_of("orphan") or {}).get("status", {}).get("phase") == "Running")
    st, _, _ = call("DELETE", f"{JOBS}/orphan?propagationPolicy=Orphan")
    p = pod_of("orphan")
    ok(st == 200 and p and "ownerReferences" not in p["metadata"] and p["status"]["phase"] == "Running",
       "Orphan: the Job is gone, its pod runs on without an owner", p and p["metadata"])
    st, _, _ = call("DELETE", f"{PODS}/{p['metadata']['name']}")
    ok(st == 200 and wait_for(lambda: pod_of("orphan") is None, 5), "deleting the pod kills it and removes it")
    st, body, _ = call("DELETE", f"{PODS}/{p['metadata']['name']}")
    ok(st == 404 and body["reason"] == "NotFound", "a second delete is 404 NotFound", body)

    c2 = conn()
    c2.request("GET", JOBS, headers={"Authorization": "Bearer wrong"})
    r2 = c2.getresponse()
    body = json.loads(r2.read())
    ok(r2.status == 401 and body["reason"] == "Unauthorized", "a wrong token is 401 with a Status", body)

    # --- SIGTERM: every process group it started is killed ------------------------
    job("survivor", "sleep 41.5 & sleep 41.5; wait")
    ok(wait_for(lambda: len(sleepers()) == 2), "a pod runs two processes (sleep 41.5)", sleepers())
    server = int(sys.argv[1])
    os.kill(server, 15)
    ok(wait_for(lambda: not alive(server), 5), "SIGTERM ends the server")
    ok(wait_for(lambda: not sleepers(), 3), "and both processes of the pod's group are gone", sleepers())
    print(f"1..{n}")
    return 1 if failed else 0


def sleepers():
    out = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read() == b"sleep\x0041.5\x00" and proc_state(pid) != "Z":
                    out.append(pid)
        except OSError:
            pass
    return out


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive(pid):
    return proc_state(pid) not in (None, "Z")


if __name__ == "__main__":
    sys.exit(main())
