#!/bin/sh
# What the operator sees of a drained device: a live `serve
# --metrics-file` with the admin API on the fake NVML, a double-bit ECC
# error on the device a task runs on; the Prometheus exposition then names
# the device drained, when, and for which error, through the plugin's own
# figures (switchyard_executor_plugin_value), and so does `switchyard
# --host URL plugins -v` asked of the serving host.
. "$SY_SRCDIR/tests/gpu/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP under valgrind: a live serve on a timer; the sanitizer pass runs it"
    exit 0
fi
make_gpu_host 'devices = ["GPU-00000000-aaaa-0000-0000-000000000000", "GPU-11111111-bbbb-0000-0000-000000000000"];'
workflow ecc <<'WF'
workflow = {
  name = "gpu_ecc";
  tasks = ( { id = "t"; command = ["sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" >>\"$SWITCHYARD_BASE_DIR/../ran.txt\"; case \"$CUDA_VISIBLE_DEVICES\" in *aaaa*) sleep 30;; esac; echo '{}'"]; } );
};
WF
cat >>"$host/switchyard.cfg" <<'CFG'
admin = { listen = "127.0.0.1:0"; };
CFG
m="$host/var/metrics.prom"
mkdir -p "$host/var"
value() { awk -v k="$1" '$1 == k { print $2 }' "$m"; }
run submit gpu_ecc
rc_is 0 "the run is submitted"
"$SWITCHYARD" serve --metrics-file "$m" --metrics-interval 50ms >"$host/serve.log" 2>&1 &
pid=$!
wait_for "$host/ran.txt" aaaa 20
ok $? "the task started on the first device"
printf 'ecc %s\n' "$(uuid 0)" >>"$host/events.txt"
wait_for "$host/ran.txt" bbbb 20
where=$(sed -n 's/.*admin: listening on \([^ ]*\).*/\1/p' "$host/serve.log" | head -n1)
for _ in $(seq 1 100); do
    [ "$(jget 1 'r["status"]')" = Completed ] && break
    sleep 0.05
done
is Completed 1 'r["status"]' "the run completes on the other device"
run --host "http://$where" plugins -v
rc_is 0 "plugins -v asks the serving host"
has "gpu              gpu          1.0.0      ok" "it lists the gpu instance, healthy"
has "    device.0.drained                         1" "with device 0 drained"
has "    device.0.ecc                             1" "for a double-bit ECC error"
has "    device.0.drained_at " "and when"
has "    device.1.drained                         0" "device 1 in service"
run --host "http://$where" plugins --json
is_json=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([i["metrics"]["device.0.drained"] for i in d["instances"] if i["name"] == "gpu"])')
[ "$is_json" = "[1]" ]; ok $? "and --json carries the same figures ($is_json)"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ]; ok $? "serve drains and exits 0 (got $rc)"
label='executor="gpu",plugin="gpu"'
[ "$(value "switchyard_executor_plugin_value{$label,name=\"device.0.drained\"}")" = 1 ]
ok $? "the metrics say device 0 is drained"
[ "$(value "switchyard_executor_plugin_value{$label,name=\"device.0.ecc\"}")" = 1 ]
ok $? "for a double-bit ECC error"
at=$(value "switchyard_executor_plugin_value{$label,name=\"device.0.drained_at\"}")
now=$(date +%s)
[ -n "$at" ] && [ "$at" -gt $((now - 120)) ] && [ "$at" -le "$now" ]
ok $? "and when (drained_at $at, now $now)"
[ "$(value "switchyard_executor_plugin_value{$label,name=\"device.1.drained\"}")" = 0 ]
ok $? "the other device is in service"
[ "$(value "switchyard_executor_plugin_value{$label,name=\"devices_drained\"}")" = 1 ]
ok $? "one device drained in all"
if command -v promtool >/dev/null 2>&1; then
    out=$(promtool check metrics <"$m" 2>&1)
    ok $? "promtool check metrics accepts it"
fi
cleanup_host
done_testing
