#!/bin/sh
# A host that survives its plugins: a submit() that blocks is reported by
# the watchdog while it is stuck and its instance gets no new task; an
# attempt a plugin never completes is bounded by max_task_time and by the
# shutdown grace, which names what it abandons; a crash inside a plugin is
# named on the next start, the task inside the crashing call is charged and
# the innocent tasks in flight are re-queued without being charged.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP kills hosts and times plugin calls; it runs in the sanitizer pass"
    exit 0
fi
make_host 'lease = "2s"; shutdown_grace = "500ms";'
cat >>"$host/switchyard.cfg" <<'CFG'
executors = {
  default = { plugin = "ctl"; slots = 8; };
  stuck = { plugin = "ctl"; slots = 4; call_timeout = "200ms"; };
  deaf = { plugin = "ctl"; slots = 2; max_task_time = "300ms"; };
  crashy = { plugin = "ctl"; slots = 2; };
};
routes = ["routes.cfg"];
CFG
cat >"$host/routes.cfg" <<'CFG'
routes = {
  default = "default";
  rules = (
    { match = "**::stuck*"; executor = "stuck"; },
    { match = "**::deaf*"; executor = "deaf"; },
    { match = "**::crash*"; executor = "crashy"; }
  );
};
CFG
# The first executors group (from make_host) is replaced by the one above.
python3 - "$host/switchyard.cfg" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'executors = \{\n  default = \{ plugin = "ctl"; slots = 4;[^\n]*\n\};\n', '', s, count=1)
open(p, 'w').write(s)
PY

# use_store NAME: each part on a store of its own, so that what one part
# leaves running is not the next one's.
use_store() { sed -i "s|^store = .*|store = \"sqlite:var/$1.db\";|" "$host/switchyard.cfg"; }

wait_log() { # wait_log FILE TEXT TRIES(0.1 s)
    for _ in $(seq 1 "$3"); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# --- a submit() that blocks -------------------------------------------------
use_store block
workflow blocking <<'WF'
workflow = {
  name = "blocking";
  tasks = (
    { id = "stuck_a"; block_ms = 900; },
    { id = "stuck_b"; after = ["stuck_a"]; },
    { id = "free"; sleep_ms = 10; }
  );
};
WF
"$SWITCHYARD" run blocking >"$host/block.out" 2>"$host/block.log" &
pid=$!
wait_log "$host/block.log" "has not returned after" 30
ok $? "the watchdog reports the stuck submit while it is stuck"
has_line() { grep -q "$2" "$1" && ok 0 "$3" || { echo "# $(cat "$1")"; ok 1 "$3"; }; }
has_line "$host/block.log" "plugin bug: executor 'ctl', instance 'stuck': submit() of task public::blocking::stuck_a has not returned after" \
    "naming the plugin, the instance, the call and the task"
has_line "$host/block.log" "isolate it" "and telling the operator what to do"
wait_log "$host/block.log" "the stuck submit() returned after" 40
ok $? "it says when the call returns"
id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/block.out")
sleep 0.5
is Completed "$id" 't["stuck_a"]["status"]' "the blocked task itself completes"
is Completed "$id" 't["free"]["status"]' "the healthy instance's task completes"
is Ready "$id" 't["stuck_b"]["status"]' "the unhealthy instance gets no new task"
kill -TERM "$pid"
wait "$pid"
rc=$?
ok $([ "$rc" -eq 1 ] && echo 0 || echo 1) "the host drains and exits, the run unfinished (status $rc)"

# --- an attempt never completed ------------------------------------------------
use_store deaf
workflow deafwf <<'WF'
workflow = {
  name = "deafwf";
  tasks = (
    { id = "deaf_x"; mode = "deaf"; },
    { id = "after"; after = ["deaf_x"]; trigger = "all_done"; }
  );
};
WF
start=$(date +%s)
"$SWITCHYARD" run deafwf >"$host/deaf.out" 2>"$host/deaf.log"
rc=$?
end=$(date +%s)
ok $([ "$rc" -eq 1 ] && echo 0 || echo 1) "run exits (status $rc) though the plugin never completes"
ok $([ $((end - start)) -le 10 ] && echo 0 || echo 1) "within the bounds ($((end - start)) s)"
has_line "$host/deaf.log" "abandoned at shutdown: executor 'ctl', instance 'deaf' has not completed attempt 1 of task public::deafwf::deaf_x" \
    "the grace names what it abandons"
id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/deaf.out")
is "timed out after 300ms (attempt 1)" "$id" 't["deaf_x"]["error"]' "max_task_time bounds a task without a timeout"
is Completed "$id" 't["after"]["status"]' "the rest of the run goes on"
ls "$host"/var/deaf.db.calls.* >/dev/null 2>&1
ok $([ $? -ne 0 ] && echo 0 || echo 1) "an abandoning exit leaves no call record behind"

# --- a crash inside a plugin ----------------------------------------------------
use_store crash
workflow crashwf <<'WF'
workflow = {
  name = "crashwf";
  tasks = (
    { id = "i1"; sleep_ms = 3000; },
    { id = "i2"; sleep_ms = 3000; },
    { id = "gate"; sleep_ms = 300; },
    { id = "crash_x"; after = ["gate"]; crash = "submit"; }
  );
};
WF
"$SWITCHYARD" run crashwf >"$host/crash1.out" 2>"$host/crash1.log"
rc=$?
ok $([ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] || grep -q "AddressSanitizer" "$host/crash1.log"; echo $?) \
    "the host dies in the plugin (status $rc)"
id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/crash1.out")
ls "$host"/var/crash.db.calls.* >/dev/null 2>&1
ok $? "the call record outlives the process"
sleep 2.2 # the dead host's lease
"$SWITCHYARD" serve --exit-when-idle >"$host/crash2.out" 2>"$host/crash2.log"
has_line "$host/crash2.log" "died inside plugin 'ctl', instance 'crashy', call submit, task public::crashwf::crash_x: SIGSEGV in plugin 'ctl' code" \
    "the next start names the plugin, the instance, the call and the task"
is Failed "$id" 't["crash_x"]["status"]' "the task inside the crashing call is charged (it has no retries left)"
is 1 "$id" 't["crash_x"]["attempts"]' "with one attempt"
is Completed "$id" 't["i1"]["status"]' "an innocent task in flight completes"
is 0 "$id" 't["i1"]["recoveries"]' "without being charged a recovery"
is 0 "$id" 't["i2"]["recoveries"]' "nor is the other"
ls "$host"/var/crash.db.calls.* >/dev/null 2>&1
ok $([ $? -ne 0 ] && echo 0 || echo 1) "the record is consumed"

cleanup_host
done_testing
