#!/bin/sh
# A rate limit of switchyard.cfg (`rate_limits = { crm = {...}; }`) named
# by a workflow's tasks: they share its one bucket ("rate:@crm") at its
# rate, the waiting ones say so in `status` and `switchyard limits` lists
# it (before its first take too); a SIGHUP that makes it faster applies to the tasks already waiting,
# and a reload that removes it while a workflow names it leaves that
# workflow out, saying why in the host's log.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host 'rate_limits = { crm = { rate = 1; interval = "1h"; burst = 2; }; };'
workflow calls <<'WF'
workflow = {
  name = "calls";
  rate_limits = ( { name = "crm"; } );
  tasks = ( { id = "a"; }, { id = "b"; }, { id = "c"; }, { id = "d"; }, { id = "e"; } );
};
WF
wait_log() { for _ in $(seq 1 "$2"); do grep -q "$1" "$host/serve.log" && return 0; sleep 0.1; done; return 1; }
dispatched() { grep -c "^dispatch public::calls::" "$host/dispatch.log" 2>/dev/null; }

run check
rc_is 0 "check accepts a workflow naming a rate limit of switchyard.cfg"
run limits
has "rate:@crm: 2 token(s) of 2, 1 per 3600000 ms, full" \
    "switchyard limits lists the configured rate before any task took of it"

$SY_WRAP "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
pid=$!
run submit calls
id=$(run_id)
for _ in $(seq 1 300); do
    [ "$(SY_WRAP= jget "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Waiting")')" = 3 ] && break
    sleep 0.1
done
is 3 "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Waiting")' \
    "the burst of 2 starts, the other 3 wait for a token of the hour's rate"
[ "$(dispatched)" = 2 ]; ok $? "two were dispatched (got $(dispatched))"
is true "$id" 'all(x["waiting_for"].startswith("waiting for rate:@crm (next token in ") for x in r["tasks"] if x["status"] == "Waiting")' \
    "each waiting task names the configuration's bucket"
run limits
has "rate:@crm: 0 token(s) of 2, 1 per 3600000 ms" "switchyard limits lists the bucket at its rate"

sed -i 's/crm = { rate = 1; interval = "1h"; burst = 2; }/crm = { rate = 100; interval = "1s"; burst = 1; }/' \
    "$host/switchyard.cfg"
kill -HUP "$pid"
wait_log "reloaded:" 100
ok $? "SIGHUP reloads the faster rate"
for _ in $(seq 1 300); do [ "$(SY_WRAP= jget "$id" 'r["status"]')" = Completed ] && break; sleep 0.1; done
is Completed "$id" 'r["status"]' "the tasks already waiting start at the new rate, not the hour's"
[ "$(dispatched)" = 5 ]; ok $? "each task was dispatched once (got $(dispatched))"

# Removed while the workflow still names it: the workflow is left out.
sed -i 's/^rate_limits = .*$//' "$host/switchyard.cfg"
kill -HUP "$pid"
wait_log "reloaded: 1 instance, 0 workflows" 100
ok $? "a reload without the rate limit a workflow names leaves the workflow out"
grep -q "error reload: .*calls.cfg:3: error: task 'a' (public::calls::a): rate limit 'crm' is not defined in" "$host/serve.log"
ok $? "and logs why, naming the workflow's line, the task and the rate limit"
grep -q "warn  reload: .*workflow files with errors (above) skipped" "$host/serve.log"
ok $? "and that the file was skipped"
kill -TERM "$pid"
wait "$pid"
ok $? "the host drains and exits"
cleanup_host
done_testing
