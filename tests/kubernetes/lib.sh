# Sourced by the Kubernetes tests: certificates made at test time, the
# loopback API server (tests/kubernetes/server.py) started and stopped, and
# calls to its test-only endpoints.  Needs $dir (a scratch directory).
#
# After start_k8s: $k8s_port, $k8s_srv (its pid), and exported
#   KUBECONFIG     $dir/kubeconfig: server, certificate-authority, token,
#                  context switchyard-test with namespace default
#   SY_K8S_URL     https://127.0.0.1:PORT
#   SY_K8S_TOKEN   the bearer token it accepts
#   SY_K8S_CA      the CA of its certificate (PEM)
#   SY_K8S_TOKEN_FILE  $dir/token, the token alone (as a service account's)
#   SY_K8S_DIR     $dir, where the certificates are
. "$SY_SRCDIR/tests/integration/lib.sh"

SY_K8S_TOKEN=${SY_K8S_TOKEN:-k8s-test-token}

# k8s_certs: in $dir (P-256 keys), ca.pem/ca.key, server.pem/server.key (127.0.0.1 and
# localhost), client-ca.pem/client-ca.key and client.pem/client.key
# (CN=switchyard, O=system:masters) for client-certificate auth.
k8s_certs() {
    [ -s "$dir/server.pem" ] && return 0
    (
        cd "$dir" || exit 1
        for ca in ca client-ca; do
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout $ca.key -out $ca.pem \
                -subj "/CN=switchyard-test-$ca" -addext basicConstraints=critical,CA:TRUE \
                -addext keyUsage=critical,keyCertSign,cRLSign || exit 1
        done
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 &&
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                -extfile server.ext -out server.pem || exit 1
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr \
            -subj "/O=system:masters/CN=switchyard" &&
            openssl x509 -req -in client.csr -CA client-ca.pem -CAkey client-ca.key -CAcreateserial \
                -days 2 -extfile client.ext -out client.pem || exit 1
    ) >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log"; echo "Bail out! openssl could not make the certificates"; exit 1; }
}

# start_k8s [ARGS...]: makes the certificates, starts the server (extra
# arguments go to server.py, e.g. --client-ca "$dir/client-ca.pem",
# --history 20, --inline) and waits for its port.
start_k8s() {
    k8s_certs
    rm -f "$dir/k8s.port"
    python3 "$SY_SRCDIR/tests/kubernetes/server.py" --port-file "$dir/k8s.port" \
        --cert "$dir/server.pem" --key "$dir/server.key" --ca "$dir/ca.pem" \
        --token "$SY_K8S_TOKEN" --kubeconfig "$dir/kubeconfig" --workdir "$dir" \
        --log "$dir/k8s-requests.log" "$@" 2>"$dir/k8s-server.err" &
    k8s_srv=$!
    local i=0
    while [ ! -s "$dir/k8s.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    k8s_port=$(cat "$dir/k8s.port" 2>/dev/null)
    [ -n "$k8s_port" ] || { cat "$dir/k8s-server.err"; echo "Bail out! the Kubernetes test server did not start"; exit 1; }
    printf '%s' "$SY_K8S_TOKEN" >"$dir/token"
    SY_K8S_TOKEN_FILE="$dir/token"
    KUBECONFIG="$dir/kubeconfig"
    SY_K8S_URL="https://127.0.0.1:$k8s_port"
    SY_K8S_CA="$dir/ca.pem"
    SY_K8S_DIR="$dir"
    export KUBECONFIG SY_K8S_URL SY_K8S_TOKEN SY_K8S_TOKEN_FILE SY_K8S_CA SY_K8S_DIR
}

# stop_k8s: SIGTERM (the server kills every pod process it started).
stop_k8s() {
    [ -n "${k8s_srv:-}" ] || return 0
    kill "$k8s_srv" 2>/dev/null
    wait "$k8s_srv" 2>/dev/null
    k8s_srv=
}

# k8s_api METHOD PATH [JSON]: one request with the token; prints the HTTP
# status on the first line, then the body.
k8s_api() {
    python3 - "$@" <<'PY'
import http.client, os, ssl, sys
ctx = ssl.create_default_context(cafile=os.environ["SY_K8S_CA"])
c = http.client.HTTPSConnection("127.0.0.1", int(os.environ["SY_K8S_URL"].rsplit(":", 1)[1]), context=ctx, timeout=30)
body = sys.argv[3].encode() if len(sys.argv) > 3 else None
c.request(sys.argv[1], sys.argv[2], body, {"Authorization": "Bearer " + os.environ["SY_K8S_TOKEN"],
                                           "Content-Type": "application/json"})
r = c.getresponse()
print(r.status)
print(r.read().decode())
PY
}

# k8s_fault JSON: arms faults (POST /_test/faults), e.g. '{"gone": 1}',
# '{"expire": true}', '{"close_watches": true}',
# '{"throttle": {"count": 2, "prefix": "/apis/batch", "method": "POST", "retry_after": 1}}',
# '{"error": {"count": 1, "code": 503}}', '{"drop": {"count": 1, "method": "POST", "after": true}}'
# (docs/testing.md has them all).
k8s_fault() { k8s_api POST /_test/faults "$1" >/dev/null; }

# k8s_state EXPR: a Python expression over GET /_test/state (bound to `s`).
k8s_state() {
    k8s_api GET /_test/state | python3 -c '
import json, sys
sys.stdin.readline()
s = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v, sort_keys=True) if not isinstance(v, str) else v)' "$1"
}
