"""Server-side printing: the meta.k8s.io/v1 Table kubectl asks for
(`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), with the columns
the API server prints for jobs and pods."""
import datetime

COLUMNS = {
    "jobs": [("Name", "string", "name", 0), ("Status", "string", "", 0), ("Completions", "string", "", 0),
             ("Duration", "string", "", 0), ("Age", "string", "", 0)],
    "pods": [("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
             ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
             ("Node", "string", "", 1)],
}


def wants_table(accept):
    return "as=Table" in (accept or "")


def _seconds(ts, until=None):
    if not ts:
        return None
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    end = until or datetime.datetime.now(datetime.timezone.utc)
    return max(0, int((end - t).total_seconds()))


def human(s):
    """k8s.io/apimachinery's HumanDuration, near enough."""
    if s is None:
        return "<unknown>"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    return f"{h // 24}d"


def job_cells(o):
    st, spec = o.get("status", {}), o.get("spec", {})
    conds = {c["type"] for c in st.get("conditions", []) if c.get("status") == "True"}
    status = ("Complete" if "Complete" in conds else "Failed" if "Failed" in conds
              else "Terminating" if o["metadata"].get("deletionTimestamp") else "Running")
    start = st.get("startTime")
    end = None
    if st.get("completionTime"):
        end = datetime.datetime.strptime(st["completionTime"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    return [o["metadata"]["name"], status, f'{st.get("succeeded", 0)}/{spec.get("completions", 1)}',
            human(_seconds(start, end)) if start else "", human(_seconds(o["metadata"].get("creationTimestamp")))]


def pod_cells(o):
    st = o.get("status", {})
    cs = (st.get("containerStatuses") or [{}])[0]
    state = cs.get("state", {})
    status = st.get("reason") or st.get("phase", "Pending")
    for key in ("waiting", "terminated"):
        if state.get(key, {}).get("reason"):
            status = state[key]["reason"]
    if st.get("reason"):
        status = st["reason"]
    if o["metadata"].get("deletionTimestamp"):
        status = "Terminating"
    ready = sum(1 for c in st.get("containerStatuses") or [] if c.get("ready"))
    total = len(o.get("spec", {}).get("containers") or [])
    return [o["metadata"]["name"], f"{ready}/{total}", status, cs.get("restartCount", 0),
            human(_seconds(o["metadata"].get("creationTimestamp"))), st.get("podIP", "<none>"),
            o.get("spec", {}).get("nodeName", "<none>")]


def table(resource, objs, rv, include_object):
    cells = job_cells if resource == "jobs" else pod_cells
    rows = []
    for o in objs:
        if include_object == "Object":
            obj = o
        else:
            obj = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}
        rows.append({"cells": cells(o), "object": obj})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": str(rv)},
            "columnDefinitions": [{"name": n, "type": t, "format": f, "description": n, "priority": p}
                                  for n, t, f, p in COLUMNS[resource]],
            "rows": rows}
