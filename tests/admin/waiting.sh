#!/bin/sh
# The Waiting state, said: a task whose concurrency key is full is Waiting,
# and `status` (text and --json), the admin API's run, the event stream
# and the metrics name the key; once it starts, nothing says it waits.
# The readers (API, status) add its place in the key's queue as now; the
# event stream tells the reason as the engine wrote it.
# On SQLite, then on a throwaway PostgreSQL (tests/bin/pg-throwaway) when
# its binaries and libpq are there.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a serving host polled while a task holds a key; the sanitizer pass runs it (tests/engine/test_waiting runs the state under valgrind)"
    exit 0
fi

# scenario NAME: one run of two tasks on one key of limit 1; the one that
# holds the key waits for $host/go.
scenario() {
    rm -f "$host/go"
    workflow w <<WF
workflow = { name = "w"; limits = ( { key = "db"; limit = 1; } );
  tasks = ( { id = "a"; command = ["sh", "-c", "while [ ! -f $host/go ]; do sleep 0.05; done"]; },
            { id = "b"; command = ["sh", "-c", "while [ ! -f $host/go ]; do sleep 0.05; done"]; } ); };
WF
    start_serve
    ok $? "$1: serve listens"
    # The stream is killed below, once the run has ended; its first line
    # (": switchyard events") says it is subscribed, and only then is the
    # run submitted.  The file is removed first: the redirection below is
    # made by the forked child, so until it runs the file is still the
    # previous scenario's stream, and a test for "not empty" passed at
    # once.  The run was then submitted before the subscription, on a
    # loaded machine, and the stream missed the first turn's events (its
    # first event was task a's Completed; seen twice in the PostgreSQL
    # scenario, the second one, of a fresh clone's sanitizer pass).
    rm -f "$host/events.sse"
    curl -sN --max-time 300 "$base/api/v1/events" >"$host/events.sse" 2>/dev/null &
    sse=$!
    subscribed "$host/events.sse"
    ok $? "$1: the event stream is subscribed"
    api POST /api/v1/runs '{"workflow": "w"}' token
    code_is 201 "$1: a run submitted"
    id=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
    for _ in $(seq 1 300); do
        api GET "/api/v1/runs/$id"
        case "$body" in *'"status":"Waiting"'*'"status":"Running"'* | *'"status":"Running"'*'"status":"Waiting"'*) break ;; esac
        sleep 0.1
    done
    jq_is '["Running", "Waiting"]' 'sorted(t["status"] for t in b["tasks"])' \
        "$1: one task holds the key, the other is Waiting"
    jq_is '["waiting for key:db (1 of 1 held; position 1 of 1 waiting)"]' \
        '[t["waiting_for"] for t in b["tasks"] if t["status"] == "Waiting"]' \
        "$1: the admin API names the key it waits for, and its place in the queue"
    jq_is '[null]' '[t["waiting_for"] for t in b["tasks"] if t["status"] == "Running"]' \
        "$1: the running one waits for nothing"
    out=$("$SWITCHYARD" status "$id" 2>&1 | grep ' Waiting ')
    has "waiting for key:db (1 of 1 held; position 1 of 1 waiting)" "$1: status says it, on the Waiting task's line"
    waiter=$(printf '%s' "$body" | python3 -c 'import json,sys; print([t["id"] for t in json.load(sys.stdin)["tasks"] if t["status"] == "Waiting"][0])')
    out=$("$SWITCHYARD" status "$id" --task "$waiter" 2>&1)
    has "waiting    for key:db (1 of 1 held; position 1 of 1 waiting)" "$1: status --task says it in full"
    body=$("$SWITCHYARD" status "$id" --json 2>&1)
    jq_is '["waiting for key:db (1 of 1 held; position 1 of 1 waiting)"]' \
        '[t["waiting_for"] for t in b["tasks"] if t["status"] == "Waiting"]' \
        "$1: status --json says it"
    api GET /metrics
    has_body() { case "$body" in *"$1"*) ok 0 "$2" ;; *) ok 1 "$2" ;; esac; }
    has_body 'switchyard_tasks_waiting{kind="key"} 1' "$1: the metrics count it, by kind"
    has_body 'switchyard_tasks{state="waiting"} 1' "$1: and by state"
    : >"$host/go"
    wait_status "$id" Completed
    ok $? "$1: both run once the key is free"
    jq_is '[null, null]' '[t["waiting_for"] for t in b["tasks"]]' "$1: and neither waits any more"
    # The stream is read once it has carried the run's end (its last
    # event): a fixed pause here was too short for a loaded machine's
    # delivery, and the Waiting event, told seconds before, is in order
    # before it.
    for _ in $(seq 1 600); do
        python3 - "$host/events.sse" "$id" <<'PY' && break
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("data: "):
        d = json.loads(line[6:])
        if d.get("run_id") == int(sys.argv[2]) and d.get("task") is None and d.get("state") == "Completed":
            sys.exit(0)
sys.exit(1)
PY
        sleep 0.1
    done
    kill "$sse" 2>/dev/null
    wait "$sse" 2>/dev/null
    body=$(python3 - "$host/events.sse" <<'PY'
import json, sys
seen = []
for line in open(sys.argv[1]):
    if line.startswith("data: "):
        d = json.loads(line[6:])
        if d.get("state") == "Waiting":
            seen.append(d.get("waiting_for"))
print(json.dumps(seen))
PY
)
    [ "$body" = '["waiting for key:db (1 of 1 held)"]' ]
    r=$?
    ok $r "$1: the event stream told it once, with the key (got $body)"
    if [ $r -ne 0 ]; then
        # What the stream carried and what the host said, for the record.
        sed 's/^/# events.sse: /' "$host/events.sse"
        tail -n 40 "$host/serve.log" | sed 's/^/# serve.log: /'
    fi
    stop_serve
    ok $? "$1: serve stops cleanly"
}

make_admin_host
cd "$host" || exit 1
scenario sqlite

url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host")
case $? in
0)
    trap '"$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"' EXIT
    sed -i "s|sqlite:var/sy.db|$url|" "$host/switchyard.cfg"
    case $("$SWITCHYARD" migrate 2>&1) in
    *"not in this build"*) echo "# this build has no PostgreSQL store" ;;
    *) scenario postgresql ;;
    esac
    "$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"
    trap - EXIT ;;
77) echo "# no PostgreSQL server binaries: the PostgreSQL half is left out" ;;
*) echo "Bail out! the throwaway PostgreSQL server did not start"; exit 1 ;;
esac
cd / || exit 1
cleanup_host
done_testing
