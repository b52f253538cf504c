#!/bin/sh
# The gpu plugin's devices under the operator and under faults, through
# `switchyard run` on the fake NVML: a double-bit ECC error drains a device
# and requeues its attempt uncharged; the operator drains and resumes by
# the control file (switchyard-gpu); an instance restricted to UUIDs uses
# only those; a machine without NVML has no device and says why; share =
# true puts tasks that fit in memory on one device.
. "$SY_SRCDIR/tests/gpu/lib.sh"
TOOL=$SY_SRCDIR/plugins/gpu/switchyard-gpu
make_gpu_host 'devices = ["GPU-00000000-aaaa-0000-0000-000000000000", "GPU-11111111-bbbb-0000-0000-000000000000"];'

# --- a double-bit ECC error ----------------------------------------------------
workflow ecc <<'WF'
workflow = {
  name = "gpu_ecc";
  tasks = ( { id = "t"; command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; case \"$CUDA_VISIBLE_DEVICES\" in *aaaa*) sleep 30;; esac; echo '{}'"]; } );
};
WF
( wait_for "$host/ran.txt" aaaa 20 && printf 'ecc %s\n' "$(uuid 0)" >>"$host/events.txt" ) &
inject=$!
run run gpu_ecc
wait $inject
rc_is 0 "a task whose device had a double-bit ECC error completes elsewhere"
has "double-bit ECC error" "the log says why the device was drained"
has "GPU 0: GPU-00000000-aaaa-0000-0000-000000000000 H100-SXM5-80GB, 81920 MiB, MIG off, island 0, Xid and ECC watched" \
    "each device's line says which errors can drain it"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["t"]["status"], t["t"]["attempts"]]' "the stopped attempt was not charged"
out=$(cat "$host/ran.txt")
has "bbbb" "the second attempt ran on the other device"

# A driver that does not report double-bit errors (no ECC), or no event at all.
SY_FAKE_NVML_REFUSE=2 run check
has "island 0, Xid watched, ECC not" "a GPU without ECC events is still watched for Xid, and says so"
SY_FAKE_NVML_REFUSE=10 run check
has "island 0, unwatched" "a GPU NVML reports nothing on is named unwatched"

# --- restriction to UUIDs ---------------------------------------------------------
: >"$host/ran.txt"
: >"$host/events.txt"
workflow many <<'WF'
workflow = {
  name = "gpu_many";
  tasks = (
    { id = "a"; command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; sleep 0.2; echo '{}'"]; },
    { id = "b"; command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; sleep 0.2; echo '{}'"]; },
    { id = "c"; command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; sleep 0.2; echo '{}'"]; },
    { id = "d"; command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; sleep 0.2; echo '{}'"]; }
  );
};
WF
run run gpu_many
rc_is 0 "four 1-GPU tasks complete on an instance restricted to two devices"
has "GPU 1: GPU-11111111" "the instance lists the devices it keeps"
hasnt "GPU-22222222" "and not the others"
out=$(sort -u "$host/ran.txt" | tr '\n' ' ')
[ "$out" = "$(uuid 0) $(uuid 1) " ]; ok $? "only the listed devices ran tasks"

# --- manual drain and resume ----------------------------------------------------
: >"$host/ran.txt"
"$TOOL" drain "$host/control.txt" "$(uuid 0)" fan replaced
rc=$?
rc_is 0 "switchyard-gpu drain appends to the control file"
out=$("$TOOL" show "$host/control.txt")
has "$(uuid 0) drained" "switchyard-gpu show lists the drained device"
run run gpu_many
rc_is 0 "the tasks complete with one device drained by the operator"
has "drained: by the operator: fan replaced" "the log names the operator's reason"
out=$(sort -u "$host/ran.txt" | tr '\n' ' ')
[ "$out" = "$(uuid 1) " ]; ok $? "no task ran on the drained device"
: >"$host/ran.txt"
"$TOOL" resume "$host/control.txt" "$(uuid 0)"
run run gpu_many
has "resumed" "resume puts the device back"
out=$(sort -u "$host/ran.txt" | tr '\n' ' ')
[ "$out" = "$(uuid 0) $(uuid 1) " ]; ok $? "and tasks run on it again"
echo "frobnicate $(uuid 0)" >>"$host/control.txt"
run run gpu_many
has "control.txt:3: expected \"drain UUID [reason]\"" "a bad control line is reported with its file and line"
out=$("$TOOL" explode "$host/control.txt" 2>&1)
has "usage: switchyard-gpu" "the tool explains its usage"

# --- share = true ------------------------------------------------------------------
cleanup_host
make_gpu_host 'share = true; devices = ["GPU-00000000-aaaa-0000-0000-000000000000"];'
workflow share <<'WF'
workflow = {
  name = "gpu_share";
  tasks = (
    { id = "a"; gpu_memory = "30G"; command = ["sh", "-c", "touch \"$SWITCHYARD_BASE_DIR/../a\"; n=0; while [ ! -f \"$SWITCHYARD_BASE_DIR/../b\" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done; [ -f \"$SWITCHYARD_BASE_DIR/../b\" ] && echo '{\"together\": true}'"]; },
    { id = "b"; gpu_memory = "30G"; command = ["sh", "-c", "touch \"$SWITCHYARD_BASE_DIR/../b\"; n=0; while [ ! -f \"$SWITCHYARD_BASE_DIR/../a\" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done; [ -f \"$SWITCHYARD_BASE_DIR/../a\" ] && echo '{\"together\": true}'"]; }
  );
};
WF
run run gpu_share
rc_is 0 "two tasks of 30G share one 80G device"
id=$(run_id)
is '[true, true]' "$id" '[t["a"]["output"]["together"], t["b"]["output"]["together"]]' "and ran at the same time"

# --- no NVML ---------------------------------------------------------------------------
cleanup_host
make_gpu_host
sed -i "s|nvml_library = \"[^\"]*\"|nvml_library = \"$host/no-such-libnvidia-ml.so.1\"|" "$host/switchyard.cfg"
workflow one <<'WF'
workflow = { name = "gpu_one"; tasks = ( { id = "t"; command = ["true"]; } ); };
WF
run check
rc_is 0 "a machine without NVML still checks clean"
has "no GPU: cannot load $host/no-such-libnvidia-ml.so.1" "the instance says why it has no device"
run run gpu_one
rc_is 1 "a GPU task fails there"
has "refused the task: no GPU on this instance: cannot load" "its error says there is no GPU, and why"
has " Failed in " "and the run ends Failed at once, not left Running"
id=$(run_id)
is Failed "$id" 't["t"]["status"]' "the store says the task Failed"
SY_FAKE_NVML_INIT=fail
export SY_FAKE_NVML_INIT
sed -i "s|nvml_library = \"[^\"]*\"|nvml_library = \"$FAKE_NVML\"|" "$host/switchyard.cfg"
run check
has "no GPU: nvmlInit: Driver Not Loaded" "a driver that is not loaded is named as the reason"
unset SY_FAKE_NVML_INIT

cleanup_host
done_testing
