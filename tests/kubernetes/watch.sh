#!/bin/sh
# The plugin's two watches survive what API servers do to watches: closed
# by the server (restarted from the last resourceVersion), 410 Gone
# (relisted), while Jobs run; and the API's 429 is honoured: a create
# throttled with a short Retry-After is sent again after it, one with a
# long Retry-After completes the attempt DEFERRED; neither charges an
# attempt.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-watch-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s --bookmark-interval 0.2
make_k8s_host 'retry_wait = "1500ms";'

# Each Job waits for $dir/go, so the faults land while they all run.
workflow churn <<WF
workflow = {
  name = "k8s::churn";
  retry = { attempts = 1; };
  tasks = (
    { id = "a"; command = ["sh", "-c", "until [ -e '$dir/go' ]; do sleep 0.05; done; echo '{\"a\": 1}'"]; },
    { id = "b"; command = ["sh", "-c", "until [ -e '$dir/go' ]; do sleep 0.05; done; echo '{\"b\": 2}'"]; },
    { id = "c"; command = ["sh", "-c", "until [ -e '$dir/go' ]; do sleep 0.05; done; echo '{\"c\": 3}'"]; },
    { id = "d"; after = ["a"]; command = ["sh", "-c", "echo '{\"d\": 4}'"]; }
  );
};
WF
# The watches are closed once the Jobs run, then closed again with the next
# two watches answering 410 Gone, then the history expires under them.
"$SWITCHYARD" run k8s::churn >"$dir/run.out" 2>&1 &
runner=$!
until_state 's["processes"] == 3 and s["watches"] == 2'
ok $? "three Jobs run, two watches open"
k8s_fault '{"close_watches": true}'
until_state 's["watches_total"] >= 4 and s["watches"] == 2'
ok $? "the closed watches are opened again"
k8s_fault '{"gone": 2, "close_watches": true}'
until_state 's["gone_sent"] >= 2 and s["watches"] == 2'
ok $? "two watches answered 410 Gone, the watches open again"
k8s_fault '{"expire": true, "close_watches": true}'
until_state 's["watches_total"] >= 8 and s["watches"] == 2'
ok $? "and again after the history expired"
touch "$dir/go"
wait "$runner"
rc=$?
out=$(cat "$dir/run.out")
rc_is 0 "the run completes through closed watches and 410s"
id=$(run_id)
expect '[1, 1, 1, 1]' '[t[x]["attempts"] for x in "abcd"]' "each task on its first attempt"
expect '{"d": 4}' 't["d"]["output"]' "a task started after the faults completes too"
kexpect true '4 <= sum(1 for q in reqs if q["method"] == "GET" and "watch=" not in q["path"] and q["path"].split("?")[0].endswith(("/jobs", "/pods")))' "each 410 was followed by a list (2 first lists, 2 again at least)"
kexpect 4 's["jobs_created"]' "one Job per attempt"
# The server counts a watch closed when its thread next reads from the
# host's connection, after the host's exit: waited for here (on a loaded
# machine that took longer than the checks above), judged below.
until_state 's["watches"] == 0' || true
kexpect 0 's["watches"]' "no watch is left open after the host ends"
verify "$id"

workflow throttled <<'WF'
workflow = {
  name = "k8s::throttled";
  retry = { attempts = 1; };
  tasks = ( { id = "t"; command = ["sh", "-c", "echo '{\"t\": true}'"]; } );
};
WF
k8s_fault '{"throttle": {"count": 1, "prefix": "/apis/batch/v1", "method": "POST", "retry_after": 1}}'
t0=$(date +%s)
run run k8s::throttled
t1=$(date +%s)
rc_is 0 "a create throttled (Retry-After: 1) completes"
id=$(run_id)
expect '["Completed", 1]' '[t["t"]["status"], t["t"]["attempts"]]' "on its first attempt"
kexpect 1 's["throttled"]' "the server throttled the create"
verify "$id"
[ $((t1 - t0)) -ge 1 ]; ok $? "after waiting the Retry-After ($((t1 - t0)) s)"

k8s_fault '{"throttle": {"count": 1, "prefix": "/apis/batch/v1", "method": "POST", "retry_after": 2}}'
run run k8s::throttled
rc_is 0 "a create throttled past retry_wait completes"
has "deferred" "deferred to the host (Retry-After 2 s over retry_wait 1.5 s)"
id=$(run_id)
expect '["Completed", 1]' '[t["t"]["status"], t["t"]["attempts"]]' "and not charged an attempt"
verify "$id"

# A create whose answer is lost after the server made the Job: the retry
# answers 409 and the Job is adopted, not made twice; 503s are retried.
k8s_fault '{"drop": {"count": 1, "method": "POST", "prefix": "/apis/batch/v1", "after": true}}'
run run k8s::throttled
rc_is 0 "a create whose answer was lost completes"
id=$(run_id)
expect '["Completed", 1, {"t": true}]' '[t["t"]["status"], t["t"]["attempts"], t["t"]["output"]]' "on its first attempt, with the Job's output"
kexpect '[1, [1]]' "[s['jobs_conflicts'], [v for k, v in s['jobs_by_name'].items() if k.startswith('sy-$id-t-1-')]]" "its retry answered 409 and adopted the one Job, created once"
verify "$id"
k8s_fault '{"error": {"count": 2, "code": 503, "method": "POST", "prefix": "/apis/batch/v1"}}'
run run k8s::throttled
rc_is 0 "creates answered 503 twice are retried"
id=$(run_id)
expect '["Completed", 1]' '[t["t"]["status"], t["t"]["attempts"]]' "and the attempt completes, not charged"
verify "$id"
# A Job deleted behind the plugin's back while its watch is down (closed,
# then five 503s): the DELETED event is lost, and the relist finds the Job
# gone; the attempt fails saying so instead of waiting for its timeout.
workflow lost <<WF
workflow = {
  name = "k8s::lost";
  retry = { attempts = 1; };
  tasks = ( { id = "l"; command = ["sh", "-c", "until [ -e '$dir/never' ]; do sleep 0.05; done"]; } );
};
WF
"$SWITCHYARD" run k8s::lost >"$dir/lost.out" 2>&1 &
runner=$!
until_state 's["processes"] == 1 and s["watches"] == 2'
python3 - <<'PY'
import http.client, json, os, ssl
ctx = ssl.create_default_context(cafile=os.environ["SY_K8S_CA"])
c = http.client.HTTPSConnection("127.0.0.1", int(os.environ["SY_K8S_URL"].rsplit(":", 1)[1]), context=ctx)
auth = {"Authorization": "Bearer " + os.environ["SY_K8S_TOKEN"], "Content-Type": "application/json"}
def call(method, path, body=None):
    c.request(method, path, json.dumps(body) if body is not None else None, auth)
    return json.loads(c.getresponse().read())
call("POST", "/_test/faults", {"error": {"count": 4, "code": 503, "method": "GET",
                                         "prefix": "/apis/batch/v1/namespaces/sy/jobs"}, "close_watches": True})
name = [k for k in call("GET", "/_test/state")["jobs_by_name"] if "-l-1-" in k][0]
call("DELETE", "/apis/batch/v1/namespaces/sy/jobs/" + name)
PY
wait "$runner"
out=$(cat "$dir/lost.out")
id=$(run_id)
expect true '"was deleted by someone else" in t["l"]["error"]' "a Job deleted while the watch was down fails its attempt once the relist shows it gone"
verify "$id"

# 503s on the pods' path: the pod watch and the log read try again.
k8s_fault '{"error": {"count": 3, "code": 503, "method": "GET", "prefix": "/api/v1/namespaces/sy/pods"}}'
run run k8s::throttled
rc_is 0 "reads of pods and logs answered 503 are tried again"
id=$(run_id)
expect '["Completed", 1, {"t": true}]' '[t["t"]["status"], t["t"]["attempts"], t["t"]["output"]]' "the attempt completes with its output"
kexpect true 's["injected"] >= 5' "the server injected the errors"
verify "$id"
done_testing
