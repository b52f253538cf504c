#!/bin/sh
# A job squeue does not list (the controller forgot it after MinJobAge,
# with no slurmdbd for sacct) is not a failed job: while it runs, `scontrol
# show job` says so; once it ended, the exit status file it wrote says how.
# sacct, asked first, answers that there is no accounting: the plugin
# stops asking it.
. "$SY_SRCDIR/tests/slurm/lib.sh"
slurm_test_begin
wrap_commands
real=$(command -v squeue)
cat >"$dir/bin/squeue" <<SH
#!/bin/sh
echo "\$(date +%s%3N) squeue \$*" >>"$dir/calls.log"
[ -e "$dir/hide" ] && exit 0
exec "$real" "\$@"
SH
make_slurm_host "bin_dir = \"$dir/bin\"; max_requests_per_minute = 6000;"
workflow hidden <<'WF'
workflow = { name = "slm::hidden"; retry = { attempts = 1; };
  tasks = ( { id = "s"; shell = "sleep 2; echo '{\"s\": 1}'"; },
            { id = "f"; shell = "sleep 2; echo gone wrong >&2; exit 5"; } ); };
WF
touch "$dir/hide"
run run slm::hidden
rc_is 1 "a run whose jobs squeue never lists ends"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["s"]["status"], t["s"]["output"]["s"]]' "a job that ended unlisted completes by its exit status file"
is true "$id" '"exited with status 5" in t["f"]["error"] and "gone wrong" in t["f"]["error"]' "a failed one names its exit code and stderr"
n=$(grep -c ' scontrol ' "$dir/calls.log")
[ "$n" -ge 2 ]; ok $? "while they ran unlisted, scontrol was asked after them ($n) and they were not failed"
n=$(grep -c ' sacct ' "$dir/calls.log")
[ "$n" = 1 ]; ok $? "sacct was asked once: without slurmdbd it says there is no accounting, and is not asked again ($n)"
done_testing
