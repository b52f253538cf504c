#!/bin/sh
# Following without hammering: 24 jobs are followed by ONE squeue per
# interval that names all of them, never one per job, and
# max_requests_per_minute bounds the interval from below; max_in_flight
# bounds the jobs queued or running at once.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
wrap_commands
make_slurm_host "bin_dir = \"$dir/bin\"; max_requests_per_minute = 120; max_in_flight = 12;"
python3 - "$dir/workflows/many.cfg" <<'PY'
import sys
rows = ',\n'.join(f'    {{ id = "j{i}"; shell = "sleep 1; echo \'{{\\"i\\": {i}}}\'"; }}' for i in range(24))
open(sys.argv[1], 'w').write('workflow = {\n  name = "slm::many";\n  tasks = (\n' + rows + '\n  );\n};\n')
PY
run submit slm::many
id=$(run_id)
t0=$(date +%s%3N)
"$SWITCHYARD" serve --exit-when-idle >"$dir/serve.log" 2>&1 &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
    n=$(run_jobs "$id" PD,R,CF | wc -l)
    [ "$n" -gt "$peak" ] && peak=$n
    sleep 0.2
done
wait "$pid"
rc=$?
t1=$(date +%s%3N)
rc_is 0 "the host runs the 24 jobs"
is 24 "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Completed")' "every task Completed"
echo "# peak jobs queued or running: $peak"
[ "$peak" -le 12 ] && [ "$peak" -ge 2 ]; ok $? "max_in_flight 12 bounds the jobs queued or running ($peak)"
q=$(grep -c ' squeue ' "$dir/calls.log")
s=$(grep -c ' sbatch ' "$dir/calls.log")
ms=$((t1 - t0))
echo "# $s sbatch, $q squeue in $ms ms"
[ "$s" = 24 ]; ok $? "one sbatch per job"
# 120 a minute: at most one query each 500 ms, whatever the number of jobs.
[ "$q" -ge 2 ] && [ "$q" -le $((ms / 500 + 2)) ]; ok $? "one query per interval ($q in $ms ms), not one per job"
wide=$(awk '/ squeue / { n = split($0, a, ","); if (n > m) m = n } END { print m }' "$dir/calls.log")
[ "$wide" -ge 12 ]; ok $? "one query names all the jobs in flight ($wide names)"
gaps=$(awk '/ squeue / { if (p && $1 - p < 450) bad++; p = $1 } END { print bad + 0 }' "$dir/calls.log")
[ "$gaps" = 0 ]; ok $? "queries never come closer than max_requests_per_minute allows"
done_testing
