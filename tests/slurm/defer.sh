#!/bin/sh
# Not the task's failure: a job that ends NODE_FAIL is submitted again
# without charging an attempt.  (The controller refusing a job for
# MaxSubmitJobs, the other such case, needs slurmdbd: accounting.sh.)
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
make_slurm_host
workflow node <<WF
workflow = { name = "slm::node"; retry = { attempts = 1; };
  tasks = ( { id = "n"; shell = "if [ -e $dir/once ]; then echo '{\"n\": 2}'; else touch $dir/once; sleep 60; fi"; } ); };
WF
serve_bg slm::node
wait_jobs "$id" RUNNING 1
ok $? "the job runs"
# RUNNING comes before the batch script's first command; a node failed in
# between kills a job that never made $dir/once, and the job submitted
# again then takes the sleeping branch.
for _ in $(seq 1 300); do [ -e "$dir/once" ] && break; sleep 0.1; done
[ -e "$dir/once" ]; ok $? "its command started"
scontrol update NodeName=localhost State=DOWN Reason=sytest
for _ in $(seq 1 50); do run_jobs "$id" all | grep -q NODE_FAIL && break; sleep 0.1; done
run_jobs "$id" all | grep -q NODE_FAIL
ok $? "the node fails under it (NODE_FAIL)"
# The controller refuses RESUME while the node is still completing the
# failed job ("Invalid node state specified"), which under load lasts:
# asked again until the node is up, or the resubmitted job never runs.
for _ in $(seq 1 100); do
    scontrol update NodeName=localhost State=RESUME 2>/dev/null
    sinfo -h -n localhost -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)' && break
    sleep 0.2
done
serve_end
"$SWITCHYARD" status "$id" 2>&1 | sed 's/^/# the run at the end: /'
is '["Completed", 1, 2]' "$id" '[t["n"]["status"], t["n"]["attempts"], t["n"]["output"]["n"]]' \
    "the task is submitted again and completes, its attempt not charged"
n=$(run_jobs "$id" all | wc -l)
[ "$n" = 2 ]; ok $? "two jobs for the one attempt: the failed node's and the new one ($n)"
done_testing
