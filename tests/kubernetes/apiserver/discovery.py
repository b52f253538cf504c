"""The discovery documents: /version, /api, /api/v1, /apis, /apis/batch/v1,
enough for kubectl to find jobs, pods and pods/log."""

VERSION = {"major": "1", "minor": "29", "gitVersion": "v1.29.0-switchyard",
           "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
           "buildDate": "2026-11-28T00:00:00Z", "goVersion": "go1.21.5", "compiler": "gc",
           "platform": "linux/amd64"}

READ = ["get", "list", "watch"]


def api_versions(addr):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}]}


CORE_V1 = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
    {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
     "verbs": ["get", "list"], "shortNames": ["ns"]},
    {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
     "verbs": ["delete"] + READ, "shortNames": ["po"], "categories": ["all"]},
    {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
]}

BATCH_V1 = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "batch/v1", "resources": [
    {"name": "jobs", "singularName": "job", "namespaced": True, "kind": "Job",
     "verbs": ["create", "delete"] + READ, "categories": ["all"]},
    {"name": "jobs/status", "singularName": "", "namespaced": True, "kind": "Job", "verbs": ["get"]},
]}

BATCH_GROUP = {"name": "batch", "versions": [{"groupVersion": "batch/v1", "version": "v1"}],
               "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"}}

API_GROUPS = {"kind": "APIGroupList", "apiVersion": "v1", "groups": [BATCH_GROUP]}

BATCH = dict(BATCH_GROUP, kind="APIGroup", apiVersion="v1")


def namespace(name):
    return {"kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": name, "uid": "00000000-0000-0000-0000-" + name.encode().hex()[:12].ljust(12, "0"),
                         "resourceVersion": "1", "creationTimestamp": "2026-11-28T00:00:00Z",
                         "labels": {"kubernetes.io/metadata.name": name}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def _pb_string(field, text):
    data = text.encode()
    return bytes([field << 3 | 2, len(data)]) + data


# An OpenAPI v2 document with no definitions, as the protobuf kubectl asks
# for (gnostic's openapi_v2.Document: swagger = 1, info = 2 {title = 1,
# version = 2}): kubectl's client-side validation skips kinds it has no
# schema for, so `kubectl create -f` validates nothing and goes on.
_INFO = _pb_string(1, "Kubernetes") + _pb_string(2, VERSION["gitVersion"])
OPENAPI_PB = _pb_string(1, "2.0") + bytes([2 << 3 | 2, len(_INFO)]) + _INFO
OPENAPI_JSON = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]}, "paths": {}}
