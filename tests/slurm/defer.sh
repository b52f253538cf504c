#!/bin/sh
# Not the task's failure: the controller refusing a job for a limit of
# jobs (MaxSubmitJobs) is backpressure, and a job that ends NODE_FAIL is
# submitted again; neither charges an attempt.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
wrap_commands
# sbatch refuses the first two jobs as a controller at MaxSubmitJobs does.
real=$(command -v sbatch)
cat >"$dir/bin/sbatch" <<SH
#!/bin/sh
echo "\$(date +%s%3N) sbatch \$*" >>"$dir/calls.log"
n=\$(grep -c ' sbatch ' "$dir/calls.log")
if [ "\$n" -le 2 ]; then
    echo "sbatch: error: QOSMaxSubmitJobPerUserLimit" >&2
    echo "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)" >&2
    exit 1
fi
exec "$real" "\$@"
SH
make_slurm_host "bin_dir = \"$dir/bin\"; submit_retry = \"300ms\";"
workflow limit <<'WF'
workflow = { name = "slm::limit"; retry = { attempts = 1; };
             tasks = ( { id = "a"; shell = "echo '{\"a\": 1}'"; } ); };
WF
run run slm::limit
rc_is 0 "a task refused twice for the submit limit still completes"
id=$(run_id)
is '["Completed", 1, 1]' "$id" '[t["a"]["status"], t["a"]["attempts"], t["a"]["output"]["a"]]' \
    "on its first attempt: the refusals charged none"
n=$(grep -c ' sbatch ' "$dir/calls.log")
[ "$n" = 3 ]; ok $? "three submits, the third accepted ($n)"

workflow node <<WF
workflow = { name = "slm::node"; retry = { attempts = 1; };
  tasks = ( { id = "n"; shell = "if [ -e $dir/once ]; then echo '{\"n\": 2}'; else touch $dir/once; sleep 60; fi"; } ); };
WF
run submit slm::node
id=$(run_id)
"$SWITCHYARD" serve --exit-when-idle >"$dir/serve.log" 2>&1 &
pid=$!
wait_jobs "$id" RUNNING 1
ok $? "the job runs"
scontrol update NodeName=localhost State=DOWN Reason=sytest
for _ in $(seq 1 50); do run_jobs "$id" all | grep -q NODE_FAIL && break; sleep 0.1; done
run_jobs "$id" all | grep -q NODE_FAIL
ok $? "the node fails under it (NODE_FAIL)"
scontrol update NodeName=localhost State=RESUME
for _ in $(seq 1 300); do
    [ "$(jget "$id" 'r["status"]')" = Completed ] && break
    sleep 0.1
done
is '["Completed", 1, 2]' "$id" '[t["n"]["status"], t["n"]["attempts"], t["n"]["output"]["n"]]' \
    "the task is submitted again and completes, its attempt not charged"
n=$(run_jobs "$id" all | wc -l)
[ "$n" = 2 ]; ok $? "two jobs for the one attempt: the failed node's and the new one ($n)"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
done_testing
