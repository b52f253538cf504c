#!/bin/sh
# Cancel and timeout: `switchyard cancel` of a run with jobs running and
# queued scancels them, and leaves no job of the run queued or running; a
# task's timeout ends its job the same way.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
make_slurm_host
workflow long <<'WF'
workflow = {
  name = "slm::long";
  tasks = (
    { id = "a"; shell = "sleep 60"; },
    { id = "b"; shell = "sleep 60"; },
    { id = "q"; shell = "sleep 60"; sbatch_options = ["--begin=now+120"]; }
  );
};
WF
run submit slm::long
id=$(run_id)
"$SWITCHYARD" serve >"$dir/serve.log" 2>&1 &
pid=$!
wait_jobs "$id" RUNNING 2
ok $? "two jobs of the run run"
wait_jobs "$id" PENDING 1
ok $? "one is queued"
run cancel "$id"
rc_is 0 "the run is cancelled"
for _ in $(seq 1 100); do
    [ "$(jget "$id" 'r["status"]')" = Cancelled ] && break
    sleep 0.1
done
is Cancelled "$id" 'r["status"]' "the host ends it"
is '["Cancelled", "Cancelled", "Cancelled"]' "$id" '[t["a"]["status"], t["b"]["status"], t["q"]["status"]]' \
    "every task Cancelled once its job is confirmed gone"
n=$(run_jobs "$id" PD,R,CG,CF,S | wc -l)
[ "$n" = 0 ]; ok $? "no job of the run is queued or running (found $n)"
n=$(run_jobs "$id" all | grep -c CANCELLED)
[ "$n" = 3 ]; ok $? "the controller has the three jobs CANCELLED (found $n)"

# A timeout: the host's deadline cancels the job.
workflow slow <<'WF'
workflow = { name = "slm::slow"; tasks = ( { id = "t"; shell = "sleep 60"; timeout = "1500ms";
             retry = { attempts = 1; }; } ); };
WF
run submit slm::slow
id=$(run_id)
for _ in $(seq 1 100); do
    case "$(jget "$id" 'r["status"]')" in Failed|Completed) break ;; esac
    sleep 0.1
done
echo "# $(jget "$id" '[t["t"]["status"], t["t"].get("error")]')"
is true "$id" '"timed out" in (t["t"].get("error") or "").lower()' "a job past the task's timeout is timed out"
# The host records the timeout at its deadline; the scancel follows.
for _ in $(seq 1 50); do
    n=$(run_jobs "$id" PD,R,CG | wc -l)
    [ "$n" = 0 ] && break
    sleep 0.1
done
[ "$n" = 0 ]; ok $? "and its job is scancelled, not left running"
n=$(run_jobs "$id" all | grep -c CANCELLED)
[ "$n" = 1 ]; ok $? "the controller has it CANCELLED"
kill "$pid"; wait "$pid" 2>/dev/null
done_testing
