#!/bin/sh
# Changes through the API make the service calls the CLI makes: submit
# records a run the serving host runs; cancel stops a run it holds;
# retry runs again what failed, in the same run; reload re-reads the
# configuration (a bad one refused, the old kept).
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host
workflow slow <<'WF'
workflow = { name = "slow"; tasks = ( { id = "a"; command = ["sleep", "30"]; },
                                       { id = "b"; after = ["a"]; command = ["true"]; } ); };
WF
# flaky fails until $FLAG exists, which its first attempt creates.
workflow flaky <<WF
workflow = { name = "flaky"; tasks = (
  { id = "first"; command = ["true"]; },
  { id = "then"; after = ["first"]; command = ["sh", "-c", "test -f $host/flag || { touch $host/flag; exit 3; }"]; }
); };
WF
start_serve
ok $? "serve listens"

api POST /api/v1/runs '{"workflow": "slow", "context": {"who": "api"}}' token
code_is 201 "submit"
slow=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
for _ in $(seq 1 100); do
    api GET "/api/v1/runs/$slow"
    case "$body" in *'"id":"a","status":"Running"'*) break ;; esac
    sleep 0.1
done
jq_is Running 'b["tasks"][0]["status"]' "the serving host runs it"
api POST "/api/v1/runs/$slow/cancel" '' token
code_is 202 "cancel of a running run is accepted"
jq_is '[true, "Running"]' '[b["requested"], b["status"]]' "as a request this host carries out"
wait_status "$slow" Cancelled
ok $? "the run ends Cancelled"
jq_is '["Cancelled", "Skipped"]' '[t["status"] for t in b["tasks"]]' \
    "its running task Cancelled, the next Skipped"
api POST "/api/v1/runs/$slow/cancel" '' token
code_is 409 "cancel of an ended run is 409"
api DELETE /api/v1/runs/999 '' token
code_is 404 "cancel of an unknown run is 404"

api POST /api/v1/runs '{"workflow": "flaky"}' token
flaky=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
wait_status "$flaky" Failed
ok $? "a failing run fails"
api POST "/api/v1/runs/$flaky/retry" '{"dry_run": true}' token
code_is 200 "retry, dry run"
jq_is '[["then"], ["first"], false]' '[[t["id"] for t in b["rerun"]], [t["id"] for t in b["kept"]], b["applied"]]' \
    "plans to run again what failed and keep what completed"
api GET "/api/v1/runs/$flaky"
jq_is Failed 'b["status"]' "changing nothing"
api POST "/api/v1/runs/$flaky/retry" '' token
code_is 200 "retry"
wait_status "$flaky" Completed
ok $? "the same run completes"
jq_is '[1, 2]' '[t["attempts"] for t in b["tasks"]]' "the failed task's attempts go on from where they were"
api POST "/api/v1/runs/$flaky/retry" '' token
code_is 409 "retry of a run with nothing failed is 409"

api POST /api/v1/reload '' token
code_is 200 "reload"
grep -q "reload" "$host/serve.log"
ok $? "logged"
cp "$host/switchyard.cfg" "$host/good.cfg"
echo 'executors = 3;' >>"$host/switchyard.cfg"
api POST /api/v1/reload '' token
code_is 422 "a configuration with errors is refused"
cp "$host/good.cfg" "$host/switchyard.cfg"
api POST /api/v1/runs '{"workflow": "flaky"}' token
code_is 201 "the one in force still serves"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
