#!/bin/sh
# The crash loop: a workflow of short commands and function tasks on the
# thread plugin; the host is killed with SIGKILL at random moments (the
# seed is printed) and restarted each time.  At the end every task is
# Completed, no task recorded Completed at a kill was run again after it,
# no process of a killed host is left, and the store passes SQLite's
# integrity check.
#
# Every execution appends "ROUND TASK ATTEMPT" to a witness file before it
# works (commands with echo >>, functions with tests/tasklib's record_run),
# ROUND being the host start it ran under.
#
#   SY_CRASHLOOP_TASKS  tasks (default 600; scripts/crashloop: 5,000)
#   SY_CRASHLOOP_KILLS  kills (default 8; scripts/crashloop: 100)
#   SY_CRASHLOOP_SEED   the random seed (default: from the clock, printed)
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP the crash loop kills hosts; it runs in the sanitizer pass"
    exit 0
fi
tasks=${SY_CRASHLOOP_TASKS:-600}
kills=${SY_CRASHLOOP_KILLS:-8}
seed=${SY_CRASHLOOP_SEED:-$(date +%s)}
echo "# crash loop: $tasks tasks, $kills kills, seed $seed (SY_CRASHLOOP_SEED=$seed to repeat)"

host=$(mktemp -d "${TMPDIR:-/tmp}/sy-loop-XXXXXX") || exit 1
chmod 0700 "$host"
mkdir -p "$host/plugins" "$host/workflows" "$host/lib"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cp "$SY_TASKLIB" "$host/lib/tasks.so"
cat >"$host/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
# The loop kills hosts faster than its longest tasks run: the budget for
# tasks lost with their host (a guard against tasks that kill it) must not
# end them here.
max_recoveries = 100;
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = {
  default = { plugin = "thread"; workers = 8; };
};
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"
export SWITCHYARD_CONFIG
witness="$host/witness.log"
: >"$witness"
CRASHLOOP_WITNESS=$witness
export CRASHLOOP_WITNESS

# Layers of 50; each task after its neighbour above (and every tenth also
# after the next one); even columns are commands (0.1 to 0.5 s, two a layer
# 1.2 s), odd ones functions (0 to 19 ms).
python3 - "$host/workflows/loop.cfg" "$tasks" "$witness" <<'PY'
import sys
path, n, witness = sys.argv[1], int(sys.argv[2]), sys.argv[3]
width = 50
rows = []
for k in range(n):
    layer, i = divmod(k, width)
    deps = []
    if layer:
        deps.append(f'"t{layer-1}_{i}"')
        if i % 10 == 0 and layer * width + (i + 1) % width < n:
            deps.append(f'"t{layer-1}_{(i + 1) % width}"')
    after = f' after = [{", ".join(deps)}];' if deps else ''
    if i % 2 == 0:
        # Two commands a layer outlive a kill by a second or more.
        nap = '1.2' if i % 25 == 0 else f'0.{k % 5 + 1}'
        sh = ('echo "${CRASHLOOP_ROUND:-0} $SWITCHYARD_TASK_ID $SWITCHYARD_ATTEMPT" '
              f'>>"$CRASHLOOP_WITNESS"; sleep {nap}; echo "{{}}"')
        body = f'command = ["/bin/sh", "-c", "{sh.replace(chr(34), chr(92) + chr(34))}"];'
    else:
        body = 'function = "../lib/tasks.so:record_run";'
    rows.append(f'    {{ id = "t{layer}_{i}";{after} {body} }}')
open(path, 'w').write('workflow = {\n  name = "loop";\n  retry = { attempts = 3; };\n'
                      '  tasks = (\n' + ',\n'.join(rows) + '\n  );\n};\n')
PY

run submit loop
rc_is 0 "the $tasks-task run is submitted"
id=$(run_id)

# completed_now: the ids of the tasks the store holds Completed.
completed_now() {
    "$SWITCHYARD" status "$id" --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(" ".join(x["id"] for x in r["tasks"] if x["status"] == "Completed"))'
}

# leftovers ROUND: processes started under an earlier host start (their
# environment says CRASHLOOP_ROUND below ROUND) that still run.
leftovers() {
    python3 - "$host" "$1" <<'PY'
import os, sys
host, below = sys.argv[1], int(sys.argv[2])
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    except OSError:
        continue
    env = dict(e.split(b"=", 1) for e in env if b"=" in e)
    if not env.get(b"SWITCHYARD_CONFIG", b"").startswith(host.encode() + b"/"):
        continue
    r = env.get(b"CRASHLOOP_ROUND", b"")
    if r.isdigit() and int(r) < below:
        print(pid, end=" ")
PY
}

rng=$seed
next_ms() { # a delay from 50 to 1,649 ms, from a seeded LCG
    rng=$(( (rng * 1103515245 + 12345) % 2147483648 ))
    echo $(( rng / 65536 % 1600 + 50 ))
}

killed=0 stray=0
: >"$host/done.txt"
round=1
while [ "$round" -le "$kills" ]; do
    CRASHLOOP_ROUND=$round "$SWITCHYARD" serve >>"$host/serve.log" 2>&1 &
    pid=$!
    # The leftovers of the hosts killed before are gone once this one has
    # recovered their work (its first 300 ms).
    if [ "$round" -gt 1 ]; then
        sleep 0.3
        left=$(leftovers "$round")
        if [ -n "$left" ]; then
            stray=$((stray + 1))
            echo "# after start $round, still running from killed hosts: $left"
        fi
    fi
    ms=$(next_ms)
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
    wait "$pid" 2>/dev/null
    echo "$round $(completed_now)" >>"$host/done.txt"
    round=$((round + 1))
done
[ "$killed" -eq "$kills" ]; ok $? "the host was killed $kills times"
before=$(tail -n 1 "$host/done.txt" | wc -w)
before=$((before - 1))
echo "# Completed at the last kill: $before of $tasks"
[ "$before" -lt "$tasks" ]; ok $? "every kill landed while the run was still going"
CRASHLOOP_ROUND=$round timeout 300 "$SWITCHYARD" serve --exit-when-idle >>"$host/serve.log" 2>&1
rc_is 0 "a last host finishes the run"
[ "$stray" -eq 0 ]; ok $? "no process of a killed host ran on after the next start ($stray starts saw some)"
left=$(leftovers $((round + 1)))
[ -z "$left" ]; ok $? "no process of any host is left at the end"
is Completed "$id" 'r["status"]' "the run is Completed"
is "$tasks" "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Completed")' "every task is Completed"

python3 - "$host/done.txt" "$witness" >"$host/again.txt" <<'PY'
import sys
done_at = {}
for line in open(sys.argv[1]):
    parts = line.split()
    for t in parts[1:]:
        done_at.setdefault(t, int(parts[0]))
bad, runs = [], 0
for line in open(sys.argv[2]):
    parts = line.split()
    if len(parts) != 3:
        continue
    runs += 1
    r, t = int(parts[0]), parts[1]
    # Completed in the store when host r' was killed: no later host may
    # run it again.
    if t in done_at and r > done_at[t]:
        bad.append((t, done_at[t], r))
print(f"# executions: {runs}; tasks already Completed at some kill: {len(done_at)}")
for t, d, r in bad[:10]:
    print(f"# {t}: Completed when host {d} was killed, run again under host {r}")
print(f"again={len(bad)}")
PY
sed -n 's/^# /# /p' "$host/again.txt"
again=$(sed -n 's/^again=//p' "$host/again.txt")
[ "$again" = 0 ]; ok $? "no task recorded Completed at a kill was run again"
integrity=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' \
    "$host/var/switchyard.db")
[ "$integrity" = ok ]; ok $? "the store passes PRAGMA integrity_check ($integrity)"
[ "$tap_failed" -eq 0 ] && rm -rf "$host"
done_testing
