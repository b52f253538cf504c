#!/bin/sh
# The tokens file is read again at each reload (SIGHUP, POST
# /api/v1/reload): a token taken out of it stops working at once, a token
# added works; a file that cannot be read keeps the tokens read before and
# the log says why in one line.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "127.0.0.1:0"; tokens_file = "tokens";'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
tok_ops=$($SY_WRAP "$SWITCHYARD" token new --role operate --name ops 2>/dev/null)
tok_admin=$($SY_WRAP "$SWITCHYARD" token new --role admin --name boss 2>/dev/null)
start_serve
ok $? "serve listens with two tokens"
api POST /api/v1/runs '{"workflow": "w"}' "Bearer $tok_ops"
code_is 201 "the operate token submits"

# wait_log N TEXT: until TEXT is in the log N times (10 s at most).
wait_log() {
    for _ in $(seq 1 100); do
        [ "$(grep -c -- "$2" "$host/serve.log")" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

grep -v '^ops ' "$host/tokens" >"$host/tokens.new"
chmod 600 "$host/tokens.new"
mv "$host/tokens.new" "$host/tokens"
kill -HUP "$serve_pid"
wait_log 1 "tokens read again: 1 from"
ok $? "SIGHUP reads the tokens file again"
api POST /api/v1/runs '{"workflow": "w"}' "Bearer $tok_ops"
code_is 403 "a token taken out of the file is refused at once"

tok_new=$($SY_WRAP "$SWITCHYARD" token new --role operate --name ci 2>/dev/null)
api POST /api/v1/runs '{"workflow": "w"}' "Bearer $tok_new"
code_is 403 "a token added is unknown before the reload"
api POST /api/v1/reload '' "Bearer $tok_admin"
code_is 200 "POST /api/v1/reload"
api POST /api/v1/runs '{"workflow": "w"}' "Bearer $tok_new"
code_is 201 "and the token added works after it"

chmod 644 "$host/tokens"
kill -HUP "$serve_pid"
wait_log 1 "tokens not read again"
ok $? "a file others may read is not read again"
grep "tokens not read again" "$host/serve.log" | grep -q "others may read it (chmod 600); the 2 tokens read before stay in force"
ok $? "the log says why in one line, and that the old tokens stay"
api POST /api/v1/runs '{"workflow": "w"}' "Bearer $tok_new"
code_is 201 "the tokens read before still work"

chmod 600 "$host/tokens"
echo "broken line" >>"$host/tokens"
kill -HUP "$serve_pid"
wait_log 2 "tokens not read again"
ok $? "a malformed file is not read again"
grep "tokens not read again" "$host/serve.log" | tail -n 1 | grep -q "/tokens:3: expected NAME ROLE SHA256-HEX"
ok $? "the line names the file, its line and the reason"
api POST /api/v1/reload '' "Bearer $tok_admin"
code_is 200 "the admin token read before still reloads"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
