#!/bin/sh
# cancel_in_progress across hosts (docs/flow-control.md): on one
# PostgreSQL database (a throwaway server), host 1 runs a long task that
# holds key "solo" (limit 1, strategy cancel_in_progress), then drains
# (it claims nothing new, and keeps its attempt and its lease).  Host 2
# takes a newer run on the same key: its task asks, through the
# store, that host 1's be cancelled.  Host 1 acts at its next lease
# renewal: its task ends Cancelled with why, not retried; host 2's task
# then takes the slot and Completes.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven (a 1s lease, a draining host); it runs in the sanitizer pass"
    exit 0
fi
pg_store_host 'lease = "1s"; shutdown_grace = "20s";'
workflow solo <<'WF'
workflow = {
  name = "solo";
  retry = { attempts = 3; };
  limits = ( { key = "solo"; limit = 1; strategy = "cancel_in_progress"; } );
  tasks = ( { id = "a"; sleep_ms = 15000; } );
};
WF
workflow newer <<'WF'
workflow = {
  name = "newer";
  limits = ( { key = "solo"; limit = 1; strategy = "cancel_in_progress"; } );
  tasks = ( { id = "a"; sleep_ms = 10; } );
};
WF
q() { "$PSQL" -qtA "$url" -c "$1"; }
"$SWITCHYARD" serve >"$host/h1.log" 2>&1 &
h1=$!
run submit solo
old=$(run_id)
for _ in $(seq 1 200); do
    [ "$(q "SELECT state FROM tasks WHERE run_id = $old")" = 2 ] && break
    sleep 0.05
done
[ "$(q "SELECT state FROM tasks WHERE run_id = $old")" = 2 ]
ok $? "host 1 runs the older task, holding key solo"
kill -TERM "$h1"
sleep 0.3
"$SWITCHYARD" serve >"$host/h2.log" 2>&1 &
h2=$!
run submit newer
new=$(run_id)
t0=$(date +%s%N)
for _ in $(seq 1 400); do
    [ "$(q "SELECT state FROM tasks WHERE run_id = $new")" = 3 ] && break
    sleep 0.05
done
t1=$(date +%s%N)
[ "$(q "SELECT state FROM tasks WHERE run_id = $new")" = 3 ]
ok $? "the newer task took the slot and Completed ($(( (t1 - t0) / 1000000 )) ms after its submit)"
why=$(q "SELECT state || ' ' || attempts || ' ' || COALESCE(error, '') FROM tasks WHERE run_id = $old")
[ "$why" = "6 1 cancelled for a newer task on key:solo (strategy cancel_in_progress)" ]
ok $? "the older task ended Cancelled after 1 attempt, with why ($why)"
hosts=$(q "SELECT count(DISTINCT host) FROM tasks")
[ "$hosts" = 2 ]
ok $? "the two tasks ran on two hosts ($hosts)"
wait "$h1"
ok $? "host 1 drains and exits 0 once its attempt is cancelled"
kill -TERM "$h2"
wait "$h2"
ok $? "host 2 drains and exits 0"
cleanup_host
done_testing
