#!/bin/sh
# examples/gpu runs end to end on the fake NVML: a 2-GPU training task,
# four 1-GPU inference tasks after it, and a CPU task gathering them.
. "$SY_SRCDIR/tests/gpu/lib.sh"
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-gpuex-XXXXXX")
chmod 0700 "$host"
cp -R "$SY_SRCDIR/examples/gpu/." "$host/"
chmod -R u+w "$host"
mkdir -p "$host/plugins" "$host/var"
install -m 0755 "$GPU_PLUGIN" "$host/plugins/gpu.so"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
sed -i "s|plugin = \"gpu\";|plugin = \"gpu\"; nvml_library = \"$FAKE_NVML\";|" "$host/switchyard.cfg"
SWITCHYARD_PLUGIN_PATH="$host/plugins"
SWITCHYARD_CONFIG="$host/switchyard.cfg"
SY_FAKE_NVML_DEVICES="$host/fake-devices.txt"
# Long enough that the four inference tasks overlap on a loaded machine.
INFER_SECONDS=1
export SWITCHYARD_PLUGIN_PATH SWITCHYARD_CONFIG SY_FAKE_NVML_DEVICES INFER_SECONDS
cd "$host" || exit 1

run check
rc_is 0 "the example checks clean"
run route public::train::gpu_train --quiet
has gpu "its routing file sends gpu_ tasks to the gpu instance"
run run train
rc_is 0 "the example runs to completion"
id=$(run_id)
is 2 "$id" 'len(t["gpu_train"]["output"]["trained_on"].split(","))' "training had two GPUs"
is true "$id" 'set(t["gpu_train"]["output"]["trained_on"].split(",")) in ({"GPU-0a0a0a0a-0000-4000-8000-000000000000", "GPU-1b1b1b1b-0000-4000-8000-000000000001"}, {"GPU-2c2c2c2c-0000-4000-8000-000000000002", "GPU-3d3d3d3d-0000-4000-8000-000000000003"})' "on one island"
is 4 "$id" 'len({t["gather"]["output"]["score_%d" % i]["gpu"] for i in range(4)})' "the four inference tasks ran on four different GPUs at once"
out=$("$SY_SRCDIR/plugins/gpu/switchyard-gpu" drain var/gpu.control GPU-0a0a0a0a-0000-4000-8000-000000000000 test 2>&1)
rc=$?
rc_is 0 "the README's drain command works"
cd / && rm -rf "$host"
done_testing
