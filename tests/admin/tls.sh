#!/bin/sh
# TLS on the admin listener, with a CA made at test time: a good
# certificate is served and verified (curl, and `switchyard --host https://
# --ca-file`), a client that trusts another CA refuses it, plain HTTP gets
# nothing, an expired certificate is refused by the client, and a key
# others may read or a certificate without its key stops `serve` with one
# line naming the key.
. "$SY_SRCDIR/tests/admin/lib.sh"
if ! command -v openssl >/dev/null 2>&1; then
    echo "1..0 # SKIP openssl is not installed"
    exit 0
fi
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; tls_cert = "tls/server.crt"; tls_key = "tls/server.key";'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
t="$host/tls"
mkdir -p "$t"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
(
    cd "$t" || exit 1
    openssl req -x509 $ec -keyout ca.key -out ca.crt -subj /CN=sy-test-ca -days 2
    openssl req -x509 $ec -keyout other.key -out other.crt -subj /CN=sy-other-ca -days 2
    openssl req $ec -keyout server.key -out server.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=IP:127.0.0.1\n' >ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
        -days 2 -extfile ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out expired.crt \
        -days -1 -extfile ext
    chmod 600 server.key
) >"$host/openssl.log" 2>&1
ok $? "a CA and certificates are made"

start_serve
ok $? "serve listens over TLS"
grep -q "admin: listening on .* over TLS" "$host/serve.log"; ok $? "and says so"
https="https://${where}"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$t/ca.crt" "$https/api/v1/health")
[ "$code" = 200 ]; ok $? "a client trusting the CA is served (HTTP $code)"
curl -s -o /dev/null --cacert "$t/other.crt" "$https/api/v1/health"
[ $? -eq 60 ]; ok $? "a client trusting another CA refuses the certificate"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://${where}/api/v1/health")
[ "$code" != 200 ]; ok $? "plain HTTP is not served (HTTP $code)"
"$SWITCHYARD" --host "$https" --ca-file "$t/ca.crt" runs >"$host/cli.out" 2>&1
ok $? "switchyard --host https:// --ca-file talks to it"
"$SWITCHYARD" --host "$https" runs >"$host/cli.out" 2>&1
[ $? -ne 0 ] && grep -qi "certificate" "$host/cli.out"
ok $? "without --ca-file the system's CAs refuse it, saying why"
"$SWITCHYARD" --host "$https" --ca-file "$t/ca.crt" --token-file "$host/token" \
    submit w >"$host/cli.out" 2>&1
ok $? "a change goes over TLS with the token"
stop_serve
ok $? "serve stops cleanly"

cp "$t/expired.crt" "$t/server.crt"
start_serve
ok $? "serve starts with an expired certificate"
https="https://${where}"
curl -s -o /dev/null --cacert "$t/ca.crt" "$https/api/v1/health"
[ $? -eq 60 ]; ok $? "and clients refuse it as expired"
stop_serve

chmod 644 "$t/server.key"
"$SWITCHYARD" serve >"$host/bad.log" 2>&1
[ $? -ne 0 ] && grep -q "admin.tls_key $t/server.key: others may read it (chmod 600)" "$host/bad.log"
ok $? "a key others may read stops serve, naming it"
chmod 600 "$t/server.key"
sed -i 's| tls_key = "tls/server.key";||' "$host/switchyard.cfg"
"$SWITCHYARD" serve >"$host/bad.log" 2>&1
[ $? -ne 0 ] && grep -q "'admin.tls_cert' needs 'admin.tls_key' too" "$host/bad.log"
ok $? "a certificate without its key is a config error naming both"
cleanup_host
done_testing
