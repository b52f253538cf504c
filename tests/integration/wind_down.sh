#!/bin/sh
# A wait for a plugin is said while it happens: when `run`'s run has ended
# but a plugin still holds an attempt (its task timed out; the plugin
# ignores cancel()), `run` says at once what it waits for and for how long
# at most, and a signal (Ctrl-C) ends the wait there and then, naming what
# it abandons.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP signals a host mid-wait; it runs in the sanitizer pass"
    exit 0
fi
make_host 'shutdown_grace = "60s";'
has_line() { grep -qF "$2" "$1" && ok 0 "$3" || { echo "# $(cat "$1")"; ok 1 "$3"; }; }
workflow downwf <<'WF'
workflow = {
  name = "downwf";
  tasks = (
    { id = "deaf_x"; mode = "deaf"; timeout = "200ms"; }
  );
};
WF

"$SWITCHYARD" run downwf >"$host/run.out" 2>"$host/run.err" &
pid=$!
said=1
for i in $(seq 1 100); do
    if grep -q "waiting for executor 'ctl', instance 'default' to hand back attempt 1 of task public::downwf::deaf_x" "$host/run.err"; then
        said=0
        break
    fi
    sleep 0.1
done
ok $said "run says what it waits for once its run has ended"
has_line "$host/run.err" "which it was asked to cancel: at most 60 s more, then it is abandoned; a signal (Ctrl-C) stops the wait now" \
    "for how long at most, and how to stop waiting"
kill -INT "$pid"
ended=1
for i in $(seq 1 100); do
    if ! kill -0 "$pid" 2>/dev/null; then
        ended=0
        break
    fi
    sleep 0.1
done
ok $ended "a signal ends the wait (not the 60 s grace)"
[ "$ended" -eq 0 ] || kill -KILL "$pid" 2>/dev/null
wait "$pid"
rc=$?
[ "$rc" -eq 1 ]; ok $? "run exits 1, its run having failed (status $rc)"
has_line "$host/run.err" "no longer waiting for plugins" "the signal's line says so"
has_line "$host/run.err" "abandoned at shutdown: executor 'ctl', instance 'default' has not completed attempt 1 of task public::downwf::deaf_x" \
    "and the attempt left behind is named"
grep -q "^run [0-9]* Failed" "$host/run.out"; ok $? "the run's end was printed"

cleanup_host
done_testing
