#!/bin/sh
# A slow controller: queries that take over 2 s double the interval, up to
# max_poll_interval, and a fast one brings it back; the metrics show the
# interval and the controller requests per minute.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
wrap_commands
real=$(command -v squeue)
cat >"$dir/bin/squeue" <<SH
#!/bin/sh
echo "\$(date +%s%3N) squeue \$*" >>"$dir/calls.log"
[ -e "$dir/slow" ] && sleep 2.1
exec "$real" "\$@"
SH
make_slurm_host "bin_dir = \"$dir/bin\"; max_poll_interval = \"800ms\"; max_requests_per_minute = 6000;"
workflow wait <<'WF'
workflow = { name = "slm::wait"; tasks = ( { id = "w"; shell = "sleep 9; echo '{\"w\": 1}'"; } ); };
WF
m=$dir/metrics.prom
metric() { sed -n "s/^switchyard_executor_plugin_value{executor=\"hpc\",plugin=\"slurm\",name=\"$1\"} //p" "$m" 2>/dev/null; }
touch "$dir/slow"
run submit slm::wait
id=$(run_id)
"$SWITCHYARD" serve --exit-when-idle --metrics-file "$m" --metrics-interval 50ms >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ "$(metric controller.poll_interval_ms)" = 800 ] && break; sleep 0.1; done
is_800=$(metric controller.poll_interval_ms)
[ "$is_800" = 800 ]; ok $? "slow queries back the interval off to max_poll_interval (got $is_800 ms)"
rm -f "$dir/slow"
for _ in $(seq 1 50); do [ "$(metric controller.poll_interval_ms)" = 200 ] && break; sleep 0.1; done
back=$(metric controller.poll_interval_ms)
[ "$back" = 200 ]; ok $? "a fast query brings it back to poll_interval (got $back ms)"
rpm=$(metric controller.requests_per_minute)
calls=$(wc -l <"$dir/calls.log")
echo "# requests per minute: $rpm; calls so far: $calls"
[ "${rpm:-0}" -ge 3 ] && [ "$rpm" -le "$calls" ]; ok $? "the metric counts the controller requests of the last minute"
wait "$pid"
rc=$?
rc_is 0 "the run ends"
is Completed "$id" 'r["status"]' "and completes: a slow controller is not a failure"
done_testing
