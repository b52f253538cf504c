#!/bin/sh
# `status` on a run of more than 1,000 tasks: the table lists 1,000 of
# them with the counts by state of all, pages with --offset and --limit,
# finds a task past the first page with --task; --json lists every task
# unless told to page, each with its index, and counts them by state.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a run of 1,100 tasks; the sanitizer pass runs it"
    exit 0
fi
make_host
python3 - "$host/workflows/wide.cfg" <<'PY'
import sys
rows = ['    { id = "t%d"; }' % i for i in range(1099)]
rows.append('    { id = "bad"; mode = "fail"; }')
open(sys.argv[1], "w").write('workflow = {\n  name = "wide";\n  tasks = (\n'
                             + ",\n".join(rows) + "\n  );\n};\n")
PY
run run wide
rc_is 1 "the run of 1,100 tasks ends (one fails)"
id=$(run_id)

run status "$id"
rc_is 0 "status of the 1,100-task run"
rows=$(printf '%s\n' "$out" | grep -c '^  t[0-9]')
[ "$rows" -eq 1000 ]; ok $? "lists 1,000 tasks ($rows)"
has "1100 tasks: 1099 Completed, 1 Failed" "and counts all 1,100 by state"
has "(tasks 1-1000 of 1100 listed" "and says which it listed"
hasnt "  bad " "the failed task past the page is not listed"

run status "$id" --offset 1098
rc_is 0 "status --offset 1098"
rows=$(printf '%s\n' "$out" | grep -c '^  \(t[0-9]\|bad\)')
[ "$rows" -eq 2 ]; ok $? "lists the last two ($rows)"
has "  bad " "the failed one among them"
has "(tasks 1099-1100 of 1100 listed" "numbered from the offset"

run status "$id" --offset 5000
rc_is 0 "an offset past the end"
has "(no tasks listed from --offset 5000: the run has 1100)" "says so"

run status "$id" --limit 0
rows=$(printf '%s\n' "$out" | grep -c '^  \(t[0-9]\|bad\)')
[ "$rows" -eq 1100 ]; ok $? "--limit 0 lists every task ($rows)"
hasnt "1100 tasks:" "and needs no summary"

run status "$id" --task bad
rc_is 0 "--task finds a task past the first page"
has "state      Failed" "in full"

is '[1100, 1100, {"Completed": 1099, "Failed": 1}]' "$id" \
    '[len(r["tasks"]), r["n_tasks"], r["task_counts"]]' "--json lists every task and counts them"
is '[0, 1099]' "$id" '[r["tasks"][0]["index"], r["tasks"][-1]["index"]]' "each with its index"

run status "$id" --json --limit 3 --offset 10
python3 -c 'import json, sys; r = json.loads(sys.argv[1]);
assert [t["id"] for t in r["tasks"]] == ["t10", "t11", "t12"], r["tasks"]
assert [t["index"] for t in r["tasks"]] == [10, 11, 12]
assert r["tasks_offset"] == 10 and r["n_tasks"] == 1100' "$out"
ok $? "--json --limit 3 --offset 10 pages the JSON"

run status "$id" --limit x
rc_is 2 "a bad --limit is a usage error"
has "--limit 'x'" "naming it"

run runs
has "1099 Completed, 1 Failed" "runs counts the tasks by state"

cleanup_host
done_testing
