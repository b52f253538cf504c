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
# until_state EXPR: waits (10 s at most) for a Python expression over the
# server's state to hold.
until_state() {
    i=0
    while [ "$(k8s_state "$1")" != true ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
# The watches are closed once the Jobs run, then closed again with the next
# two watches answering 410 Gone, then the history expires under them.
"$SWITCHYARD" run k8s::churn >"$dir/run.out" 2>&1 &
runner=$!
until_state 's["processes"] == 3 and s["watches"] == 2'
before=$(k8s_state 's["watches_total"]')
k8s_fault '{"close_watches": true}'
until_state "s[\"watches_total\"] >= $before + 2 and s[\"watches\"] == 2"
k8s_fault '{"gone": 2, "close_watches": true}'
until_state 's["gone_sent"] >= 2 and s["watches"] == 2'
k8s_fault '{"expire": true, "close_watches": true}'
until_state "s[\"watches_total\"] >= $before + 6 and s[\"watches\"] == 2"
touch "$dir/go"
wait "$runner"
rc=$?
out=$(cat "$dir/run.out")
rc_is 0 "the run completes through closed watches and 410s"
id=$(run_id)
is '[1, 1, 1, 1]' "$id" '[t[x]["attempts"] for x in "abcd"]' "each task on its first attempt"
is '{"d": 4}' "$id" 't["d"]["output"]' "a task started after the faults completes too"
after=$(k8s_state 's["watches_total"]')
[ "$after" -ge $((before + 4)) ]; ok $? "the closed watches were opened again ($before before, $after after)"
n=$(k8s_state 's["gone_sent"]')
[ "$n" -ge 2 ]; ok $? "two watches were answered 410 Gone ($n)"
n=$(k8s_requests 'q["method"] == "GET" and "watch=" not in q["path"] and q["path"].split("?")[0].endswith("/jobs")')
[ "$n" -ge 2 ]; ok $? "the Jobs were listed again after a 410 ($n lists)"
n=$(k8s_state 's["jobs_created"]')
[ "$n" = 4 ]; ok $? "one Job per attempt ($n created)"
n=$(k8s_state 's["watches"]')
[ "$n" = 0 ]; ok $? "no watch is left open after the host ends ($n)"

workflow throttled <<'WF'
workflow = {
  name = "k8s::throttled";
  retry = { attempts = 1; };
  tasks = ( { id = "t"; command = ["sh", "-c", "echo '{\"t\": true}'"]; } );
};
WF
k8s_fault '{"throttle": {"count": 2, "prefix": "/apis/batch/v1", "method": "POST", "retry_after": 1}}'
t0=$(date +%s)
run run k8s::throttled
rc_is 0 "a create throttled twice (Retry-After: 1) completes"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["t"]["status"], t["t"]["attempts"]]' "on its first attempt"
t1=$(date +%s)
[ $((t1 - t0)) -ge 2 ]; ok $? "after waiting the Retry-After twice ($((t1 - t0)) s)"
n=$(k8s_state 's["throttled"]')
[ "$n" = 2 ]; ok $? "the server throttled 2 creates ($n)"

k8s_fault '{"throttle": {"count": 1, "prefix": "/apis/batch/v1", "method": "POST", "retry_after": 2}}'
run run k8s::throttled
rc_is 0 "a create throttled past retry_wait completes"
has "deferred" "deferred to the host (Retry-After 2 s over retry_wait 1.5 s)"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["t"]["status"], t["t"]["attempts"]]' "and not charged an attempt"
done_testing
