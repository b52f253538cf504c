#!/bin/sh
# The audit trail: every change through the command line and the admin
# API, refused ones included, stored with who (token name or local user),
# role, action, target, origin, status and detail; listed by
# `switchyard audit` (filters, --json, over --host) and GET /api/v1/audit,
# which only an admin token may read; `gc` deletes rows past audit_keep.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "127.0.0.1:0"; tokens_file = "tokens";'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
me=$(id -un)
for r in read operate admin; do
    tok=$($SY_WRAP "$SWITCHYARD" token new --role "$r" --name "$r-bot" 2>/dev/null)
    eval "tok_$r=\$tok"
done
printf '%s\n' "$tok_admin" >"$host/admin.token"
chmod 600 "$host/admin.token"

# audit_json [ARGS]: `switchyard audit --json ARGS` into $body.
audit_json() { body=$($SY_WRAP "$SWITCHYARD" audit --json "$@" 2>"$host/audit.err"); }

audit_json --action "token new"
jq_is 3 'len(b)' "each token made is in the trail"
jq_is "$me local cli token admin-bot (admin)" \
    'b[0]["who"] + " " + b[0]["role"] + " " + b[0]["origin"] + " " + b[0]["target"]' \
    "as the local user, from the command line, naming the token and role"

run=$($SY_WRAP "$SWITCHYARD" submit w)
audit_json --action submit
jq_is "True workflow w run $run" \
    'str(b[0]["ok"]) + " " + b[0]["target"] + " " + b[0]["detail"]' "a local submit is recorded with the run it made"
$SY_WRAP "$SWITCHYARD" cancel "$run" >/dev/null
audit_json --action cancel
jq_is "$me run $run Cancelled" '" ".join(b[0][k] for k in ("who", "target", "detail"))' \
    "a local cancel is recorded with what it did"
$SY_WRAP "$SWITCHYARD" retry "$run" --detach --quiet >/dev/null
audit_json --action retry
jq_is "run $run reopened" 'b[0]["target"] + " " + b[0]["detail"]' "a local retry too"
$SY_WRAP "$SWITCHYARD" submit nope >/dev/null 2>&1
audit_json --action submit
jq_is 1 'len(b)' "a local submit refused changes nothing, the trail included"

start_serve
ok $? "serve listens"
api POST /api/v1/runs '{"workflow": "w"}' "Bearer $tok_operate"
code_is 201 "an operate token submits"
api_run=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
api POST "/api/v1/runs/$api_run/cancel" '' "Bearer $tok_read"
code_is 403 "a read token may not cancel"
api POST /api/v1/reload '' "Bearer not-a-token-0123456789abcdef"
code_is 403 "an unknown token may not reload"
api POST /api/v1/reload '' "Bearer $tok_admin"
code_is 200 "an admin token reloads"

api GET /api/v1/audit '' "Bearer $tok_operate"
code_is 403 "an operate token may not read the trail"
api GET /api/v1/audit
code_is 401 "nor may a request without a token, even on loopback"
api GET "/api/v1/audit?limit=4" '' "Bearer $tok_admin"
code_is 200 "an admin token reads the trail"
jq_is '["reload", "reload", "cancel", "submit"]' '[r["action"] for r in b["audit"]]' \
    "newest first, refused changes included"
jq_is "admin-bot admin 127.0.0.1 200 True" \
    '" ".join(str(b["audit"][0][k]) for k in ("who", "role", "origin", "status", "ok"))' \
    "a change names its token, role, address and status"
jq_is "- - 403 False the token is wrong" \
    '" ".join(str(b["audit"][1][k]) for k in ("who", "role", "status", "ok", "detail"))' \
    "an unknown token is recorded as no one, refused"
jq_is "read-bot read run $api_run 403" \
    '" ".join(str(b["audit"][2][k]) for k in ("who", "role", "target", "status"))' \
    "a role too low is recorded with the token it was"
jq_is "operate-bot workflow w run $api_run 201" \
    '" ".join(str(b["audit"][3][k]) for k in ("who", "target", "detail", "status"))' \
    "a submit names the workflow and the run it made"
jq_is true 'isinstance(b["next_before"], int)' "a full page says where the next starts"
api GET "/api/v1/audit?who=read-bot" '' "Bearer $tok_admin"
jq_is '["cancel"]' '[r["action"] for r in b["audit"]]' "filtered by who"
api GET "/api/v1/audit?limit=0" '' "Bearer $tok_admin"
code_is 400 "a limit out of range is refused"

kill -HUP "$serve_pid"
for _ in $(seq 1 100); do
    grep -q "tokens read again" "$host/serve.log" && break
    sleep 0.1
done
body=$($SY_WRAP "$SWITCHYARD" --host "$base" --token-file "$host/admin.token" audit --json \
       --action reload --limit 1)
jq_is "$me local signal True" \
    '" ".join(str(b[0][k]) for k in ("who", "role", "origin", "ok"))' \
    "a SIGHUP reload is recorded, read over --host"
$SY_WRAP "$SWITCHYARD" audit --since 1h >"$host/table"
grep -q "operate-bot .*submit .*workflow w .*127.0.0.1 .*201 .*run $api_run" "$host/table"
ok $? "the table shows one change a line"
stop_serve
ok $? "serve stops cleanly"

$SY_WRAP "$SWITCHYARD" audit --since soon >/dev/null 2>"$host/audit.err"
[ $? -eq 2 ] && grep -q "audit: --since 'soon'" "$host/audit.err"
ok $? "a bad --since is a usage error naming it"
echo 'audit_keep = "1h";' >>"$host/switchyard.cfg"
$SY_WRAP "$SWITCHYARD" gc --older-than 30d >"$host/gc.out"
ok $? "gc runs"
audit_json --action gc
jq_is 1 'len(b)' "gc is in the trail"
grep -q "audit row" "$host/gc.out"; [ $? -ne 0 ]
ok $? "and deletes no row younger than audit_keep"
cleanup_host
done_testing
