#!/bin/sh
# What the operator sees of a drained device in the metrics: a live
# `serve --metrics-file` on the fake NVML, a double-bit ECC error on the
# device a task runs on; the exposition then names the device drained,
# when, and for which error, through the plugin's own figures
# (switchyard_executor_plugin_value).
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
m="$host/var/metrics.prom"
mkdir -p "$host/var"
value() { awk -v k="$1" '$1 == k { print $2 }' "$m"; }
run submit gpu_ecc
rc_is 0 "the run is submitted"
"$SWITCHYARD" serve --exit-when-idle --metrics-file "$m" --metrics-interval 50ms \
    >"$host/serve.log" 2>&1 &
pid=$!
wait_for "$host/ran.txt" aaaa 20
ok $? "the task started on the first device"
printf 'ecc %s\n' "$(uuid 0)" >>"$host/events.txt"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ]; ok $? "serve finishes the run and exits 0 (got $rc)"
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
