#!/bin/sh
# The admin API on the shared store: `serve` on a throwaway PostgreSQL
# (tests/bin/pg-throwaway) answers the same calls as on SQLite: a run
# submitted through the API completes, one run with its tasks and
# attempts, the list filtered by state, a retry, the metrics, the audit
# trail of those changes; a named event in the stream, and beside it in
# the list the run its trigger started.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a database server and a serving host; the sanitizer pass runs it (the store's code runs under valgrind in tests/store)"
    exit 0
fi
make_admin_host
url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host")
case $? in
0) ;;
77) echo "1..0 # SKIP no PostgreSQL server binaries (apt-get install postgresql-15)"; exit 0 ;;
*) echo "Bail out! the throwaway PostgreSQL server did not start"; exit 1 ;;
esac
stop_pg() { "$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"; cleanup_host; }
trap stop_pg EXIT
sed -i "s|sqlite:var/sy.db|$url|" "$host/switchyard.cfg"
cd "$host" || exit 1
case $("$SWITCHYARD" migrate 2>&1) in
*"not in this build"*)
    echo "1..0 # SKIP this build has no PostgreSQL store (configure found no libpq)"
    exit 0 ;;
esac
workflow pair <<'WF'
workflow = {
  name = "pair";
  tasks = ( { id = "a"; command = ["/bin/echo", "{\"n\": 1}"]; },
            { id = "b"; after = ["a"]; command = ["/bin/sh", "-c", "[ -f ../flag ] && echo '{}'"];
              retry = { attempts = 1; }; } );
};
WF
workflow landed <<'WF'
workflow = { name = "landed";
  triggers = ( { name = "raw"; event = "file.landed"; } );
  tasks = ( { id = "a"; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens on the PostgreSQL store"

api POST /api/v1/runs '{"workflow": "pair"}' token
code_is 201 "submit through the API"
id=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
wait_status "$id" Failed
ok $? "the run ends (its second task fails until the flag exists)"
api GET "/api/v1/runs/$id"
jq_is '["Completed", "Failed"]' '[t["status"] for t in b["tasks"]]' "one run with its tasks, from PostgreSQL"
api GET "/api/v1/runs?state=Failed"
jq_is "[$id]" '[r["run_id"] for r in b["runs"]]' "the list filtered by state"
: >"$host/flag"
api POST "/api/v1/runs/$id/retry" '{}' token
code_is 200 "retry from failed"
wait_status "$id" Completed
ok $? "and the same run completes"
api GET /metrics
code_is 200 "the metrics"
case "$body" in *'switchyard_runs_ended_total{state="completed"} 1'*) ok 0 "count the run ended Completed" ;; *) ok 1 "count the run ended Completed" ;; esac
api GET "/api/v1/audit?limit=2" '' token
jq_is "[\"retry token_file run $id 200\", \"submit token_file workflow pair 201\"]" \
    '[" ".join(str(r[k]) for k in ("action", "who", "target", "status")) for r in b["audit"]]' \
    "the audit trail of the changes, from PostgreSQL"

# A named event: in the stream, and the run its trigger started beside it.
curl -sN --max-time 20 "$base/api/v1/events" >"$host/pg.sse" 2>/dev/null &
sse=$!
subscribed "$host/pg.sse"
ok $? "the event stream is subscribed"
api POST /api/v1/events '{"name": "file.landed", "data": {"n": 1}}' token
code_is 201 "an event posted"
for _ in $(seq 1 100); do
    api GET /api/v1/named-events
    case "$body" in *'"run":null'* | *'"triggers":[]'*) sleep 0.1 ;; *) break ;; esac
done
jq_is '[["public::landed::raw", true]]' '[[t["trigger"], t["run"] > 0] for t in b["events"][0]["triggers"]]' \
    "the event names the trigger it fired and its run, from PostgreSQL"
for _ in $(seq 1 50); do grep -q '^event: named' "$host/pg.sse" && break; sleep 0.1; done
kill "$sse" 2>/dev/null
wait "$sse" 2>/dev/null
[ "$(sse_each "$host/pg.sse" 'print(d["name"], d["data"]["n"]) if ev == "named" else None')" = "file.landed 1" ]
ok $? "and the stream told it"
stop_serve
ok $? "serve drains and exits 0"
done_testing
