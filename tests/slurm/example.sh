#!/bin/sh
# examples/slurm runs on the test cluster: its settings with the cluster's
# partition and paths, its workflow without the GPUs the cluster lacks.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
cp -R "$SY_SRCDIR/examples/slurm/." "$dir/"
mkdir -p "$dir/plugins" "$dir/jobs"
install -m 0755 "$SY_THREAD_PLUGIN" "$dir/plugins/thread.so"
install -m 0755 "$SY_SLURM_PLUGIN" "$dir/plugins/slurm.so"
sed -i -e 's|partition = "[a-z]*"|partition = "debug"|' -e "s|/shared/switchyard/jobs|$dir/jobs|" \
    -e "s|plugin = \"slurm\";|plugin = \"slurm\"; slurm_conf = \"$SLURM_CONF\"; poll_interval = \"200ms\";|" \
    -e 's|poll_interval = "5s"; max_requests_per_minute = 30;||' \
    -e 's|^workflow_dirs|plugin_dirs = ["plugins"];\nworkflow_dirs|' "$dir/switchyard.cfg"
sed -i -e 's/gpus = [0-9]*; //' -e 's/ *mem = "32G";//' -e 's/ *cpus = 8;//' "$dir/workflows/train.cfg"
SWITCHYARD_CONFIG=$dir/switchyard.cfg
export SWITCHYARD_CONFIG
cd "$dir" || exit 1
run check
rc_is 0 "the example checks clean against the cluster"
run route public::train::gpu_train
has hpc_gpu "a gpu_ task goes to the gpu partition's instance"
run route public::sim::md::step
has hpc "a sim workflow goes to the batch instance"
run run train
rc_is 0 "the example runs to its end"
id=$(run_id)
is '[0.91, 0.88, 0.93, 0.9]' "$id" '[t["gather"]["output"]["score_%d" % i] for i in range(4)]' \
    "the gathered scores come from four GPU jobs"
n=$(run_jobs "$id" all | wc -l)
[ "$n" = 5 ]; ok $? "five of its tasks were batch jobs ($n)"
done_testing
