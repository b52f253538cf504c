#!/bin/sh
# Signals on `run` with the thread plugin's command tasks: the first
# SIGINT says what it waits for and drains; the second cancels the running
# commands (their process groups end: no process is left) and records the
# run Cancelled, its running tasks Cancelled.
. "$SY_SRCDIR/tests/integration/lib.sh"
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-sig-XXXXXX")
chmod 0700 "$host"
mkdir -p "$host/plugins" "$host/workflows"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
shutdown_grace = "20s";
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"; export SWITCHYARD_CONFIG
# A duration no other process on the machine sleeps for: the leftovers are
# found by it.
nap=47.31
cat >"$host/workflows/long.cfg" <<WF
workflow = {
  name = "long";
  tasks = (
    { id = "a"; command = ["sh", "-c", "sleep $nap; echo done"]; },
    { id = "b"; command = ["sleep", "$nap"]; },
    { id = "c"; after = ["a"]; command = ["true"]; }
  );
};
WF
left() { pgrep -f "sleep $nap" | wc -l; }

$SY_WRAP "$SWITCHYARD" run long >"$host/out" 2>"$host/log" &
pid=$!
for _ in $(seq 1 100); do [ "$(left)" -ge 2 ] && break; sleep 0.1; done
ok $([ "$(left)" -ge 2 ] && echo 0 || echo 1) "both commands run"
kill -INT "$pid"
for _ in $(seq 1 50); do grep -q "waiting for 2 running tasks" "$host/log" && break; sleep 0.1; done
has_log() { grep -q "$1" "$host/log" && ok 0 "$2" || { sed 's/^/# /' "$host/log"; ok 1 "$2"; }; }
has_log "Interrupt: draining: waiting for 2 running tasks (public::long::[ab], public::long::[ab]), at most 2[0-9] s more; again to cancel them" \
    "the first Ctrl-C says what it waits for, and for how long at most"
kill -INT "$pid"
wait "$pid"
rc=$?
ok $([ "$rc" -eq 130 ] && echo 0 || echo 1) "the second Ctrl-C ends the run (status $rc)"
has_log "Interrupt: cancelling 2 running tasks" "saying what it cancels"
sleep 0.3
ok $([ "$(left)" -eq 0 ] && echo 0 || echo 1) "no command process is left ($(left))"
id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/out")
is Cancelled "$id" 'r["status"]' "the run is recorded Cancelled"
is '["Cancelled", "Cancelled", "Skipped"]' "$id" '[t["a"]["status"], t["b"]["status"], t["c"]["status"]]' \
    "its running tasks Cancelled, the one not started Skipped"
pkill -f "sleep $nap" 2>/dev/null
rm -rf "$host"
done_testing
