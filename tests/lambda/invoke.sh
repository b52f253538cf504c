#!/bin/sh
# The lambda plugin through `switchyard run`: a routing file sends the
# `lam` workflows to a lambda instance, which calls the loopback Lambda
# endpoint (tests/lambda/server.py; every signature checked).
. "$SY_SRCDIR/tests/lambda/lib.sh"
jget_cache=1 # every command below goes through `run`
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-lambda-XXXXXX")
chmod 0700 "$dir"
trap 'stop_server; rm -rf "$dir"' EXIT
start_server --max-payload 100000
make_lambda_host "access_key_id = \"$LAMBDA_KEY\"; secret_access_key = \"$LAMBDA_SECRET\";
                  function = \"echo-default\"; log_tail = false;"

workflow basic <<'WF'
workflow = {
  name = "lam::basic";
  retry = { attempts = 2; delay = 0; };
  tasks = (
    { id = "sync"; function = "echo-a"; qualifier = "live"; },
    { id = "dflt"; },
    { id = "arn"; function = "arn:aws:lambda:us-east-1:123456789012:function:echo-arn:prod"; },
    { id = "partial"; function = "123456789012:function:echo-partial"; qualifier = "$LATEST"; },
    { id = "event"; function = "echo-ev"; invocation_type = "Event"; },
    { id = "fail"; function = "fail-x"; log_tail = true; retry = { attempts = 1; }; },
    { id = "missing"; function = "missing-x"; },
    { id = "scalar"; function = "scalar-x"; },
    { id = "ctx"; function = "echo-ctx"; client_context = "{\"custom\": {\"k\": \"v\"}}"; },
    { id = "next"; after = ["sync"]; function = "echo-next"; qualifier = "7"; }
  );
};
WF
run run lam::basic --context '{"x": 1}'
rc_is 1 "a run with a failing function exits 1"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["sync"]["status"], t["sync"]["attempts"]]' "a RequestResponse call completes on its first attempt"
is '{"function": "echo-a", "input": {"x": 1}, "invocation_type": "RequestResponse", "qualifier": "live"}' "$id" 't["sync"]["output"]' "the input context is the payload, the JSON answer the output, the qualifier sent"
is echo-default "$id" 't["dflt"]["output"]["function"]' "a task without function gets the instance's default"
is 'arn:aws:lambda:us-east-1:123456789012:function:echo-arn:prod' "$id" 't["arn"]["output"]["function"]' "a full ARN with an alias is encoded in the path and signed as the service signs it"
is '["123456789012:function:echo-partial", "$LATEST"]' "$id" '[t["partial"]["output"]["function"], t["partial"]["output"]["qualifier"]]' "a partial ARN and the \$LATEST qualifier pass"
is '["Completed", null]' "$id" '[t["event"]["status"], t["event"]["output"]]' "an Event call completes when Lambda accepts it (202)"
n=$(requests 'q.get("name") == "echo-ev" and q["type"] == "Event"')
[ "$n" = 1 ]; ok $? "it was sent with X-Amz-Invocation-Type: Event"
is Failed "$id" 't["fail"]["status"]' "X-Amz-Function-Error fails the attempt"
is true "$id" 't["fail"]["error"].startswith("ValueError: bad input")' "with the function's errorType: errorMessage"
is true "$id" '"hello from fail-x" in t["fail"]["error"]' "and the log tail it asked for"
is '["Failed", 2]' "$id" '[t["missing"]["status"], t["missing"]["attempts"]]' "a 4xx fails each attempt; the task's policy retries"
is true "$id" 't["missing"]["error"].startswith("ResourceNotFoundException (HTTP 404): Function not found")' "with Lambda's error type and message"
n=$(requests 'q.get("name") == "missing-x"')
[ "$n" = 2 ]; ok $? "a 4xx is not retried inside the plugin (one request per attempt)"
is '{"result": "hello"}' "$id" 't["scalar"]["output"]' "an answer that is not an object becomes {\"result\": ...}"
is '{"custom": {"k": "v"}}' "$id" 't["ctx"]["output"]["client_context"]' "the client context reaches the function"
is '["echo-a", 1]' "$id" '[t["next"]["output"]["input"]["function"], t["next"]["output"]["input"]["x"]]' "a downstream task's payload is its context: the run's and its dependency's output"
n=$(requests 'q.get("name") and not q["sig_ok"]')
[ "$n" = 0 ]; ok $? "every request carried a valid SigV4 signature"
out=$(notes "$id")
has "executed version 7" "X-Amz-Executed-Version is recorded with the attempt"
has "accepted as an Event" "an Event attempt says the function runs asynchronously"

# Payload limits: checked before sending, and the endpoint's own 413.
python3 -c 'import json; print(json.dumps({"blob": "x" * 60000}))' >"$dir/big.json"
workflow small <<'WF'
workflow = {
  name = "lamsmall::limits";
  retry = { attempts = 1; };
  tasks = ( { id = "big"; function = "echo-toolarge"; } );
};
WF
run run lamsmall::limits --context "@$dir/big.json"
rc_is 1 "an input over max_payload_sync fails the run"
id=$(run_id)
is true "$id" '"over the 50000-byte limit of RequestResponse invocations (max_payload_sync)" in t["big"]["error"]' "the error says the size and the limit"
is true "$id" '"is 60011 bytes" in t["big"]["error"]' "and the input's size"
n=$(requests 'q.get("name") == "echo-toolarge"')
[ "$n" = 0 ]; ok $? "no request was sent"

python3 -c 'import json; print(json.dumps({"blob": "x" * 150000}))' >"$dir/huge.json"
workflow large <<'WF'
workflow = {
  name = "lam::large";
  retry = { attempts = 1; };
  tasks = ( { id = "huge"; function = "echo-huge"; } );
};
WF
run run lam::large --context "@$dir/huge.json"
id=$(run_id)
is true "$id" 't["huge"]["error"].startswith("RequestEntityTooLargeException (HTTP 413)")' "an endpoint's 413 is reported with its type"

# A bad task parameter is a configuration error, with the file and line.
workflow bad <<'WF'
workflow = {
  name = "lam::bad";
  tasks = ( { id = "x"; function = "echo"; invocation_type = "Sync"; } );
};
WF
run check
rc_is 1 "check refuses a bad invocation_type"
has 'bad.cfg:' "naming the workflow file"
has 'invocation_type: must be "RequestResponse" or "Event", got "Sync"' "and what is wrong"
rm -f "$dir/workflows/bad.cfg"

done_testing
