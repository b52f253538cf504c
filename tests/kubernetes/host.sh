# Sourced by the kubernetes plugin's tests: the loopback API server
# (tests/kubernetes/lib.sh) and a scratch host whose routing file sends the
# `k8s` workflows to a kubernetes instance that uses the server's
# kubeconfig.  The server runs each pod's command here, so a task's
# `command` is a local command line; its image is only a name.
. "$SY_SRCDIR/tests/kubernetes/lib.sh"

# These scripts wait on a real server and real processes: under valgrind
# their timing means nothing (the sanitizer pass runs them).
skip_under_valgrind() {
    if [ -n "$SY_WRAP" ]; then
        echo "1..0 # SKIP timing-driven against the loopback API server; the sanitizer pass runs it"
        exit 0
    fi
}

# make_k8s_host [SETTINGS]: $dir becomes a host with the thread and
# kubernetes plugins; `k8s::**` goes to the instance `cluster` (namespace
# sy, short bounds for image pulls and scheduling), the rest to threads.
make_k8s_host() {
    mkdir -p "$dir/plugins" "$dir/workflows"
    install -m 0755 "$SY_THREAD_PLUGIN" "$dir/plugins/thread.so"
    install -m 0755 "$SY_KUBERNETES_PLUGIN" "$dir/plugins/kubernetes.so"
    cat >"$dir/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
routes = "routes.cfg";
executors = {
  default = { plugin = "thread"; workers = 2; };
  cluster = { plugin = "kubernetes"; kubeconfig = "$KUBECONFIG";
              namespace = "sy"; image = "busybox:1.36";
              image_pull_timeout = "1s"; unschedulable_timeout = "1s";
              ${1:-} };
};
CFG
    cat >"$dir/routes.cfg" <<'CFG'
routes = {
  default = "default";
  rules = ( { match = "*::k8s::**"; executor = "cluster"; } );
};
CFG
    host=$dir
    SWITCHYARD_CONFIG="$dir/switchyard.cfg"
    export SWITCHYARD_CONFIG
}

# k8s_requests FILTER: how many logged API requests match a Python
# expression over the request's JSON line (bound to `q`).
k8s_requests() {
    python3 - "$dir/k8s-requests.log" "$1" <<'PY'
import json, sys
n = 0
try:
    for line in open(sys.argv[1]):
        q = json.loads(line)
        if eval(sys.argv[2]):
            n += 1
except FileNotFoundError:
    pass
print(n)
PY
}
