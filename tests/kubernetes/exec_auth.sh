#!/bin/sh
# Exec credential plugins (users[].user.exec) against the loopback API
# server: a small script prints an ExecCredential holding the server's
# token; it is run at create() (relative to the kubeconfig's directory,
# with its args, env and KUBERNETES_EXEC_INFO), again before its
# expirationTimestamp while tasks keep completing, and after a 401; a
# script that exits 1 and interactiveMode Always are refused in one line
# naming the file and the field; a client certificate pair from the
# plugin is used for TLS; the token is in no output, status or metric.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-exec-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s
make_k8s_host
workflow one <<'WF'
workflow = {
  name = "k8s::one";
  retry = { attempts = 1; };
  tasks = ( { id = "t"; command = ["sh", "-c", "echo '{\"ok\": 1}'"]; } );
};
WF
workflow slow <<'WF'
workflow = {
  name = "k8s::slow";
  retry = { attempts = 1; };
  tasks = (
    { id = "a"; command = ["sh", "-c", "sleep 2; echo '{\"ok\": 1}'"]; },
    { id = "b"; after = ["a"]; command = ["sh", "-c", "sleep 2; echo '{\"ok\": 2}'"]; },
    { id = "c"; after = ["b"]; command = ["sh", "-c", "echo '{\"ok\": 3}'"]; }
  );
};
WF
cp "$dir/switchyard.cfg" "$dir/good.cfg"
sed "s|kubeconfig = \"[^\"]*\";|kubeconfig = \"$dir/kc/exec.yaml\";|" "$dir/good.cfg" >"$dir/switchyard.cfg"

# The plugin: counts its runs, keeps KUBERNETES_EXEC_INFO, prints the
# token (from the server's token file) with an expiry $EXPIRE s ahead.
mkdir -p "$dir/kc"
cat >"$dir/kc/cred.sh" <<'SH'
#!/bin/sh
date +%s >>"$STATE/runs"
printf '%s\n' "$KUBERNETES_EXEC_INFO" >"$STATE/info"
printf '%s\n' "$*" >"$STATE/args"
if [ "$1" = flaky ] && [ -e "$STATE/flaky" ]; then echo "token service down" >&2; exit 1; fi
[ "$1" != flaky ] || { touch "$STATE/flaky"; touch "$STATE/stale"; }
if [ "$1" = cert ]; then
    pem() { awk '{printf "%s\\n", $0}' "$STATE/$1"; }
    printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"}}\n' \
        "$(pem client.pem)" "$(pem client.key)"
    exit 0
fi
if [ "$1" = fail ]; then echo "first line" >&2; echo "boom: no credentials" >&2; exit 1; fi
tok=$(cat "$STATE/token")
if [ -e "$STATE/stale" ]; then rm -f "$STATE/stale"; tok=stale-token; fi
exp=
[ -z "$EXPIRE" ] || exp=",\"expirationTimestamp\":\"$(date -u -d "@$(( $(date +%s) + EXPIRE ))" +%Y-%m-%dT%H:%M:%SZ)\""
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"%s}}\n' \
    "$tok" "$exp"
SH
chmod 0755 "$dir/kc/cred.sh"
# kc ARGS EXPIRE [MODE]: the kubeconfig's user runs ./cred.sh ARGS.
kc() {
    cat >"$dir/kc/exec.yaml" <<YAML
apiVersion: v1
clusters:
- name: k
  cluster: {server: "$SY_K8S_URL", certificate-authority: "$dir/ca.pem"}
contexts:
- name: c
  context: {cluster: k, user: u, namespace: sy}
current-context: c
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./cred.sh
      args: [$1]
      env: [{name: STATE, value: "$dir"}, {name: EXPIRE, value: "$2"}]
      interactiveMode: ${3:-IfAvailable}
      provideClusterInfo: true
      installHint: "see examples/kubernetes/README.md"
YAML
}
runs() { wc -l <"$dir/runs" 2>/dev/null || echo 0; }

kc hello ""
run run k8s::one
rc_is 0 "a token from an exec plugin: the task completes"
[ "$(runs)" -ge 1 ]; ok $? "the plugin ran"
grep -q '"kind":"ExecCredential"' "$dir/info" && grep -q "\"server\":\"$SY_K8S_URL\"" "$dir/info"
ok $? "KUBERNETES_EXEC_INFO holds the ExecCredential with spec.cluster (provideClusterInfo)"
grep -q '"interactive":false' "$dir/info"; ok $? "and says it is not interactive"
[ "$(cat "$dir/args")" = hello ]; ok $? "its args were passed"
hasnt "$SY_K8S_TOKEN" "the token is not in the output"

# An expiry 3 s ahead: run again before it, tasks keep completing.
kc hello 3
: >"$dir/runs"
run submit k8s::slow
rc_is 0 "a slow run is submitted"
id=$(run_id)
timeout 60 "$SWITCHYARD" serve --exit-when-idle --metrics-file "$dir/metrics.prom" \
    --metrics-interval 100ms >"$dir/serve.log" 2>&1
rc=$?
rc_is 0 "the host finishes the run"
"$SWITCHYARD" status "$id" --json >"$dir/status.json" 2>&1
grep -q '"Completed"' "$dir/status.json"; ok $? "the run completed"
first=$(head -n 1 "$dir/runs") last=$(tail -n 1 "$dir/runs")
[ "$(runs)" -ge 2 ] && [ $((last - first)) -ge 1 ]
ok $? "the credential was run again before it expired, while tasks ran ($(runs) runs over $((last - first)) s)"
grep -q "$SY_K8S_TOKEN" "$dir/serve.log"; [ $? -ne 0 ]; ok $? "the token is not in the host's output"
grep -q "$SY_K8S_TOKEN" "$dir/status.json"; [ $? -ne 0 ]; ok $? "nor in status --json"
[ -s "$dir/metrics.prom" ] && ! grep -q "$SY_K8S_TOKEN" "$dir/metrics.prom"; ok $? "nor in the metrics file"

# A credential the server refuses: the 401 runs the plugin again, the
# refused request and those after it wait for the new token and go with
# it, the task completes on its first attempt.
workflow retry <<'WF'
workflow = {
  name = "k8s::retry";
  retry = { attempts = 3; delay = 0; };
  tasks = ( { id = "t"; command = ["sh", "-c", "echo '{\"ok\": 1}'"]; } );
};
WF
kc hello ""
: >"$dir/runs"
touch "$dir/stale"
run run k8s::retry
rc_is 0 "a refused (stale) token: refreshed on the 401, the task completes"
[ ! -e "$dir/stale" ] && [ "$(runs)" -ge 2 ]; ok $? "the plugin ran again after the 401 ($(runs) runs)"
n=$(k8s_requests 'q.get("code") == 401')
[ "$n" -ge 1 ]; ok $? "the server did answer 401 ($n times)"
printf '%s\n' "$out" | grep -q 'Completed  *attempt 1$'
ok $? "the refused create waited for the new credential and went again: done on its first attempt"
hasnt "stale-token" "the refused token is not in the output"

# The 401's refresh fails: the waiting requests (the refused create among
# them) are answered with the command's line, the host says it, and stops
# (destroy() ends the helper).
kc flaky ""
run run k8s::one
[ "$rc" -ne 0 ]; ok $? "a refresh that fails: the task fails"
has "cannot refresh the credential: kubeconfig $dir/kc/exec.yaml: users[u].user.exec: command \"$dir/kc/cred.sh\" exited with status 1; stderr: token service down" \
    "the host says why, in one line with the stderr tail"
printf '%s\n' "$out" | grep -q 'Failed  *attempt 1: the API server refused Job [^ ]* (HTTP 401): kubeconfig '
ok $? "the refused create waited for the refresh, and its failure carries the command's line"
hasnt "stale-token" "without the token"
# A request refused after that refresh failed (b starts once a has
# failed, inside the 10 s before the next try): its failure carries the
# command's line too, not the server's bare "Unauthorized".
workflow after_failed <<'WF'
workflow = {
  name = "k8s::after_failed";
  retry = { attempts = 1; };
  tasks = (
    { id = "a"; command = ["sh", "-c", "echo '{\"ok\": 1}'"]; },
    { id = "b"; after = ["a"]; trigger = "all_done"; command = ["sh", "-c", "echo '{\"ok\": 2}'"]; }
  );
};
WF
rm -f "$dir/flaky"
run run k8s::after_failed
printf '%s\n' "$out" | grep -q 'b  *Failed  *attempt 1: the API server refused Job [^ ]* (HTTP 401): kubeconfig '
ok $? "a request refused after the refresh failed: its failure carries the command's line"

# A plugin that fails: one line, the file, the field, status, stderr tail.
kc fail ""
run check
[ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c 'error:')" = 1 ]; ok $? "a failing plugin: refused in one line"
has "kubeconfig $dir/kc/exec.yaml: users[u].user.exec: command \"$dir/kc/cred.sh\" exited with status 1; stderr: first line boom: no credentials" \
    "names the file, the field, the exit status and the stderr tail"
kc hello "" Always
run check
has "kubeconfig $dir/kc/exec.yaml: users[u].user.exec.interactiveMode: Always needs a terminal" "interactiveMode Always: refused"
sed -i 's|command: ./cred.sh|command: sy-no-such-auth-plugin|' "$dir/kc/exec.yaml"
sed -i 's|interactiveMode: Always|interactiveMode: Never|' "$dir/kc/exec.yaml"
run check
has "users[u].user.exec: command \"sy-no-such-auth-plugin\" not found on PATH; install it: see examples/kubernetes/README.md" \
    "a command not on PATH: named, with its installHint"
# A client certificate and key from the plugin (status.clientCertificate
# Data, clientKeyData): the server wants the certificate.
stop_k8s
start_k8s --client-ca "$dir/client-ca.pem" --client-cert "$dir/client.pem" --client-key "$dir/client.key"
kc cert ""
run run k8s::one
rc_is 0 "a client certificate and key from an exec plugin: the task completes"
done_testing
