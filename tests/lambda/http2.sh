#!/bin/sh
# HTTP/2 where the endpoint offers it: the loopback endpoint behind nghttpx
# (Debian nghttp2-proxy), which speaks HTTP/2 over TLS (ALPN h2) and
# forwards to tests/lambda/server.py, which checks every signature.  40
# calls at once share one connection, each answer came over HTTP/2, and
# the instance's CA comes from `ca_file`.  Skipped, with the reason, where
# nghttpx or openssl is missing.
. "$SY_SRCDIR/tests/lambda/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP TLS handshakes under valgrind take minutes; the sanitizer pass runs it (invoke.sh and creds.sh run the plugin under valgrind)"
    exit 0
fi
for t in nghttpx openssl; do
    if ! command -v $t >/dev/null 2>&1 && [ ! -x /usr/sbin/$t ]; then
        echo "1..0 # SKIP $t is not installed (Debian: nghttp2-proxy, openssl)"
        exit 0
    fi
done
NGHTTPX=$(command -v nghttpx || echo /usr/sbin/nghttpx)
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-lambda-XXXXXX")
proxy=
trap '[ -n "$proxy" ] && kill $proxy 2>/dev/null; stop_server; rm -rf "$dir"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout "$dir/key.pem" -out "$dir/cert.pem" \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
start_server
tls=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$NGHTTPX" -f"127.0.0.1,$tls" -b"127.0.0.1,$port" --workers=1 --no-ocsp \
    --accesslog-file="$dir/access.log" --errorlog-file="$dir/proxy.log" \
    "$dir/key.pem" "$dir/cert.pem" &
proxy=$!
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $tls), 1)" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 100 ] && { echo "Bail out! nghttpx did not start"; cat "$dir/proxy.log"; exit 1; }
    sleep 0.05
done

make_lambda_host "access_key_id = \"$LAMBDA_KEY\"; secret_access_key = \"$LAMBDA_SECRET\"; ca_file = \"$dir/cert.pem\";"
sed -i "s|aws = { plugin = \"lambda\"; endpoint_url = \"http://127.0.0.1:$port\";|aws = { plugin = \"lambda\"; endpoint_url = \"https://127.0.0.1:$tls\";|" \
    "$dir/switchyard.cfg"
workflow fan <<'WF'
workflow = {
  name = "lam::fan";
  tasks = ( { id = "call"; map_range = 40; function = "echo-h2"; } );
};
WF
mkdir -p "$dir/var"
m="$dir/var/metrics.prom"
run submit lam::fan
rc_is 0 "the run is submitted"
out=$($SY_WRAP "$SWITCHYARD" serve --exit-when-idle --metrics-file "$m" --metrics-interval 50ms 2>&1)
rc_is 0 "serve runs it and exits"
id=1
is Completed "$id" 'r["status"]' "40 calls over TLS to an HTTP/2 endpoint complete"
value() { awk -v k="$1" '$1 == k { print $2 }' "$m"; }
label='executor="aws",plugin="lambda"'
h2=$(value "switchyard_executor_plugin_value{$label,name=\"http2\"}")
[ "$h2" = 40 ]; ok $? "every answer came over HTTP/2 ($h2 of 40)"
conns=$(value "switchyard_executor_plugin_value{$label,name=\"connections\"}")
[ -n "$conns" ] && [ "$conns" -le 2 ]; ok $? "40 calls at once shared one connection ($conns opened)"
n=$(requests 'q.get("sig_ok") is True')
[ "$n" -ge 40 ]; ok $? "the endpoint behind the proxy checked every signature ($n good)"
grep -q 'HTTP/2' "$dir/access.log"; ok $? "the proxy logged HTTP/2 requests"

# Without the CA, the endpoint's certificate is refused, with the reason.
sed -i "s|ca_file = \"$dir/cert.pem\";||" "$dir/switchyard.cfg"
run run lam::fan
rc_is 1 "without ca_file the self-signed endpoint is refused"
has "certificate" "and the error says it is the certificate"
done_testing
