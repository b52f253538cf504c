#!/bin/sh
# `serve` and signals: the first SIGTERM drains (the attempt in flight
# finishes and is recorded, nothing new starts, the run is handed back),
# the second cancels the attempt in flight and puts its task back Ready,
# not charged; a later host finishes what was left.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
workflow slow <<'WF'
workflow = {
  name = "slow";
  tasks = (
    { id = "first"; sleep_ms = 4000; },
    { id = "second"; after = ["first"]; sleep_ms = 10; }
  );
};
WF

# wait_state RUN TASK STATE: polls status until the task reaches STATE.
# Unwrapped: under valgrind a poll would take most of the task's time, and
# the signals below must land while the attempt still runs.
wait_state() {
    wrap=$SY_WRAP
    SY_WRAP=
    for _ in $(seq 1 200); do
        if [ "$(jget "$1" "t[\"$2\"][\"status\"]")" = "$3" ]; then
            SY_WRAP=$wrap
            return 0
        fi
        sleep 0.05
    done
    SY_WRAP=$wrap
    return 1
}

run submit slow
id=$(run_id)
$SY_WRAP "$SWITCHYARD" serve >"$host/serve1.log" 2>&1 &
pid=$!
wait_state "$id" first Running; ok $? "serve starts the first task"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ]; ok $? "the first SIGTERM drains and exits 0 (got $rc)"
is Completed "$id" 't["first"]["status"]' "the attempt in flight finished and was recorded"
is Ready "$id" 't["second"]["status"]' "nothing new was started while draining"
is Running "$id" 'r["status"]' "the run is left for another host"
out=$(cat "$host/serve1.log")
has "draining" "the log says it drains"

run submit slow
id2=$(run_id)
"$SWITCHYARD" serve >"$host/serve2.log" 2>&1 &
pid=$!
wait_state "$id2" first Running; ok $? "a second host starts work"
kill -TERM "$pid"
sleep 0.2
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ]; ok $? "the second SIGTERM cancels the attempt and exits (status $rc)"
out=$(cat "$host/serve2.log")
has "cancelling 1 running task (public::slow::first)" "it says what it cancels"
has "their tasks go back to Ready, not charged, for the next host" "and what becomes of them"
is Ready "$id2" 't["first"]["status"]' "the cancelled attempt's task is Ready again"

run serve --exit-when-idle
rc_is 0 "a later host takes both runs and finishes them"
is Completed "$id" 'r["status"]' "the drained run completed"
is Completed "$id2" 'r["status"]' "the interrupted run completed"
is 1 "$id2" 't["first"]["attempts"]' "the attempt cut off by the stop ran again, not charged"
is 1 "$id" 't["first"]["attempts"]' "the drained attempt did not run again"

# More runs waiting than one claim takes (8): --exit-when-idle waits for the
# claims after the first batch, not only for the runs it holds.  12 runs:
# two claims (each submit is a whole process under valgrind).
workflow quick <<'WF'
workflow = { name = "quick"; tasks = ( { id = "t"; } ); };
WF
for _ in $(seq 1 12); do "$SWITCHYARD" submit quick >/dev/null || echo "# submit failed"; done
run serve --exit-when-idle
rc_is 0 "a host with 12 runs waiting serves until idle"
n=$("$SWITCHYARD" runs --all --json | python3 -c 'import json, sys; print(sum(1 for r in json.load(sys.stdin) if r["workflow"] == "quick" and r["status"] == "Completed"))')
[ "$n" = 12 ]; ok $? "and completes all 12 before it exits, not the first claim's 8 ($n)"

cleanup_host
done_testing
