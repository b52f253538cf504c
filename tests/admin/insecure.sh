#!/bin/sh
# A listener other machines reach speaks TLS, or the operator says
# otherwise: without admin.tls_cert `serve` refuses it, naming the keys
# to set; admin.insecure = true lets it start, with a warning at every
# start; a loopback listener needs neither.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "0.0.0.0:0"; token_file = "token";'
run serve --exit-when-idle
rc_is 2 "plain HTTP on a listener other machines reach stops serve"
has "admin.listen 0.0.0.0:0 is reachable from other machines and speaks plain HTTP: tokens would cross the network in clear; set admin.tls_cert and admin.tls_key, or admin.insecure = true" \
    "saying why and what to set"
sed -i 's|^admin = { |admin = { insecure = true; |' "$host/switchyard.cfg"
run serve --exit-when-idle
rc_is 0 "admin.insecure = true lets it start"
has "admin.listen 0.0.0.0:0 speaks plain HTTP to other machines (admin.insecure = true)" \
    "with a warning"
sed -i 's|^admin = .*|admin = { listen = "127.0.0.1:0"; token_file = "token"; };|' "$host/switchyard.cfg"
run serve --exit-when-idle
rc_is 0 "a loopback listener needs neither"
hasnt "speaks plain HTTP" "and is not warned about"
sed -i 's|^admin = .*|admin = { insecure = "yes"; };|' "$host/switchyard.cfg"
run check
has "'admin.insecure' must be true or false" "a bad insecure names admin.insecure"
cleanup_host
done_testing
