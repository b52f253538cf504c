#!/bin/sh
# Roles: tokens made by `switchyard token new` (printed once, kept as
# digests in admin.tokens_file), each role against every change endpoint:
# read may change nothing, operate may submit, cancel and retry, admin
# also reload and drain; a refusal names the token, its role and the role needed,
# and the host's log names the token behind each change.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "127.0.0.1:0"; tokens_file = "tokens";'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
for r in read operate admin; do
    tok=$($SY_WRAP "$SWITCHYARD" token new --role "$r" --name "$r-bot" 2>"$host/token.err")
    rc=$?
    [ "$rc" -eq 0 ] && [ "${#tok}" -eq 64 ]; ok $? "token new --role $r prints a token"
    eval "tok_$r=\$tok"
    grep -q "$tok" "$host/tokens"; [ $? -ne 0 ]; ok $? "and the file keeps its digest, not the token"
done
$SY_WRAP "$SWITCHYARD" token new --role read --name read-bot >/dev/null 2>"$host/token.err"
[ $? -eq 1 ] && grep -q "a token named 'read-bot' is there already" "$host/token.err"
ok $? "a name taken is refused"
$SY_WRAP "$SWITCHYARD" token new --role root --name x >/dev/null 2>"$host/token.err"
[ $? -eq 2 ]; ok $? "an unknown role is a usage error"
[ "$(stat -c %a "$host/tokens")" = 600 ]; ok $? "the tokens file is mode 0600"

start_serve
ok $? "serve listens with the tokens file"

# METHOD PATH BODY NEEDED: every change endpoint (GETs are open on
# loopback; tests/admin/test_roles holds the whole table).
rows='POST|/api/v1/runs|{"workflow": "nope"}|operate
POST|/api/v1/runs/999999/cancel||operate
DELETE|/api/v1/runs/999999||operate
POST|/api/v1/runs/999999/retry|{}|operate
POST|/api/v1/reload||admin
POST|/api/v1/drain||admin'
rank() { case $1 in read) echo 1 ;; operate) echo 2 ;; admin) echo 3 ;; esac; }
printf '%s\n' "$rows" >"$host/rows"
while IFS='|' read -r method path data need; do
    for r in read operate admin; do
        # The drain the admin may do ends the host: it comes last.
        [ "$path" = /api/v1/drain ] && [ "$r" = admin ] && continue
        eval "tok=\$tok_$r"
        api "$method" "$path" "$data" "Bearer $tok"
        if [ "$(rank "$r")" -lt "$(rank "$need")" ]; then
            [ "$code" = 403 ] && printf '%s' "$body" | grep -q "token '$r-bot' has the role $r; $method $path needs $need"
            ok $? "$r may not $method $path (403 naming the roles)"
        else
            [ "$code" != 401 ] && [ "$code" != 403 ]
            ok $? "$r may $method $path (HTTP $code)"
        fi
    done
done <"$host/rows"
api POST /api/v1/reload '' "Bearer not-a-token-0123456789abcdef"
code_is 403 "an unknown token is refused"
# GET /api/v1/token: what a page may offer each token.
api GET /api/v1/token '' "Bearer $tok_read"
jq_is 'read-bot read []' 'b["name"] + " " + b["role"] + " " + json.dumps(b["may"])' "a read token may do nothing more"
api GET /api/v1/token '' "Bearer $tok_operate"
jq_is '["submit", "cancel", "retry", "events"]' 'b["may"]' "an operate token may submit, cancel, retry and post events"
api GET /api/v1/token '' "Bearer $tok_admin"
jq_is '["submit", "cancel", "retry", "events", "reload", "drain", "audit"]' 'b["may"]' "an admin token also reload, drain and read the audit trail"
api GET /api/v1/token
jq_is 'None read' 'str(b["name"]) + " " + b["role"]' "no token on loopback: a reader"
api GET /api/v1/token '' "Bearer not-a-token-0123456789abcdef"
code_is 403 "an unknown token is told so"
grep -q "admin: POST /api/v1/reload (token 'admin-bot')" "$host/serve.log"
ok $? "the log names the token behind a change"
api GET /api/v1/limits '' "Bearer $tok_read"
code_is 200 "read may GET /api/v1/limits"
api POST /api/v1/drain '' "Bearer $tok_admin"
code_is 202 "admin may POST /api/v1/drain"
wait "$serve_pid"
ok $? "serve drains and exits 0"
cleanup_host
done_testing
