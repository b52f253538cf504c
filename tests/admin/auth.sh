#!/bin/sh
# Changes need the bearer token: none is 401, a wrong one 403, and neither
# is echoed; a token file others can read, or a listener other machines
# reach without a token file, stops serve with one line; bad admin keys
# are one line naming the field.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens"
api POST /api/v1/runs '{"workflow": "w"}'
code_is 401 "a change without a token is 401"
case "$headers" in *"WWW-Authenticate: Bearer"*) ok 0 "asking for a bearer token" ;; *) ok 1 "asking for a bearer token" ;; esac
api POST /api/v1/runs '{"workflow": "w"}' "Bearer wrong-token-wrong-token-0000"
code_is 403 "a wrong token is 403"
hasnt "wrong-token" "and is not echoed"
api POST /api/v1/runs '{"workflow": "w"}' "Bearer ${TOKEN}x"
code_is 403 "a token with one more character is 403"
api POST /api/v1/runs '{"workflow": "w"}' "Basic $TOKEN"
code_is 403 "another scheme is 403"
api POST /api/v1/runs/1/cancel '' none
code_is 401 "cancel needs the token"
api POST /api/v1/reload '' none
code_is 401 "reload needs the token"
api DELETE /api/v1/runs/1 '' none
code_is 401 "DELETE needs the token"
api GET /api/v1/runs
code_is 200 "reads on loopback need none"
api POST /api/v1/runs '{"workflow": "w"}' token
code_is 201 "the right token submits"
stop_serve
ok $? "serve stops cleanly"
if grep -q "$TOKEN" "$host/serve.log"; then ok 1 "the token never reaches the log"; else ok 0 "the token never reaches the log"; fi

chmod 0644 "$host/token"
run serve --exit-when-idle
rc_is 2 "a token file others can read stops serve"
has "admin.token_file $host/token: mode 0644" "with one line naming the file and its mode"
hasnt "$TOKEN" "never its content"
chmod 0600 "$host/token"

sed -i 's|listen = "127.0.0.1:0"; token_file = "token";|listen = "0.0.0.0:0";|' "$host/switchyard.cfg"
run serve --exit-when-idle
rc_is 2 "a listener other machines reach, without a token file, stops serve"
has "admin.listen 0.0.0.0:0 is reachable from other machines" "saying why"

# Under valgrind (SY_WRAP) each `check` costs seconds: one error stands
# for the rest there; the sanitizer pass checks them all.
cfg_error() { # GROUP EXPECTED NAME
    sed -i "s|^admin = .*|admin = { $1 };|" "$host/switchyard.cfg"
    run check
    case "$out" in *"$2"*) ok 0 "$3" ;; *) echo "# expected: $2"; ok 1 "$3" ;; esac
}
cfg_error 'listen = "nowhere";' "'admin.listen' must be \"HOST:PORT\"" "a bad listen names admin.listen"
[ -z "$SY_WRAP" ] || { cleanup_host; done_testing; exit $?; }
cfg_error 'listen = "127.0.0.1:70000";' "'admin.listen' must be" "a port out of range too"
cfg_error 'max_body = 10;' "'admin.max_body' must be a size from 1024" "a tiny max_body names admin.max_body"
cfg_error 'max_connections = 0;' "'admin.max_connections' must be an integer from 1 to 10000" \
    "max_connections 0 names admin.max_connections"
cfg_error 'timeout = "5ms";' "'admin.timeout' must be a duration" "a bad timeout names admin.timeout"
cfg_error 'lisen = "x";' "unknown key 'admin.lisen'" "an unknown key is named"
cfg_error 'token_file = 3;' "'admin.token_file' must be a file name" "token_file must be a string"
cleanup_host
done_testing
