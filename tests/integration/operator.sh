#!/bin/sh
# What an operator meets from day to day: a bad workflow file beside good
# ones, progress, errors that do not flood `status`, `runs` with tenant,
# duration and task counts, --json on the listings, and submits refused
# with the reason.
. "$SY_SRCDIR/tests/integration/lib.sh"
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-op-XXXXXX")
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
workflow fine <<'WF'
workflow = {
  name = "fine";
  tenant = "ops";
  tasks = (
    { id = "a"; command = ["sh", "-c", "echo '{\"a\": 1}'"]; },
    { id = "b"; after = ["a"]; command = ["sh", "-c", "echo '{\"b\": 2}'"]; },
    { id = "c"; after = ["a"]; command = ["sh", "-c", "echo '{}'"]; }
  );
};
WF
workflow noisy <<'WF'
workflow = {
  name = "noisy";
  tasks = (
    { id = "loud"; command = ["sh", "-c",
        "i=0; while [ $i -lt 3000 ]; do echo \"noise line $i of a chatty tool\" >&2; i=$((i+1)); done; echo 'disk quota exceeded' >&2; exit 3"]; }
  );
};
WF
# A file with an error, named before the good ones load.
workflow broken <<'WF'
workflow = {
  name = "broken";
  tasks = ( { id = "x"; after = ["nothing"]; command = ["true"]; } );
};
WF

# --- one bad workflow file ------------------------------------------------
run check
rc_is 1 "check reports the bad workflow file"
has "$host/workflows/broken.cfg:3: error: task 'x': 'after' names unknown task 'nothing'" \
    "at its file and line"

run run fine --progress-every 0
rc_is 0 "run of a good workflow works beside a bad file"
has "$host/workflows/broken.cfg:3: error:" "the bad file is reported"
has "workflow files with errors (above) skipped; 2 workflows loaded" "and said to be skipped"
fine_id=$(run_id)
# --- progress, not on a terminal: plain lines ------------------------------
has "progress: 1/3 done, " "plain progress lines when not a terminal"
has " tasks/s, " "with the rate"
hasnt "$(printf '\r')" "and no carriage returns"

run submit fine
rc_is 0 "submit works beside a bad file"
sub_id=$(run_id)
run serve --exit-when-idle
rc_is 0 "serve starts beside a bad file"
is Completed "$sub_id" 'r["status"]' "and serves the good workflow"

run graph fine
rc_is 0 "graph of a good workflow works beside a bad file"
has '"a" -> "b";' "and draws it"

run workflows
rc_is 1 "workflows exits 1 while a file has errors"
has "ops::fine" "and lists the good ones"
run workflows --json
python3 -c 'import json,sys; w=json.loads(sys.argv[1][sys.argv[1].index("["):]); assert sorted(x["name"] for x in w)==["fine","noisy"], w; assert [x for x in w if x["name"]=="fine"][0]["tenant"]=="ops"' "$out" 2>&1
ok $? "workflows --json lists them"

# --- progress on a terminal: one line rewritten ---------------------------
if command -v script >/dev/null 2>&1; then
    out=$(script -qec "$SY_WRAP $SWITCHYARD run fine" /dev/null 2>&1)
    has "$(printf '\r')" "on a terminal the progress line is rewritten in place"
    has "3/3 done, 0 running, 0 failed, 0 skipped, " "with done/total, running, failed"
    has " tasks/s, " "the rate"
    hasnt "progress:" "and no plain progress lines"
else
    echo "# SKIP terminal progress: script(1) is not installed"
fi

# --- errors: the table short, --task in full ------------------------------
run run noisy
rc_is 1 "a failing command fails the run"
noisy_id=$(run_id)
[ "${#out}" -lt 4000 ]
ok $? "run's lines do not repeat 64 KiB of stderr (${#out} bytes)"
run status "$noisy_id"
rc_is 0 "status of the failed run"
has "loud" "shows the task"
has "disk quota exceeded" "with the last line of its error"
has "exited with status 3" "and the first"
hasnt "noise line 1500" "but not the stderr between"
[ "${#out}" -lt 2000 ]
ok $? "status stays short (${#out} bytes)"
has "switchyard logs $noisy_id TASK" "and says how to see it all"
run status "$noisy_id" --task loud
rc_is 0 "status --task shows one task"
has "exited with status 3: disk quota exceeded" "with its error"
has "state      Failed" "and its state"
run logs "$noisy_id" loud
rc_is 0 "logs shows what the task wrote"
has "noise line 0 of a chatty tool" "its stderr's first line"
has "noise line 2999 of a chatty tool" "and its end"
has "disk quota exceeded" "to its last line"
has "bytes dropped ...]" "the middle of 93 KB marked as dropped"
run status "$fine_id" --task b
has '"b": 2' "status --task shows a task's output"
run status "$noisy_id" --task nosuch
rc_is 1 "status --task of an unknown task fails"
has "run $noisy_id has no task 'nosuch'" "saying so"

# --- runs ------------------------------------------------------------------
run runs
rc_is 0 "runs lists the runs"
has "TENANT::WORKFLOW" "with the tenant"
has "DURATION" "the duration"
has "ops::fine" "tenant and workflow together"
has "3 Completed" "task counts by state"
has "1 Failed" "failed ones too"
run runs --json --limit 2
python3 - "$out" <<'PY' 2>&1
import json, sys
runs = json.loads(sys.argv[1])
assert len(runs) == 2, runs
for r in runs:
    for k in ("run_id", "tenant", "workflow", "status", "created", "started", "finished",
              "duration_ms", "n_tasks", "tasks", "error"):
        assert k in r, (k, r)
    assert isinstance(r["duration_ms"], int) and r["duration_ms"] >= 0, r
noisy = [r for r in runs if r["workflow"] == "noisy"][0]
assert noisy["tasks"] == {"Failed": 1}, noisy
assert noisy["tenant"] == "public", noisy
PY
ok $? "runs --json: tenant, duration and counts by state"

# --- the other listings in JSON ---------------------------------------------
run plugins --json
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); p=[x for x in o["plugins"] if x["name"]=="thread"][0]; assert p["status"]=="loaded" and p["reason"] is None, p; assert o["searched"], o' "$out" 2>&1
ok $? "plugins --json"
run route ops::fine::a --json
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["executor"]=="default" and o["namespace"]=="ops::fine::a" and o["tried"]==[], o' "$out" 2>&1
ok $? "route --json"

# --- submits refused ----------------------------------------------------------
cat >"$host/memory.cfg" <<'CFG'
store = "sqlite::memory:";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
CFG
run --config "$host/memory.cfg" submit fine
rc_is 2 "submit to an in-memory store is refused"
has "the store \"sqlite::memory:\" ($host/memory.cfg:1) lives only as long as one process" \
    "with the reason"
run --config "$host/memory.cfg" run fine --quiet
rc_is 0 "run on an in-memory store still works"

cat >"$host/small.cfg" <<'CFG'
store = "sqlite:var/small.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
max_context_bytes = 1024;
CFG
python3 -c 'import json; print(json.dumps({"blob": "x" * 5000}))' >"$host/big.json"
run --config "$host/small.cfg" submit fine --context @"$host/big.json"
rc_is 2 "a context over max_context_bytes is refused at submit"
has "the context is 5011 bytes, more than max_context_bytes 1024 ($host/small.cfg:4)" \
    "with the size and the limit"
run --config "$host/small.cfg" run fine --context @"$host/big.json"
rc_is 2 "and at run"
has "the context is 5011 bytes, more than max_context_bytes 1024" "with the same reason"
run --config "$host/small.cfg" runs --json
has "[]" "and no run is recorded"

rm -rf "$host"
done_testing
