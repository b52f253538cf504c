# Sourced by the admin API tests: a scratch host with the thread plugin on
# its own SQLite store, `serve` listening on a free loopback port (port 0:
# the kernel picks it; the log line says which), and curl to talk to it.
. "$SY_SRCDIR/tests/cli/tap.sh"
if ! command -v curl >/dev/null 2>&1; then
    echo "1..0 # SKIP curl is not installed"
    exit 0
fi
TOKEN=admin-test-token-0123456789abcdef

# make_admin_host [ADMIN-GROUP-LINES]: $host with switchyard.cfg, a token
# file (0600) and workflows/; the admin group listens on 127.0.0.1:0
# unless lines are given.
make_admin_host() {
    host=$(mktemp -d "${TMPDIR:-/tmp}/sy-admin-XXXXXX") || exit 1
    chmod 0700 "$host"
    mkdir -p "$host/plugins" "$host/workflows"
    install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
    printf '%s\n' "$TOKEN" >"$host/token"
    chmod 0600 "$host/token"
    local group='listen = "127.0.0.1:0"; token_file = "token";'
    [ $# -gt 0 ] && group=$1
    cat >"$host/switchyard.cfg" <<CFG
store = "sqlite:var/sy.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 4; }; };
admin = { $group };
CFG
    SWITCHYARD_CONFIG="$host/switchyard.cfg"
    export SWITCHYARD_CONFIG
}

workflow() { cat >"$host/workflows/$1.cfg"; }

# start_serve: `serve` in the background ($serve_pid), $base its URL once
# it listens.  Fails when it does not within 60 s (valgrind is slow).
start_serve() {
    : >"$host/serve.log"
    $SY_WRAP "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
    serve_pid=$!
    base=
    for _ in $(seq 1 600); do
        where=$(sed -n 's/.*admin: listening on \([^ ]*\).*/\1/p' "$host/serve.log" | head -n1)
        if [ -n "$where" ]; then
            case "$where" in
            unix:*) base="http://localhost" ;;
            *) base="http://$where" ;;
            esac
            return 0
        fi
        kill -0 "$serve_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "# serve did not listen:"
    sed 's/^/#   /' "$host/serve.log"
    return 1
}

# stop_serve: SIGTERM, and serve's exit status (0: it drained and exited
# cleanly, with nothing the sanitizers or valgrind complained about).
stop_serve() {
    kill -TERM "$serve_pid" 2>/dev/null
    wait "$serve_pid" 2>/dev/null
    local r=$?
    [ $r -eq 0 ] || sed 's/^/#   /' "$host/serve.log" | tail -n 40
    return $r
}

# api METHOD PATH [BODY] [AUTH]: sets $code (the HTTP status), $body and
# $headers.  AUTH: "token" (the right one), "none", or a header value.
api() {
    local method=$1 path=$2 data=${3-} auth=${4:-none}
    set -- -s -o "$host/body" -D "$host/headers" -w '%{http_code}' -X "$method"
    case "$auth" in
    none) ;;
    token) set -- "$@" -H "Authorization: Bearer $TOKEN" ;;
    *) set -- "$@" -H "Authorization: $auth" ;;
    esac
    [ -n "$data" ] && set -- "$@" -H 'Content-Type: application/json' --data-binary "$data"
    [ -n "${curl_unix:-}" ] && set -- "$@" --unix-socket "$curl_unix"
    code=$(curl "$@" "$base$path")
    body=$(cat "$host/body")
    headers=$(cat "$host/headers")
    out="$code $body"
}

# code_is N NAME: the last api call answered N.
code_is() {
    [ "$code" = "$1" ]
    local r=$?
    [ $r -eq 0 ] || echo "# HTTP $code, expected $1: $body"
    ok $r "$2"
}

# jq_is EXPECTED EXPR NAME: a Python expression on the last body (as `b`).
jq_is() {
    local got
    got=$(printf '%s' "$body" | python3 -c '
import json, sys
b = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v, sort_keys=True) if not isinstance(v, str) else v)' "$2" 2>&1)
    if [ "$got" = "$1" ]; then ok 0 "$3"; else echo "# $2: got '$got', expected '$1'"; ok 1 "$3"; fi
}

# wait_status RUN STATE: polls the run through the API (30 s at most).
wait_status() {
    for _ in $(seq 1 300); do
        api GET "/api/v1/runs/$1"
        case "$body" in *"\"status\":\"$2\",\"error\""*) return 0 ;; esac
        sleep 0.1
    done
    echo "# run $1 never reached $2: $body"
    return 1
}

# sse_each FILE CODE: runs the Python CODE for each event of a captured
# server-sent events stream, with `ev` its name and `d` its data parsed.
sse_each() {
    python3 -c '
import json, sys
code = compile(sys.argv[2], "sse_each", "exec")
ev = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("event: "):
        ev = line[7:]
    elif line.startswith("data: "):
        d = json.loads(line[6:])
        exec(code)' "$1" "$2"
}

# subscribed FILE...: waits (60 s at most) until each file, the output of
# a `curl -sN .../api/v1/events` started in the background, holds the
# stream's first line, which the host writes once the client is
# subscribed; false if one does not.  A test for "not empty" is not
# enough where the file may be left from before: the redirection is made
# by the forked child, whenever it runs.
subscribed() {
    for f in "$@"; do
        for _ in $(seq 1 600); do
            grep -q '^: switchyard events' "$f" 2>/dev/null && break
            sleep 0.1
        done
        grep -q '^: switchyard events' "$f" 2>/dev/null || return 1
    done
}

cleanup_host() { rm -rf "$host"; }
