#!/bin/sh
# Where the kubernetes plugin finds its cluster: the `kubeconfig` setting,
# $KUBECONFIG, the in-cluster service account; a bearer token or a client
# certificate, files or inline data, TLS verified against the CA.  Each
# bad kubeconfig is refused in one line naming the file and the field,
# never a secret (docs/reliability.md, the kubernetes plugin's rows).
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-kc-XXXXXX")
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
cfg=$dir/switchyard.cfg
cp "$cfg" "$dir/good.cfg"
# use KUBECONFIG-LINE: the instance's kubeconfig setting replaced.
use() { sed "s|kubeconfig = \"[^\"]*\";|$1|" "$dir/good.cfg" >"$cfg"; }

# --- bad kubeconfigs: one line each -------------------------------------------------
# row FILE-BODY EXPECTED NAME: the kubeconfig bad.yaml holds FILE-BODY.
row() {
    printf '%s\n' "$1" >"$dir/bad.yaml"
    use "kubeconfig = \"$dir/bad.yaml\";"
    run check
    [ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c 'error:')" = 1 ]; ok $? "$3: refused in one line"
    has "kubeconfig $dir/bad.yaml: $2" "$3: names the file and the field"
    hasnt "$SY_K8S_TOKEN" "$3: no token in the message"
}
server="https://127.0.0.1:$k8s_port"
ctx='contexts:
- name: c
  context: {cluster: k, user: u}
current-context: c'
row "clusters: [ {name: k" 'line' "YAML that does not parse"
row "$ctx
clusters:
- name: k
  cluster: {certificate-authority: $dir/ca.pem}
users:
- name: u
  user: {token: $SY_K8S_TOKEN}" 'clusters[k].cluster.server: not set' "a cluster without a server"
row "$ctx
clusters:
- name: k
  cluster: {server: $server, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: $SY_K8S_TOKEN}" 'clusters[k].cluster.insecure-skip-tls-verify: refused' "insecure-skip-tls-verify"
row "$ctx
clusters:
- name: k
  cluster: {server: $server, certificate-authority: $dir/no-ca.pem}
users:
- name: u
  user: {token: $SY_K8S_TOKEN}" "clusters[k].cluster.certificate-authority: cannot read $dir/no-ca.pem" "a CA file that is not there"
row "$ctx
clusters:
- name: k
  cluster: {server: $server, certificate-authority-data: '%%%'}
users:
- name: u
  user: {token: $SY_K8S_TOKEN}" 'clusters[k].cluster.certificate-authority-data: not base64' "CA data that is not base64"
row "$ctx
clusters:
- name: k
  cluster: {server: $server}
users:
- name: u
  user:
    exec: {command: aws-iam-authenticator, apiVersion: client.authentication.k8s.io/v1}" 'users[u].user.exec: command "aws-iam-authenticator" not found on PATH' "an exec credential plugin that is not installed"
row "$ctx
clusters:
- name: k
  cluster: {server: $server}
users:
- name: u
  user: {client-certificate: $dir/client.pem}" 'users[u].user: client-certificate and client-key go together' "a certificate without its key"
row "current-context: nope
contexts: []" 'contexts: no context named "nope"' "a current-context that is not there"

# --- good ones ------------------------------------------------------------------------
use "kubeconfig = \"$dir/kubeconfig\";"
run run k8s::one
rc_is 0 "the kubeconfig setting: token and CA file"
use ""
run run k8s::one
rc_is 0 "\$KUBECONFIG when the setting is absent"
# In a pod: the service account's files and the service's address.
mkdir -p "$dir/sa"
printf '%s\n' "$SY_K8S_TOKEN" >"$dir/sa/token"
cp "$dir/ca.pem" "$dir/sa/ca.crt"
printf 'incluster\n' >"$dir/sa/namespace"
sed "s|kubeconfig = \"[^\"]*\";|service_account_dir = \"$dir/sa\";|; s|namespace = \"sy\";||" "$dir/good.cfg" >"$cfg"
out=$(env -u KUBECONFIG HOME="$dir/nohome" KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$k8s_port" \
      "$SWITCHYARD" run k8s::one 2>&1)
rc=$?
rc_is 0 "the in-cluster service account when there is no kubeconfig"
n=$(k8s_requests 'q["method"] == "POST" and "/namespaces/incluster/jobs" in q["path"]')
[ "$n" = 1 ]; ok $? "in the service account's namespace"
out=$(env -u KUBECONFIG HOME="$dir/nohome" "$SWITCHYARD" check 2>&1)
has "no cluster: no kubeconfig setting, no \$KUBECONFIG, no ~/.kube/config, and not in a cluster" "no cluster anywhere: refused, saying where it looked"

# A client certificate, inline (client-certificate-data, client-key-data,
# certificate-authority-data).
stop_k8s
start_k8s --client-ca "$dir/client-ca.pem" --client-cert "$dir/client.pem" --client-key "$dir/client.key" --inline
grep -q 'client-key-data' "$KUBECONFIG"; ok $? "the server wrote an inline client-certificate kubeconfig"
sed "s|kubeconfig = \"[^\"]*\";|kubeconfig = \"$KUBECONFIG\";|" "$dir/good.cfg" >"$cfg"
run run k8s::one
rc_is 0 "a client certificate and key from inline data"
done_testing
