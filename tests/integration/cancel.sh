#!/bin/sh
# Cancel works on any run: on a run whose host was killed, `cancel` ends it
# at once (its running tasks Cancelled, the rest Skipped, the run
# Cancelled) and a host that comes later does not revive it; on a run a
# live host holds, it is a request that host carries out.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
workflow slow <<'WF'
workflow = {
  name = "slow";
  tasks = (
    { id = "a"; sleep_ms = 20000; },
    { id = "b"; sleep_ms = 20000; },
    { id = "c"; after = ["a"]; sleep_ms = 10; }
  );
};
WF
# The waits poll `status` without $SY_WRAP: under valgrind each poll was a
# program start of seconds.  The `is` assertions read it under valgrind.
# A bare poll takes a tenth of a second, so they poll up to 600 times: a
# minute or more for a host under valgrind on a loaded machine.
wait_running() { # RUN N
    for _ in $(seq 1 600); do
        [ "$(SY_WRAP= jget "$1" 'sum(1 for x in r["tasks"] if x["status"] == "Running")')" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

"$SWITCHYARD" run slow >"$host/run.out" 2>&1 &
pid=$!
for _ in $(seq 1 50); do id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/run.out"); [ -n "$id" ] && break; sleep 0.1; done
wait_running "$id" 2
ok $? "two tasks run"
kill -9 "$pid"
wait "$pid" 2>/dev/null
run cancel "$id"
rc_is 0 "cancel of a run whose host is dead succeeds"
has "run $id: Cancelled" "and ends it at once"
is Cancelled "$id" 'r["status"]' "the run is recorded Cancelled"
is '["Cancelled", "Cancelled", "Skipped"]' "$id" '[t["a"]["status"], t["b"]["status"], t["c"]["status"]]' \
    "its running tasks Cancelled, the one not started Skipped"
run serve --exit-when-idle
rc_is 0 "a later host starts"
is Cancelled "$id" 'r["status"]' "and does not revive it"
is 1 "$id" 't["a"]["attempts"]' "nor runs its tasks again"

run submit slow
id2=$(run_id)
$SY_WRAP "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
pid=$!
wait_running "$id2" 2
run cancel "$id2"
rc_is 0 "cancel of a run a live host holds succeeds"
has "cancel requested; its host will stop it" "as a request"
for _ in $(seq 1 600); do [ "$(SY_WRAP= jget "$id2" 'r["status"]')" = Cancelled ] && break; sleep 0.1; done
is Cancelled "$id2" 'r["status"]' "which the host carries out"
is '["Cancelled", "Cancelled", "Skipped"]' "$id2" '[t["a"]["status"], t["b"]["status"], t["c"]["status"]]' \
    "its tasks as they were"
kill -TERM "$pid"
wait "$pid"
cleanup_host
done_testing
