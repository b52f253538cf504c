#!/bin/sh
# The slurm plugin passes the conformance kit against the one-node
# cluster: tasks are batch jobs that echo their input, long tasks jobs
# that sleep, which cancel() scancels; resume() of an attempt never
# started submits it.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
KIT=$SY_BUILDDIR/switchyard-conformance
# A job takes the controller's scheduling pass to start (about a second
# on this cluster), where the kit's waits are sized for local work: twice
# them is enough with a 50 ms query.  The kit's stress loops run for a
# time budget times the scale, and its leak checks for a count of jobs,
# so the scale and the interval set this script's time (79.8 s with a
# scale of 3, a 100 ms query and one sbatch at a time; 67.3 s with these,
# the same checks, on one loaded 2-core machine).
SWITCHYARD_CONFORMANCE_TIME_SCALE=${SWITCHYARD_CONFORMANCE_TIME_SCALE:-2}
export SWITCHYARD_CONFORMANCE_TIME_SCALE
install -m 0755 "$SY_SLURM_PLUGIN" "$dir/slurm.so"
mkdir -p "$dir/jobs"
cat >"$dir/params.cfg" <<CFG
instance = { slurm_conf = "$SLURM_CONF"; working_dir = "$dir/jobs";
             poll_interval = "50ms"; max_requests_per_minute = 6000;
             max_in_flight = 8; max_submitting = 2; };
task = { command = ["cat"]; };
long_task = { shell = "sleep 60"; };
bad_instance = { working_dir = "relative/dir"; };
bad_task = { shell = "true"; partition = "nosuch"; };
input = "{\"n\": 1}";
CFG
out=$("$KIT" "$dir/slurm.so" --params "$dir/params.cfg" 2>&1)
rc=$?
printf "%s\n" "$out" | sed "s/^/# /"
rc_is 0 "the slurm plugin passes the kit"
hasnt "FAIL " "with no failed check"
has "PASS cancel-running" "a running job is scancelled by cancel()"
has "PASS resume" "resume() of an attempt never started submits it"
has "PASS destroy" "destroy() leaves no plugin thread behind"
n=$(slurm_jobs '%T' | grep -Ec '^(PENDING|RUNNING)$')
[ "$n" = 0 ]; ok $? "no job of the kit is left queued or running ($n)"
done_testing
