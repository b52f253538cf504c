#!/bin/sh
# Attempt logs: every attempt's stderr, and its stdout when that is not its
# output, are kept bounded by log_limit (head and tail, the dropped middle
# counted in a marker line); `status` shows one line of an error, `logs`
# the rest; `logs --follow` prints attempts' logs as they come and ends
# with the run.
. "$SY_SRCDIR/tests/integration/lib.sh"
# Under valgrind (SY_WRAP) only the core runs: each command costs seconds
# there; the sanitizer pass runs it all.
full=true
[ -n "$SY_WRAP" ] && full=false
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-logs-XXXXXX")
chmod 0700 "$host"
mkdir -p "$host/plugins" "$host/workflows"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/sy.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
log_limit = "1KiB";
executors = { default = { plugin = "thread"; workers = 2; }; };
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"; export SWITCHYARD_CONFIG
# noisy: 5500 bytes of stderr between a first and a last line, a line on
# stdout, then it fails (twice: two attempts); quiet: a warning on stderr
# and its output on stdout.
workflow w <<'WF'
workflow = {
  name = "w";
  tasks = (
    { id = "noisy"; retry = { attempts = 2; delay = "10ms"; }; command = ["sh", "-c",
        "echo FIRST-LINE >&2; i=0; while [ $i -lt 500 ]; do echo 'filler....' >&2; i=$((i+1)); done; echo \"LAST-LINE of attempt $SWITCHYARD_ATTEMPT\" >&2; echo 'some stdout'; exit 2"]; },
    { id = "quiet"; command = ["sh", "-c", "echo 'warning: careful' >&2; echo '{\"q\": 1}'"]; },
    { id = "chatty"; output = "none"; command = ["sh", "-c",
        "echo 'not an output, a log'; i=0; while [ $i -lt 8000 ]; do echo 'chatter.....'; i=$((i+1)); done"]; }
  );
};
WF
workflow slow <<'WF'
workflow = {
  name = "slow";
  tasks = (
    { id = "first"; command = ["sh", "-c", "echo 'first says hi' >&2; echo '{}'"]; },
    { id = "second"; after = ["first"]; command = ["sh", "-c", "sleep 1; echo 'second says bye' >&2; echo '{}'"]; }
  );
};
WF

run run w
rc_is 1 "the run fails"
id=$(run_id)

# --- status: one line of the error -------------------------------------------
run status "$id"
has "exited with status 2: LAST-LINE of attempt 2" "status shows the error's last line"
hasnt "FIRST-LINE" "and not the rest of stderr"
hasnt "filler" "nothing between"
has "switchyard logs $id TASK" "and says where the rest is"

# --- logs: per task and attempt, bounded, marked --------------------------------
run logs "$id"
rc_is 0 "logs of the run"
has "==> noisy attempt 1 stderr (5534 bytes, 4510 dropped) <==" "attempt 1's stderr, with its size and what was dropped"
has "==> noisy attempt 2 stderr" "attempt 2's"
has "==> noisy attempt 1 stdout (12 bytes) <==" "the stdout of a failed attempt"
has "some stdout" "its text"
has "FIRST-LINE" "the head is kept"
has "LAST-LINE of attempt 1" "and the tail"
has "[... 4510 bytes dropped ...]" "with the marker between them"
has "==> quiet attempt 1 stderr" "a task that completed: its stderr"
has "warning: careful" "its text"
hasnt "quiet attempt 1 stdout" "but not its stdout, which is its output"
has "==> chatty attempt 1 stdout (104021 bytes, " "the stdout of an output = \"none\" task that completed, with its size"
has "not an output, a log" "its head"
if $full; then
run logs "$id" noisy --attempt 2
rc_is 0 "logs TASK --attempt N"
has "LAST-LINE of attempt 2" "shows that attempt"
hasnt "LAST-LINE of attempt 1" "alone"
hasnt "quiet" "of that task alone"
fi
run logs "$id" noisy --attempt 1 --json
rc_is 0 "logs --json"
printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
l = {x["stream"]: x for x in d["logs"]}
e = l["stderr"]
assert d["status"] == "Failed", d
assert e["task"] == "noisy" and e["attempt"] == 1, e
assert e["size"] == 5534 and e["dropped"] == 4510, e
assert e["text"].startswith("FIRST-LINE\n") and e["text"].endswith("LAST-LINE of attempt 1\n"), e
assert len(e["text"].encode()) == 1024 + len("\n[... 4510 bytes dropped ...]\n"), len(e["text"])
assert l["stdout"]["text"] == "some stdout\n", l'
ok $? "as JSON: sizes, the head, the tail and the marker"
if $full; then
run logs "$id" nosuch
rc_is 1 "logs of an unknown task"
has "run $id has no task 'nosuch'" "says so"
run logs 999
rc_is 1 "logs of an unknown run"
run logs "$id" --attempt 0
rc_is 2 "--attempt 0 is a usage error"
fi

# --- --follow ends with the run -------------------------------------------------
run submit slow
sid=$(run_id)
$SY_WRAP "$SWITCHYARD" logs "$sid" --follow >"$host/follow.out" 2>&1 &
follower=$!
run serve --exit-when-idle
rc_is 0 "serve runs the submitted run"
# The follower ends by itself once the run has ended; 60 s is a hang.
i=0
while kill -0 "$follower" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$follower" 2>/dev/null; then
    kill "$follower"
    ok 1 "logs --follow ends when the run ends"
else
    wait "$follower"
    ok $? "logs --follow ends when the run ends"
fi
out=$(cat "$host/follow.out")
has "first says hi" "having printed the first task's log"
has "second says bye" "and the second's, written after it started following"
[ "$(grep -c '^==> second attempt 1 stderr' "$host/follow.out")" -eq 1 ]
ok $? "each log once"

# --- log_limit ---------------------------------------------------------------------
if $full; then
sed -i 's/log_limit = "1KiB";/log_limit = "12XB";/' "$host/switchyard.cfg"
run check
rc_is 1 "a bad log_limit is refused"
has "switchyard.cfg:4: error: 'log_limit' must be a size" "naming file, line and key"
sed -i 's/log_limit = "12XB";/log_limit = 0;/' "$host/switchyard.cfg"
run run w
none=$(run_id)
run logs "$none"
has "run $none: no logs" "log_limit = 0 keeps none"
fi

rm -rf "$host"
done_testing
