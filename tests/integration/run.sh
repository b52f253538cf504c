#!/bin/sh
# Workflows run end to end: retries, timeouts, bad output, skipping,
# trigger rules, `when`, and context flow, asserted through `status --json`.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
jget_cache=1 # every command below goes through `run`

workflow flow <<'WF'
workflow = {
  name = "flow";
  tasks = (
    { id = "a"; output = { x = 1; nested = { a = 1; }; list = [1, 2]; }; },
    { id = "b"; output = { nested = { b = 2; }; list = [3]; }; },
    { id = "c"; after = ["a", "b"]; echo = true; },
    { id = "d"; after = ["c"]; output = { x = 2; }; },
    { id = "e"; after = ["d"]; echo = true; }
  );
};
WF
run run flow --context '{"seed": 7, "nested": {"z": 0}}'
rc_is 0 "a completed run exits 0"
has "run " "prints the run id"
id=$(run_id)
is Completed "$id" 'r["status"]' "the run is Completed"
is '{"a": 1, "b": 2, "z": 0}' "$id" 't["c"]["output"]["nested"]' "objects merge recursively across ancestors and the initial context"
is 7 "$id" 't["c"]["output"]["seed"]' "the initial context reaches descendants"
is '[3]' "$id" 't["c"]["output"]["list"]' "later wins: arrays replace"
is 2 "$id" 't["e"]["output"]["x"]' "a later ancestor's output wins"
is flow "$id" 'r["workflow"]' "status names the workflow"
is 'public::flow::c' "$id" 't["c"]["namespace"]' "tasks carry their namespace"
is default "$id" 't["c"]["executor"]' "and their executor instance"

workflow retry <<'WF'
workflow = {
  name = "retry";
  retry = { attempts = 3; delay = "10ms"; };
  tasks = (
    { id = "flaky"; fail_times = 2; },
    { id = "hopeless"; fail_times = 9; retry = { attempts = 2; delay = 0; }; },
    { id = "after_hopeless"; after = ["hopeless"]; },
    { id = "cleanup"; after = ["hopeless"]; trigger = "all_done"; },
    { id = "on_failure"; after = ["hopeless", "flaky"]; trigger = "one_failed"; },
    { id = "none_failed"; after = ["after_hopeless"]; trigger = "none_failed"; }
  );
};
WF
run run retry
rc_is 1 "a failed run exits 1"
id=$(run_id)
retry_id=$id
is Failed "$id" 'r["status"]' "the run is Failed"
is '["Completed", 3]' "$id" '[t["flaky"]["status"], t["flaky"]["attempts"]]' "fail twice then succeed: Completed on attempt 3"
is '["Failed", 2]' "$id" '[t["hopeless"]["status"], t["hopeless"]["attempts"]]' "retries stop at attempts"
is "planned failure 2 of 9" "$id" 't["hopeless"]["error"]' "the last error is kept"
is Skipped "$id" 't["after_hopeless"]["status"]' "all_success after a failure is Skipped"
is Completed "$id" 't["cleanup"]["status"]' "all_done runs after a failure"
is Completed "$id" 't["on_failure"]["status"]' "one_failed runs after a failure"
is Completed "$id" 't["none_failed"]["status"]' "none_failed runs after a skipped dependency"

workflow timeout <<'WF'
workflow = {
  name = "timeout";
  tasks = (
    { id = "hang"; mode = "hang"; timeout = "150ms"; retry = { attempts = 2; delay = 0; }; },
    { id = "hang_once"; mode = "hang"; timeout = "100ms"; retry = { attempts = 3; delay = 0; retry_on = ["failed"]; }; },
    { id = "bad"; mode = "bad_output"; },
    { id = "garbage"; mode = "not_json"; }
  );
};
WF
run run timeout
rc_is 1 "timeouts fail the run"
id=$(run_id)
is '["Failed", 2]' "$id" '[t["hang"]["status"], t["hang"]["attempts"]]' "a hanging task times out on each attempt"
has_err=$(jget "$id" '"timed out after 150ms" in t["hang"]["error"]')
[ "$has_err" = true ]; ok $? "the error says it timed out and after how long"
is '["Failed", 1]' "$id" '[t["hang_once"]["status"], t["hang_once"]["attempts"]]' "retry_on without timeout does not retry a timeout"
is true "$id" '"not a JSON object" in t["bad"]["error"]' "output that is not an object fails the task"
is true "$id" '"not valid JSON" in t["garbage"]["error"]' "output that is not JSON fails the task"

workflow when <<'WF'
workflow = {
  name = "when";
  tasks = (
    { id = "probe"; output = { mode = "full"; rows = 5; }; },
    { id = "full"; after = ["probe"]; when = ( { path = "mode"; equals = "full"; } ); },
    { id = "delta"; after = ["probe"]; when = ( { path = "mode"; equals = "delta"; } ); },
    { id = "after_delta"; after = ["delta"]; },
    { id = "big"; after = ["probe"]; when = ( { path = "$.rows"; greater_than = 3; } ); }
  );
};
WF
run run when
rc_is 0 "a run with skipped branches completes"
id=$(run_id)
is Completed "$id" 't["full"]["status"]' "a when that holds runs"
is Skipped "$id" 't["delta"]["status"]' "a when that does not hold skips"
is 'when: mode equals "delta" does not hold (mode is "full")' "$id" 't["delta"]["error"]' "and says which condition failed and why"
is Skipped "$id" 't["after_delta"]["status"]' "skipping propagates"
is Completed "$id" 't["big"]["status"]' "greater_than on a $. path"

run submit flow
rc_is 0 "submit exits 0"
sid=$(run_id)
is Pending "$sid" 'r["status"]' "a submitted run waits for a host"
run serve --exit-when-idle
rc_is 0 "serve --exit-when-idle runs what was submitted and exits"
is Completed "$sid" 'r["status"]' "the submitted run completed under serve"

run submit flow
cid=$(run_id)
run cancel "$cid"
has "Cancelled" "cancelling a Pending run ends it at once"
is Cancelled "$cid" 'r["status"]' "status shows it Cancelled"
run cancel "$cid"
rc_is 1 "cancelling an ended run fails"

run runs
has "flow" "runs lists the runs"
run status 99999
rc_is 1 "status of an unknown run fails"
run graph retry
has '"hopeless" -> "cleanup";' "graph prints the DAG in DOT"
run run nosuch
rc_is 2 "an unknown workflow is a usage error"

# A run's graph: each task with the instance that ran it and its state.
run graph --run "$retry_id"
rc_is 0 "graph --run draws a run"
has '"hopeless" [label="hopeless\ndefault\nFailed", style=filled, fillcolor=salmon];' \
    "a failed task: its instance, its state, filled"
has '"cleanup" [label="cleanup\ndefault\nall_done\nCompleted", style=filled, fillcolor=palegreen];' \
    "a completed one, with its trigger"
has '"after_hopeless" [label="after_hopeless\ndefault\nSkipped", style=filled, fillcolor=lightgray];' \
    "a skipped one"
has '"hopeless" -> "cleanup";' "and the edges"
# The run keeps the definition it started with: the file changed since
# does not change its graph.
workflow retry <<'WF'
workflow = { name = "retry"; tasks = ( { id = "other"; } ); };
WF
run graph --run "$retry_id"
has '"hopeless" -> "cleanup";' "graph --run draws the run's own definition, not today's file"
run graph retry
has '"other" [label="other\ndefault"];' "while graph WORKFLOW draws the file"
run submit flow
pid=$(run_id)
run graph --run "$pid"
has '"a" [label="a\n-\nNotStarted"];' "a run not started yet: no instance, no fill"
run graph --run 99999
rc_is 1 "graph --run of an unknown run fails"
has "run 99999: no such run" "and says so"
run graph --run abc
rc_is 2 "graph --run needs a run id"

cleanup_host
done_testing
