#!/bin/sh
# The slurm plugin through `switchyard run` against a one-node cluster:
# tasks are batch jobs whose stdout is their output; a failing job names
# its exit code and its stderr; a downstream task gets its dependency's
# output; one attempt is one job, named and commented.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
make_slurm_host

workflow basic <<'WF'
workflow = {
  name = "slm::basic";
  retry = { attempts = 2; delay = 0; };
  tasks = (
    { id = "echo"; shell = "printf '{\"who\": \"slurm\"}'"; },
    { id = "ctx"; command = ["cat"]; },
    { id = "next"; after = ["echo"]; shell = "python3 -c 'import json,sys; c=json.load(sys.stdin); print(json.dumps({\"got\": c[\"who\"]}))'"; },
    { id = "fail"; shell = "echo bad input here >&2; exit 3"; retry = { attempts = 1; }; },
    { id = "sig"; command = ["sh", "-c", "kill -9 $$"]; retry = { attempts = 1; }; }
  );
};
WF
run run slm::basic --context '{"x": 1}'
rc_is 1 "a run with a failing job exits 1"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["echo"]["status"], t["echo"]["attempts"]]' "a job that prints JSON completes on its first attempt"
is '{"who": "slurm"}' "$id" 't["echo"]["output"]' "its stdout is the task's output"
is 1 "$id" 't["ctx"]["output"]["x"]' "the input context is the job's stdin"
is slurm "$id" 't["next"]["output"]["got"]' "a downstream job gets its dependency's output in its context"
is '["Failed", 1]' "$id" '[t["fail"]["status"], t["fail"]["attempts"]]' "a job that exits 3 fails"
is true "$id" '"exited with status 3" in t["fail"]["error"]' "the error names the exit code"
is true "$id" '"bad input here" in t["fail"]["error"]' "and the tail of its stderr"
is true "$id" '"signal 9" in t["sig"]["error"]' "a job killed by a signal names it"
n=$(slurm_jobs '%j %k' | grep -c "^sy-$id-")
[ "$n" = 5 ]; ok $? "one job per attempt, named for run, task and attempt (got $n)"
out=$(slurm_jobs '%j|%k')
has "sy-$id-echo-1|switchyard run=$id task=echo attempt=1" "each job is commented with run, task and attempt"

# An unknown partition is refused by the controller's own answer.
workflow badpart <<'WF'
workflow = { name = "slm::badpart"; tasks = ( { id = "a"; shell = "true"; partition = "nosuch"; } ); };
WF
run run slm::badpart
rc_is 2 "a task asking for an unknown partition is refused when the workflow loads"
has 'no partition "nosuch"' "naming the partition"
workflow rej <<'WF'
workflow = { name = "slm::rej"; retry = { attempts = 1; }; tasks = ( { id = "a"; shell = "true"; partition = "other"; time = "1h"; } ); };
WF
run run slm::rej
rc_is 1 "a job the controller rejects at submit fails the run"
id=$(run_id)
is true "$id" '"the controller refused the job" in t["a"]["error"] and "time limit" in t["a"]["error"].lower()' "with the controller's message"
done_testing
