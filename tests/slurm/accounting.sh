#!/bin/sh
# With slurmdbd (MariaDB behind it), one cluster for every check (its
# database is the slow part of the start):
#   - a job that squeue no longer lists and that left no exit status is
#     looked up in accounting, one sacct for all of an instance's such
#     jobs per interval; sacct lagging behind is "not found yet", asked
#     again until lost_after, never "failed";
#   - accounting's TIMEOUT and OUT_OF_MEMORY are named (sacct's answer
#     rewritten for two jobs: this cluster cannot produce them quickly,
#     see docs/configuration.md);
#   - a job preempted by a higher-tier partition's job (PREEMPTED, real)
#     is submitted again without charging an attempt;
#   - the association's MaxSubmitJobs (sacctmgr) refusing jobs is
#     backpressure: every task completes on its first attempt.
. "$SY_SRCDIR/tests/slurm/lib.sh"
SY_SLURM_ACCOUNTING=1
slurm_test_begin
wrap_commands
# squeue never lists the jobs of tasks named *_hid.  sacct lists nothing
# in its first two answers (it lags), never the job of task gone_hid, and
# says TIMEOUT for time_hid's job and OUT_OF_MEMORY for oom_hid's.
real_squeue=$(command -v squeue)
real_sacct=$(command -v sacct)
cat >"$dir/bin/squeue" <<SH
#!/bin/sh
echo "\$(date +%s%3N) squeue \$*" >>"$dir/calls.log"
out=\$("$real_squeue" "\$@") || exit \$?
printf '%s\n' "\$out" | grep -v '_hid-'
exit 0
SH
cat >"$dir/bin/sacct" <<SH
#!/bin/sh
echo "\$(date +%s%3N) sacct \$*" >>"$dir/calls.log"
[ "\$(grep -c ' sacct ' "$dir/calls.log")" -le 2 ] && exit 0
ids=\$("$real_squeue" -h -t all -o '%j %i')
id_of() { printf '%s\n' "\$ids" | awk -v t="\$1" '\$1 ~ "-" t "_hid-" { print \$2 }'; }
out=\$("$real_sacct" "\$@") || exit \$?
printf '%s\n' "\$out" | grep -v "^\$(id_of gone)|" |
    sed "s/^\$(id_of time)|[A-Z_]*\( by [0-9]*\)*|/\$(id_of time)|TIMEOUT|/; s/^\$(id_of oom)|[A-Z_]*\( by [0-9]*\)*|/\$(id_of oom)|OUT_OF_MEMORY|/"
exit 0
SH
chmod 0755 "$dir/bin/sacct"
make_slurm_host "bin_dir = \"$dir/bin\"; lost_after = \"3s\"; submit_retry = \"300ms\"; max_requests_per_minute = 6000;"
workflow acct <<'WF'
workflow = { name = "slm::acct"; retry = { attempts = 1; };
  tasks = ( { id = "ended_hid"; shell = "sleep 100"; },
            { id = "gone_hid"; shell = "sleep 100"; },
            { id = "time_hid"; shell = "sleep 100"; },
            { id = "oom_hid"; shell = "sleep 100"; } ); };
WF
serve_bg slm::acct
wait_jobs "$id" RUNNING 4
ok $? "the four jobs run"
# Killed from outside: no exit status file, and squeue does not list them.
scancel $(squeue -h -o %i)
serve_end
is true "$id" '"CANCELLED outside switchyard" in t["ended_hid"]["error"]' \
    "a job squeue does not list, ended with no exit status, ends by accounting's state"
is true "$id" '"TIMEOUT" in t["time_hid"]["error"] and t["time_hid"]["status"] != "Completed"' \
    "accounting's TIMEOUT is named"
is true "$id" '"OUT_OF_MEMORY" in t["oom_hid"]["error"]' "and its OUT_OF_MEMORY"
is true "$id" '"(lost)" in t["gone_hid"]["error"] and "accounting (sacct)" in t["gone_hid"]["error"]' \
    "a job neither squeue nor sacct lists fails as lost once lost_after passed"
ns=$(grep -c ' sacct ' "$dir/calls.log")
nq=$(grep -c ' squeue ' "$dir/calls.log")
[ "$ns" -ge 3 ] && [ "$ns" -le "$nq" ]
ok $? "sacct asked again while it lagged, never more than once per query ($ns sacct, $nq squeue)"
grep ' sacct ' "$dir/calls.log" | grep -q -- '-j [0-9]*,[0-9]*,[0-9]'
ok $? "one sacct names several jobs"

# PREEMPTED, for real: a job of the partition `low` (PriorityTier 1) on
# both CPUs gives way to one of `high` (PriorityTier 10), PreemptMode
# CANCEL.
workflow pre <<WF
workflow = { name = "slm::pre"; retry = { attempts = 1; };
  tasks = ( { id = "p"; partition = "low"; cpus = 2;
              shell = "if [ -e $dir/pre_once ]; then echo '{\"p\": 2}'; else touch $dir/pre_once; sleep 100; fi"; } ); };
WF
serve_bg slm::pre
wait_jobs "$id" RUNNING 1
ok $? "the low-tier job runs"
# As in defer.sh: preempted before its first command, the job submitted
# again would take the sleeping branch.
for _ in $(seq 1 300); do [ -e "$dir/pre_once" ] && break; sleep 0.1; done
[ -e "$dir/pre_once" ]; ok $? "its command started"
sbatch --parsable --partition=high --cpus-per-task=2 --wrap 'sleep 1' >/dev/null
serve_end
is '["Completed", 1, 2]' "$id" '[t["p"]["status"], t["p"]["attempts"], t["p"]["output"]["p"]]' \
    "a preempted job is submitted again and completes, its attempt not charged"
out=$(run_jobs "$id" all)
has "PREEMPTED" "the first job ended PREEMPTED"

# MaxSubmitJobs on the association: the controller refuses a second job
# while one is queued or running; the refusal defers the task.
sacctmgr -i modify user root set MaxSubmitJobs=1 >/dev/null
workflow limit <<'WF'
workflow = { name = "slm::limit"; retry = { attempts = 1; };
  tasks = ( { id = "a"; shell = "echo '{\"a\": 1}'"; },
            { id = "b"; shell = "echo '{\"b\": 1}'"; },
            { id = "c"; shell = "echo '{\"c\": 1}'"; } ); };
WF
: >"$dir/calls.log"
run run slm::limit
rc_is 0 "three tasks under MaxSubmitJobs=1 complete"
id=$(run_id)
is '[1, 1, 1]' "$id" '[t[k]["attempts"] for k in "abc"]' "each on its first attempt: the refusals charged none"
n=$(grep -c ' sbatch ' "$dir/calls.log")
[ "$n" -gt 3 ]; ok $? "the controller refused some submits ($n sbatch for 3 jobs)"
done_testing
