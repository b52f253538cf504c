#!/bin/sh
# `switchyard retry`: a finished run goes on in place.  Only the tasks that
# did not complete run again, the completed ones keep their outputs (a task
# run again gets them in its input), attempts count on; --task runs a task
# and what is downstream of it again; --dry-run changes nothing; a run not
# finished, an unknown run or task are refused; --detach leaves the run for
# `serve`.
. "$SY_SRCDIR/tests/integration/lib.sh"
# Under valgrind (SY_WRAP) only the core runs: each command costs seconds
# there; the sanitizer pass runs it all.
full=true
[ -n "$SY_WRAP" ] && full=false
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-retry-XXXXXX")
chmod 0700 "$host"
mkdir -p "$host/plugins" "$host/workflows"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/sy.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 2; }; };
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"; export SWITCHYARD_CONFIG
# Each task appends a line to $host/ran.TASK per attempt; b keeps its input
# and fails until $host/fixed exists; c and e follow it and a.
workflow w <<WF
workflow = {
  name = "w";
  tasks = (
    { id = "a"; command = ["sh", "-c", "echo a >> $host/ran.a; echo \"{\\\\\"a\\\\\": \$SWITCHYARD_ATTEMPT}\""]; },
    { id = "b"; after = ["a"]; command = ["sh", "-c",
        "echo b >> $host/ran.b; cat > $host/input.b.\$SWITCHYARD_ATTEMPT; [ -e $host/fixed ] || { echo 'not fixed yet' >&2; exit 4; }; echo '{\"b\": 1}'"]; },
    { id = "c"; after = ["b"]; command = ["sh", "-c", "echo c >> $host/ran.c; cat > $host/input.c.\$SWITCHYARD_ATTEMPT; echo '{}'"]; },
    { id = "d"; command = ["sh", "-c", "echo d >> $host/ran.d; echo '{}'"]; },
    { id = "e"; after = ["a"]; command = ["sh", "-c", "echo e >> $host/ran.e; echo '{}'"]; }
  );
};
WF
runs_of() { if [ -e "$host/ran.$1" ]; then wc -l <"$host/ran.$1" | tr -d ' '; else echo 0; fi; }

run run w
rc_is 1 "the first run fails"
id=$(run_id)
is '["Completed", "Failed", "Skipped", "Completed", "Completed"]' "$id" \
   '[t[k]["status"] for k in "abcde"]' "b failed, c skipped, the others completed"

# --- --dry-run: the plan, and nothing changes ------------------------------
$SY_WRAP "$SWITCHYARD" status "$id" --json >"$host/before.json"
run retry "$id" --dry-run
rc_is 0 "retry --dry-run"
has "would run again 2 tasks, keeping 3" "says what would run again"
has "rerun  b" "b"
has "rerun  c" "and c, skipped because of it"
has "keep   a" "keeps a"
run retry "$id" --dry-run --json
rc_is 0 "retry --dry-run --json"
printf '%s\n' "$out" | python3 -c '
import json, sys
p = json.load(sys.stdin)
assert [t["id"] for t in p["rerun"]] == ["b", "c"], p
assert [t["id"] for t in p["kept"]] == ["a", "d", "e"], p
assert p["rerun"][0]["attempts"] == 1 and p["status"] == "Failed", p'
ok $? "as JSON: rerun b and c, keep a, d and e"
$SY_WRAP "$SWITCHYARD" status "$id" --json >"$host/after.json"
cmp -s "$host/before.json" "$host/after.json"
ok $? "--dry-run changed nothing"
[ "$(runs_of b)" = 1 ]
ok $? "and ran nothing"

# --- refusals ----------------------------------------------------------------
if $full; then
run retry 999
rc_is 1 "an unknown run is refused"
has "run 999: no such run" "saying so"
run retry "$id" --task nosuch
rc_is 1 "an unknown task is refused"
has "run $id has no task 'nosuch'" "naming it"
run submit w
pending=$(run_id)
run retry "$pending"
rc_is 1 "a run not finished is refused"
has "run $pending is Pending; only a finished run can be retried" "in one line"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]
ok $? "one line"
run retry "$id" --json
rc_is 2 "--json without --dry-run is a usage error"
fi

# --- retry: only what did not complete runs again ------------------------------
touch "$host/fixed"
run retry "$id"
rc_is 0 "retry completes the run"
has "run $id Completed" "says so"
is '["Completed", "Completed", "Completed", "Completed", "Completed"]' "$id" \
   '[t[k]["status"] for k in "abcde"]' "every task completed"
is '[1, 2, 1, 1, 1]' "$id" '[t[k]["attempts"] for k in "abcde"]' \
   "b's new attempt is numbered after its first; a, d, e not run again"
[ "$(runs_of a)$(runs_of b)$(runs_of c)$(runs_of d)$(runs_of e)" = "12111" ]
ok $? "a, d and e ran once, b twice, c once"
grep -q '"a": *1' "$host/input.b.2"
ok $? "b's second attempt got a's kept output in its input"
cmp -s "$host/input.b.1" "$host/input.b.2"
ok $? "the same input as the first time"
run retry "$id"
rc_is 1 "nothing left to retry"
has "every task completed" "says why"

# --- a cancelled run: its tasks run again ---------------------------------------
if $full; then
run cancel "$pending"
has "run $pending: Cancelled" "a Pending run is cancelled at once"
run retry "$pending" --dry-run
has "would run again 5 tasks, keeping 0" "a retry of it would run every task"
run retry "$pending"
rc_is 0 "and completes it"
is '["Completed", [1, 1, 1, 1, 1]]' "$pending" '[r["status"], [t[k]["attempts"] for k in "abcde"]]' \
   "each task once"
fi

# --- --task: a task and what is downstream of it ------------------------------
run retry "$id" --task b
rc_is 0 "retry --task b"
is '[1, 3, 2, 1, 1]' "$id" '[t[k]["attempts"] for k in "abcde"]' \
   "b and c ran again though they had completed; a, d, e did not"
expected=11
$full && expected=22 # once more each for the cancelled run
[ "$(runs_of a)$(runs_of d)" = "$expected" ]
ok $? "a and d did not run again"

# --- --detach: the run waits for a host ------------------------------------------
if $full; then
run retry "$id" --task d --detach
rc_is 0 "retry --detach"
is 'Pending' "$id" 'r["status"]' "leaves the run Pending"
run serve --exit-when-idle
rc_is 0 "serve takes it"
is '["Completed", 2]' "$id" '[r["status"], t["d"]["attempts"]]' "and runs d again"
run status "$id"
has "Completed" "status shows the run completed"
fi

# --- the same on PostgreSQL, when this machine has a server to start ----------
# (not under valgrind: a server start there takes longer than the rest).
if [ -n "$SY_WRAP" ]; then
    echo "# SKIP the PostgreSQL part under valgrind; it runs in the sanitizer pass"
    rm -rf "$host"
    done_testing
    exit $?
fi
url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host")
case $? in
0) ;;
*) echo "# SKIP the PostgreSQL part: no server could be started"
   rm -rf "$host"; done_testing; exit $? ;;
esac
trap '"$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"; rm -rf "$host"' EXIT
sed -i "s|sqlite:var/sy.db|$url|" "$host/switchyard.cfg"
out=$("$SWITCHYARD" migrate 2>&1)
case $out in
*"not in this build"*)
    echo "# SKIP the PostgreSQL part: this build has no PostgreSQL store"
    done_testing; exit $? ;;
esac
rm -f "$host"/ran.* "$host"/input.* "$host/fixed"
run run w
rc_is 1 "postgresql: the first run fails"
id=$(run_id)
run retry "$id" --dry-run
has "would run again 2 tasks, keeping 3" "postgresql: --dry-run plans b and c"
[ "$(runs_of b)" = 1 ]
ok $? "postgresql: and runs nothing"
run logs "$id" b
has "not fixed yet" "postgresql: b's stderr is in its logs"
touch "$host/fixed"
run retry "$id"
rc_is 0 "postgresql: retry completes the run"
is '[1, 2, 1, 1, 1]' "$id" '[t[k]["attempts"] for k in "abcde"]' \
   "postgresql: only b and c ran again, b's attempt numbered 2"
cmp -s "$host/input.b.1" "$host/input.b.2"
ok $? "postgresql: b got a's kept output again"
run retry "$id" --task b
rc_is 0 "postgresql: retry --task b"
is '[1, 3, 2, 1, 1]' "$id" '[t[k]["attempts"] for k in "abcde"]' \
   "postgresql: b and c again, nothing else"
done_testing
