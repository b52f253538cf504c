# Sourced by the lambda plugin's tests: the loopback Lambda endpoint
# (tests/lambda/server.py) and a scratch host whose routing file sends the
# `lam` workflows to a lambda instance.
. "$SY_SRCDIR/tests/integration/lib.sh"

LAMBDA_KEY=AKIDTEST
LAMBDA_SECRET='secret/test+key'

# start_server [ARGS...]: starts the endpoint in $dir; sets $port, $srv.
start_server() {
    rm -f "$dir/port"
    python3 "$SY_SRCDIR/tests/lambda/server.py" --port-file "$dir/port" \
        --log "$dir/requests.log" "$@" &
    srv=$!
    local i=0
    while [ ! -s "$dir/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    port=$(cat "$dir/port" 2>/dev/null)
    [ -n "$port" ] || { echo "Bail out! the test server did not start"; exit 1; }
}

stop_server() { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; }

# make_lambda_host AWS-SETTINGS [SMALL-SETTINGS]: $dir becomes a host with
# the thread and lambda plugins; `lam::**` goes to the instance `aws`,
# `lamsmall::**` to `small` (static keys, a 50000-byte sync payload limit).
make_lambda_host() {
    mkdir -p "$dir/plugins" "$dir/workflows"
    install -m 0755 "$SY_THREAD_PLUGIN" "$dir/plugins/thread.so"
    install -m 0755 "$SY_LAMBDA_PLUGIN" "$dir/plugins/lambda.so"
    cat >"$dir/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
routes = "routes.cfg";
executors = {
  default = { plugin = "thread"; workers = 2; };
  aws = { plugin = "lambda"; endpoint_url = "http://127.0.0.1:$port"; $1 };
  small = { plugin = "lambda"; endpoint_url = "http://127.0.0.1:$port";
            access_key_id = "$LAMBDA_KEY"; secret_access_key = "$LAMBDA_SECRET";
            max_payload_sync = 50000; ${2:-} };
};
CFG
    cat >"$dir/routes.cfg" <<'CFG'
routes = {
  default = "default";
  rules = (
    { match = "*::lamsmall::**"; executor = "small"; },
    { match = "*::lam::**"; executor = "aws"; }
  );
};
CFG
    host=$dir
    SWITCHYARD_CONFIG="$dir/switchyard.cfg"
    export SWITCHYARD_CONFIG
}

# requests FILTER: how many logged requests match a Python expression
# over the request's JSON (bound to `q`).
requests() {
    python3 - "$dir/requests.log" "$1" <<'PY'
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

# notes RUN_ID [KIND]: the notes (or events of KIND) recorded with the
# run's attempts, one a line.
notes() {
    python3 - "$dir/var/switchyard.db" "$1" "${2:-note}" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (d,) in db.execute("SELECT detail FROM events WHERE run_id = ? AND kind = ? ORDER BY id",
                       (int(sys.argv[2]), sys.argv[3])):
    print(d)
PY
}
