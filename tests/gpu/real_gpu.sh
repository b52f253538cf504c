#!/bin/sh
# On a machine with an NVIDIA GPU: the gpu plugin with the real NVML runs
# a task that prints `nvidia-smi -L`, and the UUID in CUDA_VISIBLE_DEVICES
# names a device the driver lists and resolves (`nvidia-smi -i UUID`).  Skipped,
# with the reason, everywhere else.
. "$SY_SRCDIR/tests/gpu/lib.sh"
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "1..0 # SKIP no NVIDIA GPU here: nvidia-smi is not installed"
    exit 0
fi
listed=$(nvidia-smi -L 2>/dev/null)
case "$listed" in
*UUID:*) ;;
*) echo "1..0 # SKIP no NVIDIA GPU here: nvidia-smi -L lists none"; exit 0 ;;
esac
make_gpu_host
# The real library, not the fake.
sed -i '/nvml_library = /d' "$host/switchyard.cfg"
workflow smi <<'WF'
workflow = {
  name = "gpu_smi";
  tasks = ( { id = "smi"; command = ["sh", "-c", "l=$(nvidia-smi -L 2>&1 | tr '\\n' ' ') && q=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i \"$CUDA_VISIBLE_DEVICES\" 2>&1) || { echo \"nvidia-smi: $l $q\" >&2; exit 1; }; printf '{\"given\": \"%s\", \"smi\": \"%s\", \"query\": \"%s\", \"uuids\": \"%s\", \"nvidia\": \"%s\"}' \"$CUDA_VISIBLE_DEVICES\" \"$l\" \"$q\" \"$SWITCHYARD_GPU_UUIDS\" \"$NVIDIA_VISIBLE_DEVICES\""]; } );
};
WF
run run gpu_smi
rc_is 0 "a task on a real GPU completes"
has "GPU 0: GPU-" "the instance found the GPU through NVML"
id=$(run_id)
given=$(jget "$id" 't["smi"]["output"]["given"]')
case "$given" in GPU-*) ok 0 "it was given a UUID: $given" ;; *) ok 1 "it was given a UUID" ;; esac
is true "$id" 't["smi"]["output"]["given"] in t["smi"]["output"]["smi"]' "nvidia-smi -L, run by the task, lists the device it was given"
is true "$id" 't["smi"]["output"]["query"] == t["smi"]["output"]["given"]' "the driver resolves the UUID in CUDA_VISIBLE_DEVICES to that device"
is true "$id" 't["smi"]["output"]["uuids"] == t["smi"]["output"]["nvidia"] == t["smi"]["output"]["given"]' \
    "SWITCHYARD_GPU_UUIDS and NVIDIA_VISIBLE_DEVICES name the same device"
out=$listed
has "$given" "and the driver lists that UUID"
cleanup_host
done_testing
