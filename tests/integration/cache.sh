#!/bin/sh
# Cached task results end to end: a second run with the same input takes
# the task's output from the cache (not dispatched, marked "cached" in
# `status` and its JSON); `retry --no-cache` runs it again; another
# input runs it; `check` refuses a bad
# template with its line.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
jget_cache=1 # every command below goes through `run`

workflow conv <<'WF'
workflow = {
  name = "conv";
  tasks = (
    { id = "a"; output = { rows = 7; }; cache = { key = "{file}"; lifetime = "1h"; }; },
    { id = "b"; after = ["a"]; echo = true; }
  );
};
WF
dispatched() { grep -c "^dispatch public::conv::a " "$host/dispatch.log"; }

run run conv --context '{"file": "x.csv"}'
rc_is 0 "the first run completes"
first=$(run_id)
is false "$first" 't["a"]["cached"]' "the first run's task ran: not cached"

run run conv --context '{"file": "x.csv"}'
rc_is 0 "the second run completes"
second=$(run_id)
is '["Completed", true]' "$second" '[t["a"]["status"], t["a"]["cached"]]' "the same input: Completed from the cache"
is 7 "$second" 't["b"]["output"]["rows"]' "its dependent gets the cached output"
[ "$(dispatched)" = 1 ]; ok $? "the cached task was not dispatched again"
run status "$second"
has "(cached)" "status says which task came from the cache"

run retry "$second" --task a --no-cache --quiet
rc_is 0 "retry --no-cache completes"
is false "$second" 't["a"]["cached"]' "retry --no-cache runs the task again"
[ "$(dispatched)" = 2 ]; ok $? "dispatched despite the cache"

run run conv --context '{"file": "y.csv"}'
third=$(run_id)
is false "$third" 't["a"]["cached"]' "another input: not cached"
[ "$(dispatched)" = 3 ]; ok $? "and run"

workflow bad <<'WF'
workflow = { name = "bad"; tasks = (
  { id = "a"; cache = { key = "{file"; lifetime = "1h"; }; }
); };
WF
run check
rc_is 1 "check refuses a cache key with a brace not closed"
has "bad.cfg:2: error: task 'a': cache: key \"{file\": a '{' that is not closed" "naming the line and why"

cleanup_host
done_testing
