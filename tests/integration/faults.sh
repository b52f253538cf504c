#!/bin/sh
# Faults injected into the real program (tests/fault/inject.so, preloaded:
# no test hook in the host), each coming and then clearing:
#   - a full disk under the store: the host stops at the first refused
#     commit with one line naming the store and the reason, at once (no
#     wait for attempts no plugin holds); the store keeps every transition
#     before it; once the disk has room, `serve` finishes the run;
#   - the process table full (clone/fork/posix_spawn fail with EAGAIN):
#     command tasks are deferred, not charged, and all complete with one
#     attempt once it clears;
#   - file descriptors exhausted (ulimit -n a few above what the host holds
#     idle): tasks are deferred, none fails, all complete.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP preloads a fault injector; it runs in the sanitizer pass"
    exit 0
fi
inject="$SY_BUILDDIR/tests/fault/.libs/inject.so"
[ -f "$inject" ] || { echo "1..0 # SKIP $inject not built"; exit 0; }
# The sanitizer runtime wants to be first; the injector only wraps libc.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

# --- a full disk under the store --------------------------------------------------
make_host
python3 - "$host/workflows/chain.cfg" <<'PY'
import sys
rows = []
for i in range(60):
    after = ' after = ["t%d"];' % (i - 1) if i else ''
    rows.append('    { id = "t%d";%s sleep_ms = 25; }' % (i, after))
open(sys.argv[1], 'w').write('workflow = {\n  name = "chain";\n  tasks = (\n'
                             + ',\n'.join(rows) + '\n  );\n};\n')
PY
(sleep 0.6; : >"$host/full") &
start=$(date +%s)
out=$(timeout 60 env LD_PRELOAD="$inject" SY_FAULT_FILE="$host/var/switchyard.db" \
    SY_FAULT_WHILE="$host/full" SY_FAULT_COUNT="$host/count" "$SWITCHYARD" run chain 2>&1)
rc=$?
took=$(( $(date +%s) - start ))
wait
rc_is 1 "a full disk stops the run"
has "error store: cannot commit: sqlite:$host/var/switchyard.db: commit: database or disk is full; stopping" \
    "with one line naming the store and the reason"
has "switchyard: run: run 1: stopped because the store refused a write" "and what it means"
has "\`switchyard serve\` resumes the run once the store is writable" "and what to do"
[ -s "$host/count" ]; ok $? "the fault was hit"
[ "$took" -lt 10 ]; ok $? "it stops at once, not after the shutdown grace ($took s)"
done_before=$(jget 1 'sum(1 for x in r["tasks"] if x["status"] == "Completed")')
echo "# Completed when the disk filled: $done_before of 60"
[ "$done_before" -gt 0 ] && [ "$done_before" -lt 60 ]
ok $? "the store kept the transitions before the fault"
rm -f "$host/full"
timeout 60 "$SWITCHYARD" serve --exit-when-idle >"$host/serve.log" 2>&1
rc=$?
rc_is 0 "with room again, serve finishes the run"
is Completed 1 'r["status"]' "the run is Completed"
is 60 1 'sum(1 for x in r["tasks"] if x["status"] == "Completed")' "every task is Completed"
# A chain has one task in flight: the one running when the host stopped
# is recovered (a second attempt); no other needs one.
is true 1 'sum(x["attempts"] for x in r["tasks"]) <= 61' "no task but the one in flight ran twice"
integrity=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' \
    "$host/var/switchyard.db")
[ "$integrity" = ok ]; ok $? "the store passes PRAGMA integrity_check ($integrity)"
cleanup_host

# --- command hosts: the thread plugin ---------------------------------------------
thread_host() {
    host=$(mktemp -d "${TMPDIR:-/tmp}/sy-fault-XXXXXX") || exit 1
    chmod 0700 "$host"
    mkdir -p "$host/plugins" "$host/workflows"
    install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
    cat >"$host/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 4; }; };
CFG
    SWITCHYARD_CONFIG="$host/switchyard.cfg"
    export SWITCHYARD_CONFIG
    python3 - "$host/workflows/cmds.cfg" <<'PY'
import sys
rows = [f'    {{ id = "c{i}"; command = ["/bin/sh", "-c", "sleep 0.05; echo {{}}"]; }}'
        for i in range(20)]
open(sys.argv[1], 'w').write('workflow = {\n  name = "cmds";\n  retry = { attempts = 1; };\n'
                             '  tasks = (\n' + ',\n'.join(rows) + '\n  );\n};\n')
PY
}

# events KIND: how many events of that kind the store holds.
events() {
    python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
        "SELECT count(*) FROM events WHERE kind = ?", (sys.argv[2],)).fetchone()[0])' \
        "$host/var/switchyard.db" "$1"
}

# --- the process table full -----------------------------------------------------------
thread_host
: >"$host/nofork"
(sleep 0.5; rm -f "$host/nofork") &
out=$(timeout 60 env LD_PRELOAD="$inject" SY_FAULT_SPAWN=1 SY_FAULT_WHILE="$host/nofork" \
    SY_FAULT_COUNT="$host/count" "$SWITCHYARD" run cmds 2>&1)
rc=$?
wait
rc_is 0 "with no process to be had for 0.5 s, the run still completes"
[ -s "$host/count" ]; ok $? "the fault was hit ($(wc -l <"$host/count") refused starts)"
is '[1]' 1 'sorted(set(x["attempts"] for x in r["tasks"]))' \
    "every task in one attempt: retries were not spent on it (attempts = 1)"
deferred=$(events deferred)
[ "$deferred" -gt 0 ]; ok $? "the refused starts were deferred ($deferred)"
[ "$(events failed)" -eq 0 ]; ok $? "and none was recorded as a failure"
python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
    "SELECT detail FROM events WHERE kind = ? LIMIT 1", ("deferred",)).fetchone()[0])' \
    "$host/var/switchyard.db" >"$host/why"
out=$(cat "$host/why")
has "cannot run /bin/sh" "the reason names the program"
has "Resource temporarily unavailable (the host is short of processes, descriptors or memory; tried again, not charged)" \
    "and the shortage"
rm -rf "$host"

# --- file descriptors exhausted ---------------------------------------------------
thread_host
# What the host holds idle, measured: a serve with nothing to do.
"$SWITCHYARD" serve >"$host/idle.log" 2>&1 &
pid=$!
idle=0
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    sleep 0.2
    grep -q "serving as" "$host/idle.log" && { idle=$(ls "/proc/$pid/fd" | wc -l); break; }
done
kill "$pid"; wait "$pid" 2>/dev/null
rm -rf "$host/var"
limit=$((idle + 8))
echo "# the host holds $idle descriptors idle; the run gets $limit"
out=$( (ulimit -n "$limit" && timeout 60 "$SWITCHYARD" run cmds) 2>&1)
rc=$?
rc_is 0 "with descriptors for about one command at a time, the run completes"
is 20 1 'sum(1 for x in r["tasks"] if x["status"] == "Completed")' "every task is Completed"
deferred=$(events deferred)
[ "$deferred" -gt 0 ]; ok $? "the starts that found no descriptor were deferred ($deferred)"
[ "$(events failed)" -eq 0 ]; ok $? "and none was recorded as a failure"
rm -rf "$host"
done_testing
