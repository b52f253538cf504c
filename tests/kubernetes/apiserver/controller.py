"""The Job controller and the kubelet of the loopback API server: one Pod
per Job attempt, whose container's command runs as a local process in its
own process group; its output is the pod's log.  Two threads do the work:
a timer thread (a heap of deadlines) and a reaper (waitpid(-1)).  Every
change is made under the store's lock.

Per-pod faults come from the annotation test.switchyard/fault on the
Job's pod template (or the Job): image-pull, unschedulable, oom[:S],
evict[:S], preempt[:S] (S: seconds after the container starts)."""
import heapq
import itertools
import os
import signal
import subprocess
import sys
import threading
import time

from .jobs import job_condition, prepare_job, missing_job
from .store import ApiError, new_uid, not_found, now_iso, rand5

FAULT_KEY = "test.switchyard/fault"
NODE = "switchyard-node-1"


class PodRec:
    __slots__ = ("obj", "job_uid", "proc", "log", "fault", "delay", "killed_for",
                 "deleting", "done", "container")

    def __init__(self, obj, job_uid, fault, delay):
        self.obj, self.job_uid, self.fault, self.delay = obj, job_uid, fault, delay
        self.proc = None
        self.log = None
        self.killed_for = None
        self.deleting = False
        self.done = False
        self.container = obj["spec"]["containers"][0]


class JobRec:
    __slots__ = ("obj", "pods", "succeeded", "failed", "finished", "deleting")

    def __init__(self, obj):
        self.obj = obj
        self.pods = set()       # (ns, name) of its pods still stored
        self.succeeded = self.failed = 0
        self.finished = False
        self.deleting = None    # "Foreground" while its pods go first


def parse_fault(meta_list):
    for md in meta_list:
        f = ((md or {}).get("annotations") or {}).get(FAULT_KEY)
        if f:
            kind, _, arg = f.partition(":")
            try:
                return kind.strip(), float(arg) if arg else 0.2
            except ValueError:
                return kind.strip(), 0.2
    return None, 0.0


class Controller:
    def __init__(self, store, workdir, start_delay=0.05, grace=1.0, pull_backoff=0.5):
        self.store = store
        self.workdir = workdir
        self.start_delay = start_delay
        self.grace = grace
        self.pull_backoff = pull_backoff
        self.jobs = {}          # uid -> JobRec
        self.pods = {}          # (ns, name) -> PodRec
        self.pids = {}          # pid -> PodRec
        self.stats = {"jobs_created": 0, "jobs_by_name": {}, "jobs_conflicts": 0,
                      "pods_created": 0, "processes_started": 0}
        self.timers = []
        self.spawns = []        # (pod, argv, cwd, env, log) for the timer thread to fork
        self.early = {}         # pid -> wait status, reaped before it was registered
        self.seq = itertools.count()
        self.tcond = threading.Condition(store.lock)
        self.child = threading.Event()
        self.stopping = False
        for fn in (self._timer_loop, self._reaper_loop):
            threading.Thread(target=fn, daemon=True).start()

    # --- threads ------------------------------------------------------------------

    def after(self, delay, fn, *args):
        """Runs fn(*args) under the lock after delay seconds (lock held)."""
        heapq.heappush(self.timers, (time.monotonic() + delay, next(self.seq), fn, args))
        self.tcond.notify()

    def _timer_loop(self):
        while True:
            with self.store.lock:
                now = time.monotonic()
                while self.timers and self.timers[0][0] <= now:
                    _, _, fn, args = heapq.heappop(self.timers)
                    try:
                        fn(*args)
                    except Exception as e:  # a bug here must not stop the clock
                        print(f"k8s server: timer {fn.__name__}: {e!r}", file=sys.stderr, flush=True)
                spawns, self.spawns = self.spawns, []
                if not spawns:
                    self.tcond.wait(self.timers[0][0] - now if self.timers else None)
                    continue
            done = [(p, argv, self._spawn(argv, cwd, env, log), log)
                    for p, argv, cwd, env, log in spawns if not self.stopping]
            with self.store.lock:
                for p, argv, proc, log in done:
                    try:
                        self._started(p, argv, proc, log)
                    except Exception as e:
                        print(f"k8s server: start: {e!r}", file=sys.stderr, flush=True)

    def _reaper_loop(self):
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                self.child.wait(0.5)
                self.child.clear()
                continue
            with self.store.lock:
                rec = self.pids.pop(pid, None)
                if rec is None:
                    self.early[pid] = status    # reaped before _started saw its pid
                else:
                    rec.proc.returncode = os.waitstatus_to_exitcode(status)
                    try:
                        self._exited(rec, status)
                    except Exception as e:  # a bug here must not stop the reaping
                        print(f"k8s server: reaper: {e!r}", file=sys.stderr, flush=True)

    # --- jobs ---------------------------------------------------------------------

    def create_job(self, ns, body):
        job = prepare_job(ns, body)
        name = job["metadata"]["name"]
        with self.store.lock:
            if self.store.get("jobs", ns, name) is not None:
                self.stats["jobs_conflicts"] += 1
                raise ApiError(409, "AlreadyExists", f'jobs.batch "{name}" already exists',
                               {"name": name, "group": "batch", "kind": "jobs"})
            self.stats["jobs_created"] += 1
            by = self.stats["jobs_by_name"]
            by[name] = by.get(name, 0) + 1
            rec = JobRec(job)
            self.jobs[job["metadata"]["uid"]] = rec
            self.store.put("jobs", job, "ADDED")
            out = self.store.snapshot(job)
            self.after(0, self._start_job, rec)
            return out

    def _start_job(self, rec):
        if rec.obj["metadata"]["uid"] not in self.jobs or rec.finished:
            return
        job = rec.obj
        job["status"]["startTime"] = now_iso()
        deadline = job["spec"].get("activeDeadlineSeconds")
        if deadline:
            self.after(deadline, self._deadline, rec)
        self._new_pod(rec)

    def _job_status(self, rec):
        st = rec.obj["status"]
        active = sum(1 for k in rec.pods if not self.pods[k].done and not self.pods[k].deleting)
        for key, v in (("active", active), ("succeeded", rec.succeeded), ("failed", rec.failed)):
            if v:
                st[key] = v
            else:
                st.pop(key, None)
        st["ready"] = sum(1 for k in rec.pods if self.pods[k].obj["status"].get("phase") == "Running")
        st["uncountedTerminatedPods"] = {}
        if rec.obj["metadata"]["uid"] in self.jobs:
            self.store.put("jobs", rec.obj)

    def _finish_job(self, rec, ok, reason=None, message=None):
        rec.finished = True
        st = rec.obj["status"]
        conds = st.setdefault("conditions", [])
        if ok:
            conds.append(job_condition("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"))
            conds.append(job_condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods"))
            st["completionTime"] = now_iso()
        else:
            conds.append(job_condition("FailureTarget", reason, message))
            conds.append(job_condition("Failed", reason, message))
        for k in list(rec.pods):
            p = self.pods[k]
            if not p.done:
                self._delete_pod(p, 0 if not ok else self.grace)
        self._job_status(rec)
        ttl = rec.obj["spec"].get("ttlSecondsAfterFinished")
        if ttl is not None:
            self.after(ttl, self._ttl, rec)

    def _ttl(self, rec):
        md = rec.obj["metadata"]
        if md["uid"] in self.jobs:
            self.delete_job(md["namespace"], md["name"], "Background")

    def _deadline(self, rec):
        if rec.finished or rec.obj["metadata"]["uid"] not in self.jobs:
            return
        for k in list(rec.pods):
            p = self.pods[k]
            if not p.done:
                p.killed_for = "Deadline"
        self._finish_job(rec, False, "DeadlineExceeded", "Job was active longer than specified deadline")

    def delete_job(self, ns, name, policy, grace=None):
        grace = self.grace if grace is None else grace
        with self.store.lock:
            job = self.store.get("jobs", ns, name)
            if job is None:
                raise missing_job(name)
            rec = self.jobs[job["metadata"]["uid"]]
            if policy == "Foreground" and rec.pods:
                if rec.deleting is None:
                    rec.deleting = "Foreground"
                    job["metadata"]["deletionTimestamp"] = now_iso()
                    job["metadata"]["deletionGracePeriodSeconds"] = 0
                    job["metadata"]["finalizers"] = ["foregroundDeletion"]
                    self.store.put("jobs", job)
                    for k in list(rec.pods):
                        self._delete_pod(self.pods[k], grace)
                return self.store.snapshot(job)
            rec.finished = True
            self.store.remove("jobs", job)
            del self.jobs[job["metadata"]["uid"]]
            for k in list(rec.pods):
                p = self.pods[k]
                if policy == "Orphan":
                    p.obj["metadata"].pop("ownerReferences", None)
                    p.job_uid = None
                    self.store.put("pods", p.obj)
                else:
                    self.after(0.1, self._delete_pod, p, grace)
            if policy == "Orphan":
                rec.pods.clear()
            return self.store.snapshot(job)

    # --- pods ---------------------------------------------------------------------

    def _new_pod(self, rec):
        job = rec.obj
        jmd = job["metadata"]
        tmpl = job["spec"]["template"]
        fault, delay = parse_fault([tmpl.get("metadata"), jmd])
        name = f'{jmd["name"]}-{rand5()}'
        ns = jmd["namespace"]
        spec = dict(tmpl["spec"])
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "generateName": jmd["name"] + "-", "namespace": ns,
                            "uid": new_uid(), "creationTimestamp": now_iso(),
                            "labels": dict(tmpl["metadata"].get("labels") or {}),
                            "annotations": dict(tmpl["metadata"].get("annotations") or {}),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                                 "name": jmd["name"], "uid": jmd["uid"],
                                                 "controller": True, "blockOwnerDeletion": True}],
                            "finalizers": ["batch.kubernetes.io/job-tracking"]},
               "spec": spec,
               "status": {"phase": "Pending", "qosClass": "BestEffort"}}
        p = PodRec(pod, jmd["uid"], fault, delay)
        self.pods[(ns, name)] = p
        rec.pods.add((ns, name))
        self.stats["pods_created"] += 1
        st = pod["status"]
        t = now_iso()
        if fault == "unschedulable":
            st["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": t, "reason": "Unschedulable",
                                 "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes "
                                            "are available: 3 No preemption victims found for incoming pod.."}]
            self.store.put("pods", pod, "ADDED")
            self._job_status(rec)
            return
        spec["nodeName"] = NODE
        st.update({"hostIP": "127.0.0.1", "podIP": "127.0.0.1", "startTime": t,
                   "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                   "lastTransitionTime": t}],
                   "containerStatuses": [self._cstatus(p, {"waiting": {"reason": "ContainerCreating"}})]})
        self.store.put("pods", pod, "ADDED")
        self._job_status(rec)
        self.after(self.start_delay, self._run, p)

    def _cstatus(self, p, state, restarts=0, ready=False):
        c = p.container
        return {"name": c["name"], "image": c.get("image", ""), "imageID": "",
                "ready": ready, "restartCount": restarts, "started": "running" in state, "state": state}

    def _run(self, p):
        if p.deleting or p.done:
            return
        st = p.obj["status"]
        image = p.container.get("image", "")
        if p.fault == "image-pull":
            msg = (f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and '
                   f'unpack image "docker.io/library/{image}": failed to resolve reference '
                   f'"docker.io/library/{image}": docker.io/library/{image}: not found')
            st["containerStatuses"] = [self._cstatus(p, {"waiting": {"reason": "ErrImagePull", "message": msg}})]
            self.store.put("pods", p.obj)
            self.after(self.pull_backoff, self._pull_backoff, p)
            return
        c = p.container
        argv = list(c.get("command") or []) + list(c.get("args") or [])
        env = {k: os.environ[k] for k in ("PATH", "LANG", "TZ") if k in os.environ}
        env["HOSTNAME"] = p.obj["metadata"]["name"]
        env["HOME"] = "/root" if os.getuid() == 0 else os.environ.get("HOME", "/")
        for e in c.get("env") or []:
            ref = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            env[e["name"]] = (str(p.obj["metadata"].get(ref.split(".", 1)[1], "")) if ref
                              else str(e.get("value", "")))
        logpath = os.path.join(self.workdir, f'{p.obj["metadata"]["namespace"]}_{p.obj["metadata"]["name"]}.log')
        self.spawns.append((p, argv, c.get("workingDir") or None, env, logpath))

    @staticmethod
    def _spawn(argv, cwd, env, logpath):
        """The container's process, or the OSError that stopped it (no lock
        held: a fork takes milliseconds)."""
        try:
            if not argv:
                raise FileNotFoundError("no command")
            with open(logpath, "ab") as out:
                return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
        except OSError as e:
            return e

    def _started(self, p, argv, proc, logpath):
        st = p.obj["status"]
        restarts = st["containerStatuses"][0].get("restartCount", 0)
        if isinstance(proc, OSError):
            what = argv[0] if argv else "(none)"
            why = "executable file not found in $PATH" if isinstance(proc, FileNotFoundError) else proc.strerror
            msg = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: '
                   f'runc create failed: unable to start container process: exec: "{what}": {why}: unknown')
            if not p.done:
                self._terminated(p, 128, "StartError", msg, now_iso())
            return
        p.proc = proc
        p.log = logpath
        self.pids[proc.pid] = p
        self.child.set()
        self.stats["processes_started"] += 1
        early = self.early.pop(proc.pid, None)
        if p.deleting or p.done:         # deleted while it was forked
            self._kill(p, signal.SIGKILL)
        if early is not None:
            del self.pids[proc.pid]
            proc.returncode = os.waitstatus_to_exitcode(early)
            if not p.done:
                self._exited(p, early)
            return
        if p.deleting or p.done:
            return
        t = now_iso()
        st["phase"] = "Running"
        st["conditions"] = [{"type": x, "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
                            for x in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
        st["containerStatuses"] = [self._cstatus(p, {"running": {"startedAt": t}}, restarts, True)]
        self.store.put("pods", p.obj)
        rec = self.jobs.get(p.job_uid)
        if rec:
            self._job_status(rec)
        if p.fault in ("oom", "evict", "preempt"):
            self.after(p.delay, self._fault_kill, p, p.proc)

    def _pull_backoff(self, p):
        if p.deleting or p.done:
            return
        image = p.container.get("image", "")
        p.obj["status"]["containerStatuses"] = [self._cstatus(p, {"waiting": {
            "reason": "ImagePullBackOff", "message": f'Back-off pulling image "{image}"'}})]
        self.store.put("pods", p.obj)

    def _fault_kill(self, p, proc):
        if p.done or p.proc is not proc:
            return
        p.killed_for = {"oom": "OOMKilled", "evict": "Evicted", "preempt": "Preempted"}[p.fault]
        if p.fault == "preempt":
            p.obj["status"]["conditions"].append(self._disruption(
                "PreemptionByScheduler", "Kube-scheduler: preempting to accommodate a higher priority pod"))
            self._delete_pod(p, self.grace)
            return
        self._kill(p, signal.SIGKILL)

    @staticmethod
    def _disruption(reason, message):
        return {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                "lastTransitionTime": now_iso(), "reason": reason, "message": message}

    def _kill(self, p, sig):
        if p.proc is not None and p.proc.returncode is None:
            try:
                os.killpg(p.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def _exited(self, p, status):
        """The reaper saw the container's process end (lock held)."""
        if p.done:
            return
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            code = 128 - code
        reason = "Completed" if code == 0 else "Error"
        if p.killed_for == "OOMKilled":
            code, reason = 137, "OOMKilled"
        try:                            # what it left behind in its group
            os.killpg(p.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        started = p.obj["status"]["containerStatuses"][0]["state"].get("running", {}).get("startedAt")
        self._terminated(p, code, reason, None, started)

    def _terminated(self, p, code, reason, message, started):
        st = p.obj["status"]
        restarts = st["containerStatuses"][0].get("restartCount", 0)
        term = {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now_iso(),
                "containerID": f"containerd://{p.obj['metadata']['uid'].replace('-', '')}"}
        if message:
            term["message"] = message
        rec = self.jobs.get(p.job_uid)
        policy = p.obj["spec"].get("restartPolicy")
        if (code != 0 and policy == "OnFailure" and not p.deleting and p.killed_for is None
                and rec and not rec.finished and restarts < rec.obj["spec"]["backoffLimit"]):
            st["containerStatuses"] = [self._cstatus(p, {"waiting": {"reason": "CrashLoopBackOff"}}, restarts + 1)]
            st["containerStatuses"][0]["lastState"] = {"terminated": term}
            self.store.put("pods", p.obj)
            self.after(self.start_delay, self._run, p)
            return
        p.done = True
        p.obj["metadata"]["finalizers"] = []    # the job controller has counted it
        st["phase"] = "Succeeded" if code == 0 and p.killed_for is None else "Failed"
        st["containerStatuses"] = [self._cstatus(p, {"terminated": term}, restarts)]
        for c in st.get("conditions", []):
            if c["type"] in ("Ready", "ContainersReady"):
                c.update(status="False", reason="PodCompleted" if code == 0 else "PodFailed")
        if p.killed_for == "Evicted":
            msg = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 20Mi. "
                   f"Container {p.container['name']} was using 900Mi, request is 0, has larger consumption of memory. ")
            st.update(reason="Evicted", message=msg)
            st["conditions"].append(self._disruption("TerminationByKubelet", msg))
        if p.deleting:
            self._remove_pod(p)
        else:
            self.store.put("pods", p.obj)
        if rec and not rec.finished:
            self._count(rec, st["phase"] == "Succeeded")

    def _count(self, rec, ok):
        if ok:
            rec.succeeded += 1
            self._finish_job(rec, True)
            return
        rec.failed += 1
        if rec.failed > rec.obj["spec"]["backoffLimit"]:
            self._finish_job(rec, False, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        else:
            self._job_status(rec)
            self.after(self.start_delay, self._new_pod, rec)

    def _delete_pod(self, p, grace):
        """Graceful deletion: SIGTERM to its group, SIGKILL after grace; the
        pod is removed when its process has ended."""
        if p.deleting:
            return
        p.deleting = True
        md = p.obj["metadata"]
        md["deletionTimestamp"] = now_iso()
        md["deletionGracePeriodSeconds"] = int(grace)
        md["finalizers"] = []
        if p.proc is None or p.proc.returncode is not None:
            unfinished = not p.done
            p.done = True
            self._remove_pod(p)
            rec = self.jobs.get(p.job_uid)
            if unfinished and rec and not rec.finished:
                self._count(rec, False)
            return
        self.store.put("pods", p.obj)
        self._kill(p, signal.SIGTERM if grace > 0 else signal.SIGKILL)
        if grace > 0:
            self.after(grace, self._kill, p, signal.SIGKILL)

    def _remove_pod(self, p):
        md = p.obj["metadata"]
        key = (md["namespace"], md["name"])
        self.pods.pop(key, None)
        self.store.remove("pods", p.obj)
        rec = self.jobs.get(p.job_uid)
        if rec is not None:
            rec.pods.discard(key)
            if rec.deleting == "Foreground" and not rec.pods:
                rec.finished = True
                self.jobs.pop(p.job_uid, None)
                self.store.remove("jobs", rec.obj)
            elif rec.obj["metadata"]["uid"] in self.jobs:
                self._job_status(rec)

    def delete_pod(self, ns, name, grace=None):
        with self.store.lock:
            p = self.pods.get((ns, name))
            if p is None:
                raise not_found("pods", "", name)
            self._delete_pod(p, self.grace if grace is None else grace)
            return self.store.snapshot(p.obj)

    def pod_log(self, ns, name):
        """(path, finished) of a pod's log; 400 while its container waits."""
        with self.store.lock:
            p = self.pods.get((ns, name))
            if p is None:
                raise not_found("pods", "", name)
            if p.log is None:
                cs = (p.obj["status"].get("containerStatuses") or [{}])[0]
                why = (cs.get("state", {}).get("waiting") or {}).get("reason", "ContainerCreating")
                if why in ("ErrImagePull", "ImagePullBackOff"):
                    why = "trying and failing to pull image"
                raise ApiError(400, "BadRequest",
                               f'container "{p.container["name"]}" in pod "{name}" is waiting to start: {why}')
            return p.log, p.done

    def running(self):
        return sum(1 for p in self.pids.values() if p.proc.returncode is None)

    def shutdown(self):
        """Kills every process group it started (SIGTERM from the test)."""
        with self.store.lock:
            self.stopping = True
            for p in list(self.pids.values()):
                self._kill(p, signal.SIGKILL)
