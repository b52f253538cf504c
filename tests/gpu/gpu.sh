#!/bin/sh
# The gpu plugin end to end through `switchyard run`, on the fake NVML:
# discovery, the devices' UUIDs in the command's environment, placement
# by model and memory, restriction to UUIDs, drain on Xid and ECC with
# the attempt requeued uncharged, manual drain and resume, no NVML.
. "$SY_SRCDIR/tests/gpu/lib.sh"
make_gpu_host

workflow envs <<'WF'
workflow = {
  name = "gpu_env";
  tasks = (
    { id = "one"; command = ["sh", "-c", "printf '{\"cuda\": \"%s\", \"nv\": \"%s\", \"sy\": \"%s\"}' \"$CUDA_VISIBLE_DEVICES\" \"$NVIDIA_VISIBLE_DEVICES\" \"$SWITCHYARD_GPU_UUIDS\""]; },
    { id = "two"; gpus = 2; gpu_model = "H100*"; command = ["sh", "-c", "printf '{\"cuda\": \"%s\"}' \"$CUDA_VISIBLE_DEVICES\""]; },
    { id = "a100"; gpu_model = "A100*"; gpu_memory = "30G"; command = ["sh", "-c", "printf '{\"cuda\": \"%s\"}' \"$CUDA_VISIBLE_DEVICES\""]; }
  );
};
WF
run run gpu_env
rc_is 0 "a workflow of GPU tasks completes"
id=$(run_id)
is gpu "$id" 't["one"]["executor"]' "the routing file sends gpu tasks to the gpu instance"
is true "$id" 't["one"]["output"]["cuda"].startswith("GPU-")' "CUDA_VISIBLE_DEVICES holds a UUID, not an index"
is true "$id" 't["one"]["output"]["cuda"] == t["one"]["output"]["nv"] == t["one"]["output"]["sy"]' "NVIDIA_VISIBLE_DEVICES and SWITCHYARD_GPU_UUIDS hold the same"
is "$(uuid 0),$(uuid 1)" "$id" 't["two"]["output"]["cuda"]' "a 2-GPU task gets both H100s, comma-separated"
is true "$id" 't["a100"]["output"]["cuda"] in ("'"$(uuid 2)"'", "'"$(uuid 3)"'")' "gpu_model picks an A100"
python3 - "$host/var/switchyard.db" "$id" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n = c.execute("SELECT count(DISTINCT idx) FROM processes WHERE run_id = ? AND pgid > 1"
              " AND start_time > 0", (sys.argv[2],)).fetchone()[0]
sys.exit(0 if n == 3 else 1)
PY
ok $? "each GPU command's process group was recorded with its attempt (ABI 1.2)"

workflow too_big <<'WF'
workflow = {
  name = "gpu_big";
  tasks = ( { id = "big"; gpus = 3; gpu_model = "H100*"; command = ["true"]; } );
};
WF
run check
rc_is 1 "check refuses a task that no set of devices here can hold"
has "too_big.cfg:3: error" "naming the workflow file and line"
has "the task needs 3 GPUs of model H100*, but this instance has 2 that match" "saying what it needs and what matches"
rm "$host/workflows/too_big.cfg"

workflow bad <<'WF'
workflow = {
  name = "gpu_bad";
  tasks = ( { id = "bad"; gpu_memory = "lots"; command = ["true"]; } );
};
WF
run check
rc_is 1 "check refuses a malformed gpu_memory"
has "bad.cfg:3: error" "naming the workflow file and line"
has "gpu_memory: must be a size" "and the parameter"
rm "$host/workflows/bad.cfg"

# --- drain on a critical Xid: the running attempt is requeued, uncharged --
workflow xid <<'WF'
workflow = {
  name = "gpu_xid";
  tasks = ( { id = "long"; gpus = 2; gpu_model = "H100*";
              command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; case \"$CUDA_VISIBLE_DEVICES\" in *aaaa*) sleep 30;; esac; echo '{\"done\": true}'"]; } );
};
WF
# Two H100s; an Xid 79 on the first while the task runs drains it.  Put a
# third H100 in so the requeued attempt has somewhere to go.
sed -i 's/^GPU-22222222-cccc-0000-0000-000000000000 A100-PCIE-40GB/GPU-22222222-cccc-0000-0000-000000000000 H100-SXM5-80GB/' "$host/devices.txt"
( wait_for "$host/ran.txt" aaaa 20 && printf 'xid %s 79\n' "$(uuid 0)" >>"$host/events.txt" ) &
inject=$!
run run gpu_xid
wait $inject
rc_is 0 "the workflow completes after the device broke under it"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["long"]["status"], t["long"]["attempts"]]' "the stopped attempt was not charged"
ran=$(cat "$host/ran.txt")
out=$ran
case "$(printf '%s\n' "$ran" | tail -n1)" in *aaaa*) ok 1 "the requeued attempt avoids the drained device";; *) ok 0 "the requeued attempt avoids the drained device";; esac
[ "$(wc -l <"$host/ran.txt")" -eq 2 ]; ok $? "the command ran twice"
note=$(python3 - "$host/var/switchyard.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (d,) in db.execute("select detail from events where kind = 'note'"):
    print(d)
PY
)
out=$note
has "Xid 79" "the attempt's note names the Xid"
has "$(uuid 0)" "and the device"
has "T" "and the time"

# An application Xid (13) leaves the device in service.
: >"$host/ran.txt"
sed -i 's/aaaa\*) sleep 30/bbbb*) sleep 2/' "$host/workflows/xid.cfg"
( wait_for "$host/ran.txt" bbbb 20 && printf 'xid %s 13\n' "$(uuid 1)" >>"$host/events.txt" ) &
inject=$!
run run gpu_xid
wait $inject
id=$(run_id)
is '["Completed", 1]' "$id" '[t["long"]["status"], t["long"]["attempts"]]' "an application Xid (13) does not stop the task"
[ "$(wc -l <"$host/ran.txt")" -eq 1 ]; ok $? "which ran once"

rm -rf "$host"
done_testing
