#!/bin/sh
# No orphans: a host killed with SIGKILL leaves what its commands forked
# running; the host that recovers the run kills them (by the process
# groups recorded with their attempts) before the retries start, so no
# task runs twice at once.  And a recorded group whose pid is now an
# unrelated process (another start time) is left alone.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP the orphans test kills hosts; it runs in the sanitizer pass"
    exit 0
fi
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-orphans-XXXXXX") || exit 1
chmod 0700 "$host"
mkdir -p "$host/plugins" "$host/workflows"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/sy.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 4; }; };
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"; export SWITCHYARD_CONFIG
db="$host/var/sy.db"
# The marker is matched as two halves, so that the awk looking for it
# (whose own arguments hold both) never finds itself.
mark_a="sy-orphan-$$-"
mark_b=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
marker="$mark_a$mark_b"
me=$(ps -o pgid= -p $$ | tr -d ' ')
# The process groups whose leader carries the marker, one per line.
groups() {
    ps -eo pgid=,args= | awk -v a="$mark_a" -v b="$mark_b" 'index($0, a b) { print $1 }' | sort -u
}
serve_pid=
strangers=
cleanup() {
    [ -n "$serve_pid" ] && kill -9 "$serve_pid" 2>/dev/null
    for p in $strangers; do kill -9 "$p" 2>/dev/null; done
    # Whatever of the task processes a failing run left behind.
    for g in $(groups); do
        [ "$g" != "$me" ] && kill -9 -- "-$g" 2>/dev/null
    done
    rm -rf "$host"
}
trap cleanup EXIT

# Each task is a shell (the group's leader, the marker in its $0) waiting
# for a sleep it forked: a leader and a member to kill.
cat >"$host/workflows/long.cfg" <<WF
workflow = {
  name = "long";
  retry = { attempts = 3; delay = "10ms"; };
  tasks = (
    { id = "a"; command = ["sh", "-c", "sleep 30; echo '{}'", "$marker"]; },
    { id = "b"; command = ["sh", "-c", "sleep 30; echo '{}'", "$marker"]; },
    { id = "c"; command = ["sh", "-c", "sleep 30; echo '{}'", "$marker"]; }
  );
};
WF

# How many processes (not zombies) are left in the groups given.
alive_in() {
    ps -eo pgid=,stat= | awk -v list=" $* " '$2 !~ /^Z/ && index(list, " " $1 " ") { n++ } END { print n + 0 }'
}
# Waits (at most 15 s) until `groups` lists N groups, none of them in $1.
wait_groups() {
    local i=0 g
    while [ $i -lt 300 ]; do
        g=$(groups | grep -vxF -e "${1:-none}" | grep -c .)
        [ "$g" -ge "$2" ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

run submit long
rc_is 0 "a run of three 30 s commands is submitted"
id=$(run_id)

"$SWITCHYARD" serve >"$host/serve1.log" 2>&1 &
serve_pid=$!
wait_groups "" 3; ok $? "the first host runs the three commands"
old=$(groups | tr '\n' ' ')
echo "# first attempts' groups: $old"
recorded_groups() {
    python3 - "$db" "$id" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=5)
print(" ".join(str(r[0]) for r in c.execute(
    "SELECT pgid FROM processes WHERE run_id = ? AND attempt = 1 ORDER BY pgid", (sys.argv[2],))))
PY
}
i=0
while recorded=$(recorded_groups) && [ "$(echo $recorded | wc -w)" -lt 3 ] && [ $i -lt 60 ]; do
    sleep 0.05
    i=$((i + 1))
done
[ "$(echo $recorded | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(echo $old | tr ' ' '\n' | sort | tr '\n' ' ')" ]
ok $? "each command's process group is in the store before it runs on (recorded: $recorded)"

kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null
serve_pid=
sleep 0.2
# The leaders die with the host (the spawn's death signal); the sleeps
# they forked are left, in the recorded groups, for the recovery to find.
n=$(alive_in $old)
[ "$n" -eq 3 ]; ok $? "the killed host's commands leave three processes running ($n alive)"

"$SWITCHYARD" serve --exit-when-idle >"$host/serve2.log" 2>&1 &
serve_pid=$!
oldlines=$(echo $old | tr ' ' '\n')
wait_groups "$oldlines" 3; ok $? "the next host retries the three tasks"
n=$(alive_in $old)
[ "$n" -eq 0 ]; ok $? "no process of the first attempts is alive beside the retries ($n alive)"
new=$(groups | tr '\n' ' ')
echo "# retries' groups: $new"
grep -q "killed .* process.* of group .* left running by" "$host/serve2.log"
ok $? "the recovering host says what it killed"
is 2 "$id" 'min(x["attempts"] for x in r["tasks"])' "the retries are the second attempts"

out=$("$SWITCHYARD" cancel "$id" 2>&1)
i=0
while kill -0 "$serve_pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
! kill -0 "$serve_pid" 2>/dev/null; ok $? "the cancelled run ends and the host exits"
wait "$serve_pid" 2>/dev/null
serve_pid=
n=$(alive_in $new)
[ "$n" -eq 0 ]; ok $? "the cancelled retries' processes are gone ($n alive)"

# --- a recorded pid that names a stranger --------------------------------
# Two unrelated processes, each the leader of its own group.  A dead host's
# record names both, one with the stranger's true start time (it must be
# killed: the check can tell) and one with a start time that is not its
# own (a pid reused since: it must be left alone).
# Unique arguments (GNU sleep takes fractions), so that no process of
# anyone else's is ever picked here.
setsid sleep "61.1$$" </dev/null >/dev/null 2>&1 &
setsid sleep "61.2$$" </dev/null >/dev/null 2>&1 &
sleep 0.3
leader_of() {
    ps -eo pid=,pgid=,args= | awk -v a="sleep $1" '$1 == $2 && substr($0, index($0, $3)) == a { print $1 }'
}
strangers="$(leader_of "61.1$$") $(leader_of "61.2$$")"
set -- $strangers
[ $# -eq 2 ]; ok $? "two unrelated group leaders run ($strangers)"
reused=$1 same=$2
cat >"$host/workflows/fake.cfg" <<'WF'
workflow = { name = "fake"; tasks = ( { id = "x"; command = ["true"]; },
                                      { id = "y"; command = ["true"]; } ); };
WF
run submit fake
fake=$(run_id)
python3 - "$db" "$fake" "$reused" "$same" <<'PY'
import socket, sqlite3, sys
db, run, reused, same = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def start(pid):
    text = open(f"/proc/{pid}/stat").read()
    return int(text[text.rindex(")") + 2:].split()[19])
def first(path):
    try:
        return open(path).read().strip() or None
    except OSError:
        return None
machine = first("/etc/machine-id") or first("/var/lib/dbus/machine-id") or "host:" + socket.gethostname()
boot = first("/proc/sys/kernel/random/boot_id")
c = sqlite3.connect(db)
# A host elsewhere held the run with a lease long past, both tasks Running.
c.execute("UPDATE runs SET state = 1, owner = 'gone:1', lease_until = 1, lease_epoch = 1 WHERE id = ?", (run,))
c.execute("UPDATE tasks SET state = 2, attempts = 1, fence = 1, host = 'gone:1' WHERE run_id = ?", (run,))
for idx, pid, st in ((0, reused, start(reused) - 1), (1, same, start(same))):
    c.execute("INSERT INTO processes (run_id, idx, attempt, pgid, host, machine, boot_id,"
              " start_time, recorded) VALUES (?, ?, 1, ?, 'gone:1', ?, ?, ?, 1)",
              (run, idx, pid, machine, boot, st))
c.commit()
PY
ok $? "a dead host's record names both, one with a wrong start time"
run serve --exit-when-idle
rc_is 0 "a host recovers that run"
is Completed "$fake" 'r["status"]' "and completes it"
# Alive and not a zombie (a killed child of this shell stays one until
# waited for).
running() { case "$(ps -o stat= -p "$1" 2>/dev/null)" in ''|Z*) return 1 ;; esac; }
running "$reused"; ok $? "the process whose start time does not match is left alone"
! running "$same"; ok $? "the one whose start time matches is killed"

# --- an isolated instance (the plugin in a worker process) ----------------
# The worker forwards attempt_process to the host, which records the group.
sed 's/executors = .*/executors = { default = { plugin = "thread"; workers = 1; isolate_plugin = true; }; };/' \
    "$host/switchyard.cfg" >"$host/iso.cfg"
cat >"$host/workflows/quick.cfg" <<'WF'
workflow = { name = "quick"; tasks = ( { id = "q"; command = ["sh", "-c", "echo '{}'"]; } ); };
WF
out=$(SWITCHYARD_CONFIG="$host/iso.cfg" "$SWITCHYARD" run quick 2>&1)
rc=$?
rc_is 0 "a command through an isolated thread instance completes"
quick=$(run_id)
python3 - "$db" "$quick" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n = c.execute("SELECT count(*) FROM processes WHERE run_id = ? AND pgid > 1 AND start_time > 0",
              (sys.argv[2],)).fetchone()[0]
sys.exit(0 if n == 1 else 1)
PY
ok $? "and its process group is recorded through the worker"

done_testing
