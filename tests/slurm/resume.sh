#!/bin/sh
# `kill -9` of `switchyard serve` with jobs running and queued, and a
# restart: the new host resumes each attempt (ABI 1.4 resume()), finds
# its job by name and comment and follows it; no job is submitted twice.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
make_slurm_host
workflow three <<'WF'
workflow = {
  name = "slm::three";
  tasks = (
    { id = "a"; shell = "sleep 3; echo '{\"a\": 1}'"; },
    { id = "b"; shell = "sleep 3; echo '{\"b\": 1}'"; },
    { id = "q"; shell = "echo '{\"q\": 1}'"; sbatch_options = ["--begin=now+4"]; },
    { id = "z"; after = ["a", "q"]; shell = "cat"; }
  );
};
WF
run submit slm::three
id=$(run_id)
# A decoy: an older job of b's name and comment that failed (as one that
# ended NODE_FAIL and was deferred would be); the restart must follow the
# newest job of the name, the one this host submits.
sbatch --parsable --job-name="sy-$id-b-1" --comment="switchyard run=$id task=b attempt=1" \
    --output=/dev/null --wrap 'exit 7' >/dev/null
for _ in $(seq 1 100); do run_jobs "$id" all | grep -q FAILED && break; sleep 0.1; done
"$SWITCHYARD" serve >"$dir/serve1.log" 2>&1 &
pid=$!
wait_jobs "$id" RUNNING 2
ok $? "two jobs run"
wait_jobs "$id" PENDING 1
ok $? "one is queued"
kill -9 "$pid"
wait "$pid" 2>/dev/null
n=$(run_jobs "$id" all | wc -l)
[ "$n" = 4 ]; ok $? "the host is killed with three jobs in flight, and the decoy (found $n)"
timeout 60 "$SWITCHYARD" serve --exit-when-idle >"$dir/serve2.log" 2>&1
rc=$?
rc_is 0 "a new host finishes the run"
is Completed "$id" 'r["status"]' "the run is Completed"
is '[1, 1, 1]' "$id" '[t[k]["output"][k] for k in ("a", "b", "q")]' "each resumed task has its job's output"
is '[1, 1]' "$id" '[t["z"]["output"]["a"], t["z"]["output"]["q"]]' "and the task after them ran on it"
is '[1, 1, 1, 1]' "$id" '[t[k]["attempts"] for k in ("a", "b", "q", "z")]' "no attempt was charged again"
out=$(run_jobs "$id" all | grep -v FAILED | awk '{print $1}' | sort)
echo "$out" | sed 's/^/# /'
n=$(printf '%s\n' "$out" | wc -l)
d=$(printf '%s\n' "$out" | uniq -d | wc -l)
[ "$n" = 4 ] && [ "$d" = 0 ]; ok $? "exactly one job per attempt besides the decoy: 4 jobs, none twice (got $n, $d twice)"
out=$(cat "$dir/serve2.log")
has "adopted job" "the new host says it adopted the jobs"
done_testing
