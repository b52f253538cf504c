#!/bin/sh
# `serve --metrics-file`: the Prometheus exposition of a live host, written
# whole every interval and once more at the end.  A real workflow's figures
# (completed and failed attempts per instance, runs ended, dispatches
# timed), a task seen running while it runs, no temporary file left, bad
# options refused, and `promtool check metrics` on it when promtool is
# installed (Debian: prometheus).
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
workflow mix <<'WF'
workflow = {
  name = "mix";
  tasks = (
    { id = "a"; },
    { id = "b"; after = ["a"]; },
    { id = "c"; after = ["a"]; },
    { id = "d"; after = ["b", "c"]; },
    { id = "bad"; mode = "fail"; retry = { attempts = 2; delay = "10ms"; }; },
    { id = "slow"; sleep_ms = 1500; }
  );
};
WF

# value NAME_WITH_LABELS: the sample's value in the file ($m), "" if none.
value() { awk -v k="$1" '$1 == k { print $2 }' "$m"; }

m="$host/var/metrics.prom"
mkdir -p "$host/var"
run submit mix
id=$(run_id)
$SY_WRAP "$SWITCHYARD" serve --exit-when-idle --metrics-file "$m" --metrics-interval 100ms \
    >"$host/serve.log" 2>&1 &
pid=$!
seen=1
for _ in $(seq 1 300); do
    if [ -f "$m" ] && [ "$(value 'switchyard_tasks{state="running"}')" = 1 ] &&
        [ "$(value 'switchyard_executor_active{executor="default",plugin="ctl"}')" = 1 ]; then
        seen=0
        break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
ok $seen "while the slow task runs, the file says one task running, one attempt active"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ]; ok $? "serve exits 0 when idle (got $rc)"
is Failed "$id" 'r["status"]' "the run failed (the bad task)"

# completed equals the tasks that succeeded; failed counts both attempts of
# the bad one; every accepted attempt was timed from Ready and to its end.
[ "$(value 'switchyard_executor_completed_total{executor="default",plugin="ctl"}')" = 5 ]
ok $? "completed_total is 5: the tasks that succeeded"
[ "$(value 'switchyard_executor_failed_total{executor="default",plugin="ctl"}')" = 2 ]
ok $? "failed_total is 2: both attempts of the failing task"
[ "$(value 'switchyard_attempts_submitted_total')" = 7 ]; ok $? "7 attempts submitted"
[ "$(value 'switchyard_dispatch_latency_seconds_count')" = 7 ]; ok $? "each one's dispatch latency"
[ "$(value 'switchyard_task_duration_seconds_count')" = 7 ]; ok $? "and its duration"
[ "$(value 'switchyard_dispatch_latency_seconds_bucket{le="+Inf"}')" = 7 ]
ok $? "the +Inf bucket holds every observation"
[ "$(value 'switchyard_runs_ended_total{state="failed"}')" = 1 ]; ok $? "one run ended failed"
[ "$(value 'switchyard_runs_adopted_total')" = 1 ]; ok $? "one run adopted"
[ "$(value 'switchyard_cache_hits_total')" = 0 ] && [ "$(value 'switchyard_cache_misses_total')" = 0 ]
ok $? "no task has a cache: no hit, no miss"
[ "$(value 'switchyard_executor_submit_seconds_count{executor="default",plugin="ctl"}')" = 7 ]
ok $? "every submit call timed"
python3 - "$m" <<'PY'
import sys
v = {}
for line in open(sys.argv[1]):
    if not line.startswith("#"):
        k, x = line.rsplit(" ", 1)
        v[k] = float(x)
# The slow task alone took 1.5 s of the durations.
assert v["switchyard_task_duration_seconds_sum"] >= 1.5, v["switchyard_task_duration_seconds_sum"]
assert v['switchyard_task_duration_seconds_bucket{le="1"}'] == 6
assert v["switchyard_store_batch_rows_sum"] >= 14  # six tasks, each Running and ended, the run
assert v["switchyard_store_write_seconds_count"] == v["switchyard_store_batch_rows_count"]
PY
ok $? "the durations, the batch rows and the write times add up"
[ "$(value 'switchyard_tasks{state="running"}')" = 0 ]; ok $? "at the end, nothing runs"
out=$(ls "$host/var")
hasnt ".tmp" "no temporary file is left beside it"
has "metrics.prom" "the file is there"

if command -v promtool >/dev/null 2>&1; then
    out=$(promtool check metrics <"$m" 2>&1)
    ok $? "promtool check metrics passes"
else
    echo "ok $((tap_n + 1)) - promtool check metrics # SKIP promtool is not installed (Debian: prometheus)"
    tap_n=$((tap_n + 1))
fi

# A write that fails while serving (here a directory where the file goes)
# is logged once, not every interval, and said again when it works again.
workflow pause <<'WF'
workflow = { name = "pause"; tasks = ( { id = "p"; sleep_ms = 1500; } ); };
WF
run submit pause
m2="$host/var/m2.prom"
$SY_WRAP "$SWITCHYARD" serve --exit-when-idle --metrics-file "$m2" --metrics-interval 50ms \
    >"$host/serve2.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -f "$m2" ] && break; sleep 0.05; done
# The host may rename a fresh file into place between the rm and the
# mkdir; try again until the directory is the one there.
for _ in $(seq 1 100); do
    rm -f "$m2" && mkdir "$m2" 2>/dev/null && break
done
[ -d "$m2" ]; ok $? "a directory stands where the file goes"
sleep 0.5
rmdir "$m2"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ]; ok $? "serve goes on while the file cannot be written (exit $rc)"
[ "$(grep -c 'cannot write the metrics file' "$host/serve2.log")" = 1 ]
ok $? "the failure is logged once"
[ "$(grep -c 'is written again' "$host/serve2.log")" = 1 ]; ok $? "and its end once"
[ -f "$m2" ]; ok $? "the last figures were written at the stop"

run serve --exit-when-idle --metrics-file "$host/no/such/dir/m.prom"
rc_is 1 "a metrics file that cannot be written stops serve at its start"
has "cannot write the metrics file $host/no/such/dir/m.prom" "and says which file and why"
run serve --metrics-interval 0 --metrics-file "$m"
rc_is 2 "an interval of 0 is a usage error"
has "--metrics-interval '0'" "naming the option"
run serve --metrics-file
rc_is 2 "--metrics-file without a path is a usage error"
run serve --metrics-interval 1s
rc_is 2 "--metrics-interval without --metrics-file is a usage error"
has "--metrics-interval needs --metrics-file PATH" "saying what it needs"

# `run --metrics-file`: the figures of a whole run, written once at its
# end, with the loop's idle time and where the thread plugin's commands
# spent theirs.
th="$host/th"
mkdir -p "$th/plugins" "$th/workflows" "$th/var"
install -m 0755 "$SY_THREAD_PLUGIN" "$th/plugins/thread.so"
cat >"$th/switchyard.cfg" <<'CFG'
store = "sqlite:var/sy.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 2; }; };
CFG
cat >"$th/workflows/cmds.cfg" <<'WF'
workflow = {
  name = "cmds";
  tasks = (
    { id = "a"; command = ["/bin/sh", "-c", "sleep 1"]; },
    { id = "b"; command = ["/bin/true"]; after = ["a"]; },
    { id = "c"; command = ["/bin/true"]; after = ["a"]; }
  );
};
WF
m="$th/var/run.prom"
SWITCHYARD_CONFIG="$th/switchyard.cfg"; export SWITCHYARD_CONFIG
$SY_WRAP "$SWITCHYARD" run cmds --quiet --metrics-file "$m" >"$th/run.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -f "$m" ]; ok $? "run --metrics-file writes the file when the run ends (exit $rc)"
lbl='executor="default",plugin="thread"'
[ "$(value "switchyard_executor_plugin_value{$lbl,name=\"commands.started\"}")" = 3 ]
ok $? "the thread plugin counts the 3 commands it started"
spawn=$(value "switchyard_executor_plugin_value{$lbl,name=\"commands.spawn_us\"}")
runus=$(value "switchyard_executor_plugin_value{$lbl,name=\"commands.run_us\"}")
# The two meet where the command is seen running, which a slow start
# (valgrind) can place inside the sleep: together they hold it whole.
[ "${spawn:-0}" -gt 0 ] && [ "${runus:-0}" -gt 0 ] && [ $((spawn + runus)) -ge 1000000 ]
ok $? "with their spawn time and their run time, the 1 s sleep in them (${spawn} us, ${runus} us)"
[ "$(value switchyard_process_records_total)" = 3 ]
ok $? "the 3 commands' process groups were recorded before they ran"
wait_s=$(value switchyard_process_record_wait_seconds_total)
# The thread plugin asks without waiting (attempt_process_async): the
# commands ran while the host wrote their records, and no thread waited.
# (tests/engine/test_process counts a wait that happens.)
[ "$wait_s" = 0 ]
ok $? "and no worker waited for those records (${wait_s} s)"
idle=$(value switchyard_loop_idle_seconds_total)
# The sleep begins while the loop still finishes the turn that started it
# (the store's write and commit, the run's first wake-ups): under valgrind
# that took 0.16 s of a 0.2 s sleep once, so the sleep is long and the bar
# half of it.
awk -v i="${idle:-x}" 'BEGIN { exit !(i ~ /^[0-9.e+-]+$/ && i >= 0.5) }'
ok $? "the loop was idle while the sleep ran (${idle} s)"
[ "$(value 'switchyard_runs_ended_total{state="completed"}')" = 1 ]
ok $? "and the run is counted ended, completed"
if command -v promtool >/dev/null 2>&1; then
    out=$(promtool check metrics <"$m" 2>&1)
    ok $? "promtool check metrics passes on it"
else
    echo "ok $((tap_n + 1)) - promtool check metrics # SKIP promtool is not installed (Debian: prometheus)"
    tap_n=$((tap_n + 1))
fi
run run cmds --quiet --metrics-file "$host/no/such/dir/r.prom"
rc_is 1 "a metrics file run cannot write fails the command"
has "cannot write the metrics file $host/no/such/dir/r.prom" "naming the file"
run run cmds --metrics-file
rc_is 2 "run --metrics-file without a path is a usage error"

cleanup_host
done_testing
