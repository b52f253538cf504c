#!/bin/sh
# `kill -9` of `switchyard serve` with Jobs in flight, and a restart on
# the same store: the new host resumes the attempts (executor ABI 1.4),
# its creates answer 409 AlreadyExists and it follows those Jobs --
# exactly one Job per attempt, each task on its first attempt, the run
# Completed with the Jobs' outputs.  Then cancel: a task's timeout
# deletes its Job and its pod is gone.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-restart-XXXXXX")
chmod 0700 "$dir"
trap 'kill -9 "$srv" 2>/dev/null; stop_k8s; rm -rf "$dir"' EXIT
start_k8s
make_k8s_host

# The first three Jobs wait for $dir/go: they are surely running when the
# host is killed, and still running when the next host adopts them.
workflow adopt <<WF
workflow = {
  name = "k8s::adopt";
  retry = { attempts = 3; delay = 0; };
  tasks = (
    { id = "a"; command = ["sh", "-c", "until [ -e '$dir/go' ]; do sleep 0.05; done; echo '{\\"a\\": 1}'"]; },
    { id = "b"; command = ["sh", "-c", "until [ -e '$dir/go' ]; do sleep 0.05; done; echo '{\\"b\\": 2}'"]; },
    { id = "c"; command = ["sh", "-c", "until [ -e '$dir/go' ]; do sleep 0.05; done; echo '{\\"c\\": 3}'"]; },
    { id = "after"; after = ["a", "b"]; command = ["python3", "-c", "import json, os; d = json.loads(os.environ['SWITCHYARD_INPUT']); print(json.dumps({'sum': d['a'] + d['b']}))"]; }
  );
};
WF
run submit k8s::adopt
rc_is 0 "the run is submitted"
id=$(run_id)
"$SWITCHYARD" serve >"$dir/serve1.log" 2>&1 &
srv=$!
until_state 's["processes"] == 3'
kill -9 "$srv"
wait "$srv" 2>/dev/null
until_state 's["processes"] == 3'
ok $? "serve was killed with 3 Jobs running"
timeout 60 "$SWITCHYARD" serve --exit-when-idle --metrics-file "$dir/metrics.prom" \
    --metrics-interval 100ms >"$dir/serve2.log" 2>&1 &
srv=$!
until_state 's["jobs_conflicts"] == 3'
ok $? "the restarted host's 3 creates answered 409 (the Jobs exist)"
touch "$dir/go"
wait "$srv"
rc=$?
rc_is 0 "a restarted host finishes the run"
expect Completed 'r["status"]' "the run is Completed"
expect '[1, 1, 1, 1]' '[t[x]["attempts"] for x in ("a", "b", "c", "after")]' "every task on its first attempt: the running ones resumed, not retried"
expect '{"sum": 3}' 't["after"]["output"]' "the adopted Jobs' outputs were passed on"
kexpect '[1, 1, 1, 1]' 'sorted(s["jobs_by_name"].values())' "exactly one Job was created per attempt"
kexpect 3 's["jobs_conflicts"]' "the 3 running ones were adopted"
kexpect 4 's["processes_started"]' "no pod ran twice"
verify "$id"
out=$(cat "$dir/serve2.log")
has "exists; following it" "the host says it follows the existing Jobs"
out=$(grep 'plugin="kubernetes"' "$dir/metrics.prom")
has 'name="resumed"} 3' "the plugin's metrics count 3 resumed attempts"
has 'name="adoptions"} 3' "and 3 adoptions"
has 'name="creates"} 1' "and 1 create"
has 'name="jobs"} 0' "and no Job left"
has 'name="create_to_running_ms.count"}' "and the create-to-running latency"
run status "$id"
has "resumed" "status shows the resumed attempts"

workflow slow <<'WF'
workflow = {
  name = "k8s::slow";
  retry = { attempts = 1; };
  tasks = ( { id = "sleeper"; timeout = "1s"; command = ["sleep", "60"]; } );
};
WF
t0=$(date +%s)
run run k8s::slow
t1=$(date +%s)
rc_is 1 "a task past its timeout fails the run"
id=$(run_id)
expect '["Failed", true]' '[t["sleeper"]["status"], t["sleeper"]["error"].startswith("timed out after 1s")]' "the task timed out"
kexpect '[0, 0, 0]' '[s["jobs"], s["pods"], s["processes"]]' "cancel() deleted the Job, and its pod is gone (jobs, pods, processes)"
verify "$id"
[ $((t1 - t0)) -lt 10 ]; ok $? "without waiting for the pod ($((t1 - t0)) s)"
done_testing
