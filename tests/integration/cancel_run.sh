#!/bin/sh
# `switchyard cancel` reaches a run wherever it is held: a run driven by
# `switchyard run` in another process takes the request as a serving host
# does, its running tasks end Cancelled and `run` reports the run
# Cancelled, long before its tasks would have ended.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
workflow slow <<'WF'
workflow = {
  name = "slow";
  tasks = (
    { id = "a"; sleep_ms = 60000; },
    { id = "b"; after = ["a"]; sleep_ms = 10; }
  );
};
WF

$SY_WRAP "$SWITCHYARD" run slow >"$host/run.out" 2>"$host/run.err" &
pid=$!
# Polled with `status` bare (under valgrind each poll was a program start of
# seconds, so the count is high); the `is` after it reads it under valgrind.
for _ in $(seq 1 600); do
    id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/run.out")
    [ -n "$id" ] && [ "$(SY_WRAP= jget "$id" 't["a"]["status"]' 2>/dev/null)" = Running ] && break
    sleep 0.1
done
is Running "$id" 't["a"]["status"]' "run holds its run, a task running"
run cancel "$id"
rc_is 0 "cancel of a run held by switchyard run succeeds"
has "cancel requested; its host will stop it" "as a request"
ended=1
for _ in $(seq 1 300); do
    if ! kill -0 "$pid" 2>/dev/null; then ended=0; break; fi
    sleep 0.1
done
ok $ended "run carries it out and ends (not after the task's 60 s)"
[ "$ended" -eq 0 ] || kill -KILL "$pid" 2>/dev/null
wait "$pid"
rc=$?
[ "$rc" -eq 1 ]; ok $? "run exits 1, its run not completed (status $rc)"
grep -q "^run $id Cancelled" "$host/run.out"; ok $? "and says the run was Cancelled"
is Cancelled "$id" 'r["status"]' "the run is recorded Cancelled"
is '["Cancelled", "Skipped"]' "$id" '[t["a"]["status"], t["b"]["status"]]' \
    "its running task Cancelled, the one not started Skipped"

cleanup_host
done_testing
