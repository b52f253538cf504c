#!/bin/sh
# POST /api/v1/drain stops the serving host as its first SIGTERM does: it
# answers 202 with what it waits for, starts no new attempt, lets the
# running one finish, and exits 0; the audit trail has the drain.  Before
# it, GET /api/v1/limits and `limits` show the rate bucket a took from.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven; the sanitizer pass runs it (roles.sh drains under valgrind)"
    exit 0
fi
make_admin_host
# a runs until $host/go exists, so the drain surely finds it running.
workflow long <<WF
workflow = { name = "long";
  rate_limits = ( { key = "api"; rate = 1; interval = "1m"; burst = 5; } );
  tasks = (
  { id = "a"; command = ["sh", "-c", "touch $host/a-started; while [ ! -f $host/go ]; do sleep 0.1; done; touch $host/a-done"]; },
  { id = "b"; after = ["a"]; command = ["touch", "$host/b-ran"]; }
); };
WF
start_serve
ok $? "serve listens"
api POST /api/v1/runs '{"workflow": "long"}' token
code_is 201 "submit"
for _ in $(seq 1 300); do [ -f "$host/a-started" ] && break; sleep 0.1; done
[ -f "$host/a-started" ]; ok $? "the first task runs"

api GET /api/v1/limits
jq_is '{"keys": [], "rates": [["rate:api", 4, 1, 60000, 5, true]]}' \
    '{"keys": b["keys"], "rates": [[r["key"], r["tokens"], r["rate"], r["interval_ms"], r["burst"], 0 < r["next_token_ms"] <= 60000] for r in b["rates"]]}' \
    "GET /api/v1/limits: no pool, no key held; a's token taken from rate:api"
body=$($SY_WRAP "$SWITCHYARD" --host "$base" limits --json 2>&1)
jq_is '[[], ["rate:api", 4]]' '[b["keys"], [b["rates"][0]["key"], b["rates"][0]["tokens"]]]' \
    "limits --host reads it (as limits --json)"
out=$($SY_WRAP "$SWITCHYARD" limits 2>&1)
case "$out" in
"rate:api: 4 token(s) of 5, 1 per 60000 ms, the next in "*" ms") ok 0 "limits prints the bucket" ;;
*) ok 1 "limits prints the bucket (got: $out)" ;;
esac
$SY_WRAP "$SWITCHYARD" drain >"$host/drain.out" 2>&1
[ $? -eq 2 ] && grep -q "drain: needs --host URL" "$host/drain.out"
ok $? "drain without --host is a usage error"

api POST /api/v1/drain ''
code_is 401 "a drain without a token is refused"
api POST /api/v1/drain '' token
code_is 202 "drain answers 202"
jq_is '[true, 1, true]' '[b["draining"], b["running"], b["tasks"] != ""]' \
    "saying it waits for the one running task"
api GET /api/v1/health
jq_is draining 'b["status"]' "the host says it drains"
$SY_WRAP "$SWITCHYARD" --host "$base" --token-file "$host/token" drain >"$host/drain.out" 2>&1
[ $? -eq 1 ] && grep -q "the host is draining already" "$host/drain.out"
ok $? "a second drain is refused (it is no second signal), said by drain --host"
grep -q "POST /api/v1/drain: draining: waiting for 1 running task" "$host/serve.log"
ok $? "the log says what the drain waits for"
kill -0 "$serve_pid" 2>/dev/null; ok $? "the host waits for the running task"
touch "$host/go"
# Bounded: a host that never stops fails here rather than hanging.
for _ in $(seq 1 300); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$serve_pid" 2>/dev/null && kill -KILL "$serve_pid"
wait "$serve_pid"
rc=$?
[ $rc -eq 0 ] || sed 's/^/#   /' "$host/serve.log" | tail -n 40
ok $rc "then exits 0"
[ -f "$host/a-done" ]; ok $? "the running task finished"
[ ! -f "$host/b-ran" ]; ok $? "no new attempt started"

body=$($SY_WRAP "$SWITCHYARD" audit --json --action drain 2>"$host/audit.err")
jq_is '[["token_file", "admin", 409, false], ["token_file", "admin", 202, true], ["-", "-", 401, false]]' \
    '[[r["who"], r["role"], r["status"], r["ok"]] for r in b]' "the audit trail has each drain asked"
cleanup_host
done_testing
