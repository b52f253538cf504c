#!/bin/sh
# Client certificates: with admin.tls_client_ca every request must come
# with a certificate that CA signed: one is served, none or one another CA
# signed gets 403 saying what is needed; the CLI shows one with --cert
# and --key; tls_client_ca without TLS is a config error.
. "$SY_SRCDIR/tests/admin/lib.sh"
if ! command -v openssl >/dev/null 2>&1; then
    echo "1..0 # SKIP openssl is not installed"
    exit 0
fi
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; tls_cert = "tls/server.crt"; tls_key = "tls/server.key"; tls_client_ca = "tls/clients.crt";'
t="$host/tls"
mkdir -p "$t"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
(
    cd "$t" || exit 1
    openssl req -x509 $ec -keyout ca.key -out ca.crt -subj /CN=sy-test-ca -days 2
    openssl req -x509 $ec -keyout clients.key -out clients.crt -subj /CN=sy-clients-ca -days 2
    openssl req -x509 $ec -keyout other.key -out other.crt -subj /CN=sy-other-ca -days 2
    openssl req $ec -keyout server.key -out server.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=IP:127.0.0.1\n' >ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
        -days 2 -extfile ext
    chmod 600 server.key
    for who in alice mallory; do
        openssl req $ec -keyout $who.key -out $who.csr -subj /CN=$who
    done
    openssl x509 -req -in alice.csr -CA clients.crt -CAkey clients.key -CAcreateserial \
        -out alice.crt -days 2
    openssl x509 -req -in mallory.csr -CA other.crt -CAkey other.key -CAcreateserial \
        -out mallory.crt -days 2
) >"$host/openssl.log" 2>&1
ok $? "CAs, a server certificate and two client certificates are made"
start_serve
ok $? "serve listens over TLS"
https="https://${where}"
code=$(curl -s -o "$host/body" -w '%{http_code}' --cacert "$t/ca.crt" --cert "$t/alice.crt" \
    --key "$t/alice.key" "$https/api/v1/health")
[ "$code" = 200 ]; ok $? "a client with a certificate the client CA signed is served (HTTP $code)"
code=$(curl -s -o "$host/body" -w '%{http_code}' --cacert "$t/ca.crt" "$https/api/v1/health")
[ "$code" = 403 ] && grep -q "a client certificate signed by admin.tls_client_ca is required" "$host/body"
ok $? "one without a certificate gets 403 saying what is needed (HTTP $code)"
code=$(curl -s -o "$host/body" -w '%{http_code}' --cacert "$t/ca.crt" --cert "$t/mallory.crt" \
    --key "$t/mallory.key" "$https/api/v1/health")
[ "$code" = 403 ] || [ "$code" = 000 ]; ok $? "one with a certificate another CA signed is refused (HTTP $code)"

# The command line over --host: --cert and --key (or one PEM with both).
sy() { $SY_WRAP "$SWITCHYARD" --host "$https" --ca-file "$t/ca.crt" "$@" 2>"$host/cli.err"; }
chmod 600 "$t/alice.key" "$t/mallory.key"
sy --cert "$t/alice.crt" --key "$t/alice.key" runs >/dev/null
ok $? "the CLI shows its client certificate with --cert and --key"
cat "$t/alice.crt" "$t/alice.key" >"$t/alice.pem"
chmod 600 "$t/alice.pem"
sy --cert "$t/alice.pem" runs >/dev/null
ok $? "or one PEM file holding both"
sy runs >/dev/null
[ $? -eq 1 ] && grep -q "client certificate signed by admin.tls_client_ca is required (give --cert FILE and --key FILE)" "$host/cli.err"
ok $? "without one it says what to give"
sy --cert "$t/mallory.crt" --key "$t/mallory.key" runs >/dev/null
[ $? -eq 1 ] && [ "$(wc -l <"$host/cli.err")" -eq 1 ]
ok $? "one another CA signed fails in one line"
chmod 644 "$t/alice.key"
sy --cert "$t/alice.crt" --key "$t/alice.key" runs >/dev/null
[ $? -eq 2 ] && grep -q -- "--key $t/alice.key: mode 0644 lets others read it; chmod 600" "$host/cli.err"
ok $? "a key others may read is refused, naming it"
sy --key "$t/mallory.key" runs >/dev/null
[ $? -eq 2 ] && grep -q -- "needs --cert" "$host/cli.err"
ok $? "--key without --cert is a usage error"
sy --cert "$t/nope.crt" runs >/dev/null
[ $? -eq 2 ] && grep -q -- "--cert $t/nope.crt: No such file" "$host/cli.err"
ok $? "a missing certificate file is named"
stop_serve
ok $? "serve stops cleanly"
sed -i 's| tls_cert = "tls/server.crt"; tls_key = "tls/server.key";||' "$host/switchyard.cfg"
run check
has "'admin.tls_client_ca' needs TLS: set 'admin.tls_cert' and 'admin.tls_key'" \
    "a client CA without TLS is a config error"
cleanup_host
done_testing
