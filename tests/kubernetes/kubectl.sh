#!/bin/sh
# The loopback Kubernetes API server (tests/kubernetes/server.py) speaks the
# real API: kubectl (Debian's kubernetes-client, 1.20, or any kubectl on
# PATH; $SY_KUBECTL names another) creates a Job from a JSON manifest,
# waits for it, reads its log, lists it by label, watches it, deletes it,
# meets AlreadyExists and is refused with a wrong token; a client
# certificate is accepted in place of the token.  Nothing of switchyard
# runs here, so the valgrind pass skips it.
. "$SY_SRCDIR/tests/kubernetes/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP no switchyard program runs here; the sanitizer pass runs it"
    exit 0
fi
KUBECTL=${SY_KUBECTL:-$(command -v kubectl)}
if [ ! -x "$KUBECTL" ] || ! command -v openssl >/dev/null 2>&1; then
    [ -n "${CI:-}" ] && { echo "Bail out! kubectl or openssl is missing (Debian: kubernetes-client, openssl)"; exit 1; }
    echo "1..0 # SKIP kubectl or openssl is not installed (Debian: kubernetes-client, openssl)"
    exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-XXXXXX")
chmod 0700 "$dir"
watcher=
trap '[ -n "$watcher" ] && kill $watcher 2>/dev/null; stop_k8s; rm -rf "$dir"' EXIT
k8s_certs
start_k8s --client-ca "$dir/client-ca.pem"
k() { out=$(timeout 30 "$KUBECTL" --request-timeout=20s "$@" 2>&1); rc=$?; }

# job NAME SHELL-COMMAND [LABEL]: a Job manifest in $dir/NAME.json.
job() {
    python3 - "$dir/$1.json" "$1" "$2" "${3:-x}" <<'PY'
import json, sys
path, name, cmd, app = sys.argv[1:]
json.dump({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "labels": {"app": app, "tier": "batch"}},
           "spec": {"backoffLimit": 0, "template": {
               "metadata": {"labels": {"app": app}},
               "spec": {"restartPolicy": "Never", "containers": [{
                   "name": "main", "image": "debian:12", "command": ["sh", "-c"], "args": [cmd],
                   "workingDir": sys.argv[1].rsplit("/", 1)[0],
                   "env": [{"name": "GREETING", "value": "hi"}]}]}}}}, open(path, "w"))
PY
}

"$KUBECTL" version --client >"$dir/version" 2>&1
echo "# $(head -n1 "$dir/version")"

# A watch of every job event, from before the first create.
timeout 20 "$KUBECTL" get jobs --watch --output-watch-events -o json >"$dir/watch.out" 2>"$dir/watch.err" &
watcher=$!
i=0
while [ "$(k8s_state 's["verbs"].get("watch jobs", 0)')" = 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

job hello 'echo "{\"greeting\": \"$GREETING\", \"cwd\": \"$(pwd)\"}"; echo to-stderr >&2'
k create -f "$dir/hello.json"
rc_is 0 "kubectl create -f makes the Job"
has 'job.batch/hello created' "and says so"
k wait --for=condition=complete job/hello --timeout=30s
rc_is 0 "kubectl wait sees its Complete condition"
k logs job/hello
has "{\"greeting\": \"hi\", \"cwd\": \"$dir\"}" "kubectl logs shows the command's output, with its env and workingDir"
has "to-stderr" "stderr is in the log too"
k get jobs -l app=x -o json
python3 - "$out" <<'PY'
import json, sys
items = json.loads(sys.argv[1])["items"]
assert [j["metadata"]["name"] for j in items] == ["hello"], items
st = items[0]["status"]
assert st["succeeded"] == 1 and "active" not in st, st
assert [c["type"] for c in st["conditions"] if c["status"] == "True"][-1] == "Complete", st
assert st["startTime"] and st["completionTime"], st
PY
ok $? "kubectl get jobs -l app=x -o json lists it, succeeded, Complete"
k get jobs -l 'app in (y,z),tier=batch' -o name
[ $rc -eq 0 ] && [ -z "$out" ]; ok $? "a set-based selector that does not match lists nothing"
k get jobs -l 'app in (x,y),tier=batch' -o name
[ "$out" = job.batch/hello ]; ok $? "a set-based selector with an equality lists it"
k get pods -l job-name=hello -o jsonpath='{.items[0].status.phase} {.items[0].status.containerStatuses[0].state.terminated.reason} {.items[0].metadata.ownerReferences[0].kind}'
[ "$out" = "Succeeded Completed Job" ]; ok $? "its pod Succeeded, terminated Completed, owned by the Job ($out)"

k create -f "$dir/hello.json"
[ $rc -ne 0 ]; ok $? "a second create of the same Job fails"
has "(AlreadyExists)" "with AlreadyExists"
has 'jobs.batch "hello" already exists' "in the API server's words"
[ "$(k8s_state '[s["jobs_created"], s["jobs_conflicts"]]')" = "[1, 1]" ]
ok $? "the server counted one create and one conflict"

job fails 'echo failing; exit 3'
k create -f "$dir/fails.json"
k wait --for=condition=failed job/fails --timeout=30s
rc_is 0 "a command that exits 3 fails the Job (backoffLimit 0)"
k get job fails -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}'
[ "$out" = BackoffLimitExceeded ]; ok $? "with reason BackoffLimitExceeded ($out)"
k get pods -l job-name=fails -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode} {.items[0].status.containerStatuses[0].state.terminated.reason}'
[ "$out" = "3 Error" ]; ok $? "its container terminated with exit code 3, reason Error ($out)"
k get job fails
printf '%s\n' "$out" | grep -Eq '^fails +Failed +0/1 '; ok $? "kubectl get job prints the server's table: Failed, 0/1"
k get pods -l job-name=fails
printf '%s\n' "$out" | grep -Eq '^fails-[a-z0-9]{5} +0/1 +Error +0 '; ok $? "kubectl get pods prints its pod: 0/1, Error, 0 restarts"

k delete job hello
rc_is 0 "kubectl delete job works"
has 'job.batch "hello" deleted' "and says so"
k get job hello
has "(NotFound)" "the Job is gone"
i=0
while k get pods -l job-name=hello -o name && [ -n "$out" ] && [ $i -lt 50 ]; do
    sleep 0.1; i=$((i + 1))
done
[ -z "$out" ]; ok $? "its pod went with it (Background)"

sleep 0.5
kill $watcher 2>/dev/null
wait $watcher 2>/dev/null
watcher=
python3 - "$dir/watch.out" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, i, events = json.JSONDecoder(), 0, []
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    obj, i = dec.raw_decode(text, i)
    events.append((obj["type"], obj["object"]["metadata"]["name"]))
hello = [t for t, n in events if n == "hello"]
assert hello[0] == "ADDED" and "MODIFIED" in hello and hello[-1] == "DELETED", events
assert ("ADDED", "fails") in events, events
PY
ok $? "kubectl get jobs --watch printed ADDED, MODIFIED and DELETED events"

sed "s/token: .*/token: not-the-token/" "$dir/kubeconfig" >"$dir/bad.kubeconfig"
k --kubeconfig "$dir/bad.kubeconfig" get jobs
[ $rc -ne 0 ]; ok $? "a wrong token is refused"
has "Unauthorized" "as Unauthorized"
sed -e "s|token: .*|client-certificate: $dir/client.pem|" "$dir/kubeconfig" >"$dir/cert.kubeconfig"
echo "    client-key: $dir/client.key" >>"$dir/cert.kubeconfig"
k --kubeconfig "$dir/cert.kubeconfig" get jobs -o name
rc_is 0 "a client certificate signed by the client CA is accepted"
has "job.batch/fails" "and lists the Jobs"
done_testing
