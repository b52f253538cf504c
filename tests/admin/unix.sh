#!/bin/sh
# admin.listen = "unix:PATH": the API on a Unix socket only this user can
# open (reads open, changes with the token), removed at stop; a socket a
# dead host left is replaced, one a live host listens on is not.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "unix:admin.sock"; token_file = "token";'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens on the socket"
case "$where" in "unix:$host/admin.sock") ok 0 "the path resolved against the config's directory" ;;
*) echo "# $where"; ok 1 "the path resolved against the config's directory" ;; esac
[ -S "$host/admin.sock" ]
ok $? "the socket exists"
mode=$(stat -c %a "$host/admin.sock")
[ "$mode" = 700 ] || [ "$mode" = 600 ]
ok $? "only this user may open it ($mode)"
curl_unix="$host/admin.sock"
api GET /api/v1/health
code_is 200 "reads over the socket"
api POST /api/v1/runs '{"workflow": "w"}'
code_is 401 "changes still need the token"
api POST /api/v1/runs '{"workflow": "w"}' token
code_is 201 "and work with it"

run serve --exit-when-idle
rc_is 2 "a second host refuses the socket a live host listens on"
has "another process listens there" "saying so"
stop_serve
ok $? "serve stops cleanly"
[ ! -e "$host/admin.sock" ]
ok $? "the socket is removed at stop"

# Under valgrind (SY_WRAP) two more starts cost half a minute; the
# sanitizer pass runs them.
[ -z "$SY_WRAP" ] || { cleanup_host; done_testing; exit $?; }
start_serve
kill -KILL "$serve_pid"
wait "$serve_pid" 2>/dev/null
[ -S "$host/admin.sock" ]
ok $? "a killed host leaves its socket"
start_serve
ok $? "the next host replaces it"
api GET /api/v1/health
code_is 200 "and serves on it"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
