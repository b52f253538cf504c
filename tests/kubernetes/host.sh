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

# Assertions in batches: Python starts slowly on a loaded machine, so the
# checks of one step are queued and judged by one interpreter.
#   expect EXPECTED EXPR NAME   over `status --json` of the run (`r`, and
#                               `t` mapping task ids to their entries)
#   kexpect EXPECTED EXPR NAME  over the API server: `s` its /_test/state,
#                               `reqs` its request log (method, path, code)
#   verify [RUN_ID]             judges them all, one TAP line each
expect() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$dir/expect.tsv"; }
kexpect() { expect "$@"; }
verify() {
    : >"$dir/status.json"
    [ -z "${1:-}" ] || "$SWITCHYARD" status "$1" --json >"$dir/status.json" 2>"$dir/status.err"
    python3 - "$dir/status.json" "$dir/expect.tsv" "$dir/k8s-requests.log" <<'PY' >"$dir/verdicts"
import http.client, json, os, ssl, sys
text = open(sys.argv[1]).read()
r = json.loads(text) if text.strip() else {}
t = {x["id"]: x for x in r.get("tasks", [])}
ctx = ssl.create_default_context(cafile=os.environ["SY_K8S_CA"])
c = http.client.HTTPSConnection("127.0.0.1", int(os.environ["SY_K8S_URL"].rsplit(":", 1)[1]), context=ctx, timeout=30)
c.request("GET", "/_test/state", headers={"Authorization": "Bearer " + os.environ["SY_K8S_TOKEN"]})
s = json.loads(c.getresponse().read())
try:
    reqs = [json.loads(l) for l in open(sys.argv[3])]
except FileNotFoundError:
    reqs = []
for line in open(sys.argv[2]):
    exp, expr, name = line.rstrip("\n").split("\t")
    try:
        v = eval(expr)
        got = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    except Exception as e:
        got = "error: %r" % e
    print("%d\t%s\t%s\t%s" % (got == exp, name, expr, got.replace("\n", " ")[:300]))
PY
    rm -f "$dir/expect.tsv"
    tab=$(printf '\t')
    while IFS="$tab" read -r good name expr got; do
        [ "$good" = 1 ] || echo "# $expr: got '$got'"
        [ "$good" = 1 ]; ok $? "$name"
    done <"$dir/verdicts"
}

# until_state EXPR: waits (20 s at most) for a Python expression over the
# API server's /_test/state (`s`) to hold; one interpreter polls.
until_state() {
    python3 - "$1" <<'PY'
import http.client, json, os, ssl, sys, time
ctx = ssl.create_default_context(cafile=os.environ["SY_K8S_CA"])
port = int(os.environ["SY_K8S_URL"].rsplit(":", 1)[1])
end = time.monotonic() + 20
while time.monotonic() < end:
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    c.request("GET", "/_test/state", headers={"Authorization": "Bearer " + os.environ["SY_K8S_TOKEN"]})
    s = json.loads(c.getresponse().read())
    c.close()
    if eval(sys.argv[1]):
        sys.exit(0)
    time.sleep(0.03)
print("# still false after 20 s: " + sys.argv[1])
sys.exit(1)
PY
}
