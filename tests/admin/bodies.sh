#!/bin/sh
# What a client sends is checked before anything is done: bad JSON and
# wrong fields are 400 naming the field, a body over admin.max_body 413,
# headers over admin.max_header refused, and the host goes on serving.
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; max_body = 2048; max_header = 8192;'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens"
api POST /api/v1/runs '{"workflow": "w",' token
code_is 400 "truncated JSON is 400"
has "body: invalid JSON at line 1" "with the line and column"
api POST /api/v1/runs '[1, 2]' token
code_is 400 "an array is 400"
has "body: must be a JSON object" "saying what it must be"
api POST /api/v1/runs '{"workflow": 7}' token
code_is 400 "a workflow that is not a string is 400"
has "field 'workflow'" "naming the field"
api POST /api/v1/runs '{"workflow": "w", "context": "x"}' token
code_is 400 "a context that is not an object is 400"
has "field 'context'" "naming the field"
api POST /api/v1/runs '{"workflow": "w", "contxt": {}}' token
code_is 400 "an unknown field is 400"
has "unknown field 'contxt'" "naming it"
api POST /api/v1/runs '{"workflow": "w", "workflow": "w"}' token
code_is 400 "a duplicated key is 400"
api POST /api/v1/runs '{"workflow": "w", "priority": "high"}' token
code_is 400 "a priority that is not an integer is 400"
has "field 'priority' must be an integer from -1000000 to 1000000" "naming the field and its range"
api POST /api/v1/runs '{"workflow": "w", "priority": 1000001}' token
code_is 400 "a priority out of range is 400"
api POST /api/v1/runs '{"workflow": "nope"}' token
code_is 404 "an unknown workflow is 404"
api POST /api/v1/runs/1/retry '{"dry_run": "yes"}' token
code_is 400 "retry: dry_run must be a boolean"
has "field 'dry_run'" "naming the field"
api POST /api/v1/runs/1/retry '{"no_cache": 1}' token
code_is 400 "retry: no_cache must be a boolean"
has "field 'no_cache' must be true or false" "naming the field"
big=$(python3 -c 'print("{\"workflow\": \"w\", \"context\": {\"x\": \"" + "a" * 4000 + "\"}}")')
api POST /api/v1/runs "$big" token
code_is 413 "a body over admin.max_body is 413"
has "admin.max_body" "naming the limit"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(python3 -c 'print("h" * 12000)')" \
    "$base/api/v1/health")
case "$code" in 413|431) ok 0 "headers over admin.max_header are refused ($code)" ;;
*) echo "# HTTP $code"; ok 1 "headers over admin.max_header are refused" ;; esac
api POST /api/v1/runs '{"workflow": "w", "context": {"k": 1}}' token
code_is 201 "and a good request after them is served"
jq_is '[1, "Pending"]' '[b["run_id"], b["status"]]' "with the new run"
api POST /api/v1/runs '{"workflow": "w", "priority": -7}' token
code_is 201 "a run submitted with a priority"
api GET /api/v1/runs/2 '' token
jq_is '-7' 'b["priority"]' "keeps it: the run reads back with it"
api POST /api/v1/reload 'x' token
code_is 400 "a body where none is taken is 400"
api POST /api/v1/reload '{"now": true}' token
code_is 400 "and so is an object with fields"
api POST /api/v1/reload ' { } ' token
code_is 200 "an empty JSON object is an empty body"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
