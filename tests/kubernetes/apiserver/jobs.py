"""Creating and deleting Jobs as the API server does: defaults, validation,
the selector and the template's labels, the propagation policies."""
import re

from .store import ApiError, new_uid, not_found, now_iso, rand5

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def prepare_job(ns, body):
    """A Job as stored on create: checked, defaulted, with uid and labels."""
    if not isinstance(body, dict) or body.get("kind", "Job") != "Job":
        raise ApiError(400, "BadRequest", "the body of the request was not a Job")
    md = body.setdefault("metadata", {})
    if not md.get("name") and md.get("generateName"):
        md["name"] = md["generateName"] + rand5()
    name = md.get("name", "")
    if md.get("namespace") not in (None, ns):
        raise ApiError(400, "BadRequest",
                       "the namespace of the provided object does not match the namespace sent on the request")
    causes = []
    if not name:
        causes.append({"field": "metadata.name", "message": "Required value: name or generateName is required"})
    elif len(name) > 63 or not NAME_RE.match(name):
        causes.append({"field": "metadata.name",
                       "message": f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower case '
                                  "alphanumeric characters or '-', and must start and end with an alphanumeric character"})
    spec = body.setdefault("spec", {})
    tmpl = spec.get("template") or {}
    pspec = tmpl.get("spec") or {}
    containers = pspec.get("containers") or []
    if not containers:
        causes.append({"field": "spec.template.spec.containers", "message": "Required value"})
    for i, c in enumerate(containers):
        if not c.get("name"):
            causes.append({"field": f"spec.template.spec.containers[{i}].name", "message": "Required value"})
        if not c.get("image"):
            causes.append({"field": f"spec.template.spec.containers[{i}].image", "message": "Required value"})
    if pspec.get("restartPolicy") not in ("Never", "OnFailure"):
        causes.append({"field": "spec.template.spec.restartPolicy",
                       "message": f'Unsupported value: "{pspec.get("restartPolicy", "Always")}": '
                                  'supported values: "OnFailure", "Never"'})
    for key in ("activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        v = spec.get(key)
        if v is not None and (not isinstance(v, int) or v < (1 if key == "activeDeadlineSeconds" else 0)):
            causes.append({"field": f"spec.{key}", "message": f"Invalid value: {v}: must be greater than or equal to 0"})
    if causes:
        raise ApiError(422, "Invalid",
                       f'Job.batch "{name}" is invalid: ' + ", ".join(f"{c['field']}: {c['message']}" for c in causes),
                       {"name": name, "group": "batch", "kind": "Job",
                        "causes": [{"reason": "FieldValueInvalid", **c} for c in causes]})
    uid = new_uid()
    tlabels = dict((tmpl.get("metadata") or {}).get("labels") or {})
    if not md.get("labels") and tlabels:
        md["labels"] = dict(tlabels)
    tlabels.update({"controller-uid": uid, "job-name": name,
                    "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name})
    tmd = tmpl.setdefault("metadata", {})
    tmd["labels"] = tlabels
    pspec.setdefault("terminationGracePeriodSeconds", 30)
    pspec.setdefault("dnsPolicy", "ClusterFirst")
    pspec.setdefault("schedulerName", "default-scheduler")
    for c in containers:
        c.setdefault("imagePullPolicy", "Always" if c.get("image", "").endswith(":latest") else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
    spec["template"] = tmpl
    tmpl["spec"] = pspec
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    md.update({"namespace": ns, "uid": uid, "generation": 1, "creationTimestamp": now_iso()})
    md.pop("resourceVersion", None)
    md.setdefault("labels", {})
    md.setdefault("annotations", {})
    body["apiVersion"] = "batch/v1"
    body["kind"] = "Job"
    body["status"] = {}
    return body


def job_condition(ctype, reason=None, message=None):
    t = now_iso()
    c = {"type": ctype, "status": "True", "lastProbeTime": t, "lastTransitionTime": t}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def delete_policy(query, body):
    """propagationPolicy from the DeleteOptions body, else the query; the
    default of batch/v1 Jobs is Orphan (as the API server's for Jobs)."""
    policy = None
    if isinstance(body, dict):
        policy = body.get("propagationPolicy")
        if policy is None and body.get("orphanDependents") is not None:
            policy = "Orphan" if body["orphanDependents"] else "Background"
    if policy is None:
        policy = (query.get("propagationPolicy") or [None])[0]
    if policy is None and (query.get("orphanDependents") or [""])[0] == "false":
        policy = "Background"
    policy = policy or "Orphan"
    if policy not in ("Orphan", "Background", "Foreground"):
        raise ApiError(422, "Invalid", f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: '
                                       f'Unsupported value: "{policy}": supported values: "Foreground", '
                                       '"Background", "Orphan", "nil"')
    return policy


def missing_job(name):
    return not_found("jobs", "batch", name)
