#!/bin/sh
# examples/lambda runs as its README says, against the loopback endpoint.
. "$SY_SRCDIR/tests/lambda/lib.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-lambda-ex-XXXXXX")
chmod 0700 "$dir"
trap 'stop_server; rm -rf "$dir"' EXIT
start_server --region eu-west-1
cp -R "$SY_SRCDIR/examples/lambda/." "$dir/"
chmod -R u+w "$dir"
mkdir -p "$dir/plugins"
install -m 0755 "$SY_THREAD_PLUGIN" "$dir/plugins/thread.so"
install -m 0755 "$SY_LAMBDA_PLUGIN" "$dir/plugins/lambda.so"
host=$dir
SWITCHYARD_CONFIG="$dir/switchyard.cfg"; export SWITCHYARD_CONFIG
AWS_ENDPOINT_URL_LAMBDA="http://127.0.0.1:$port"; export AWS_ENDPOINT_URL_LAMBDA
AWS_ACCESS_KEY_ID=$LAMBDA_KEY; export AWS_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY=$LAMBDA_SECRET; export AWS_SECRET_ACCESS_KEY
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL

run check
rc_is 0 "the example checks clean"
run route public::scoring::nightly::canary --quiet
has aws "its namespace routes to the lambda instance"
run run scoring::nightly --context '{"batch": 1}'
rc_is 0 "the example runs to its end"
id=$(run_id)
is '["score-batch", "live"]' "$id" '[t["live"]["output"]["function"], t["live"]["output"]["qualifier"]]' "the instance's default function and alias"
is '["score-batch", "canary"]' "$id" '[t["canary"]["output"]["function"], t["canary"]["output"]["qualifier"]]' "a task's alias overrides it"
n=$(requests 'q.get("name") == "announce-scores" and q["type"] == "Event" and q["qualifier"] == "$LATEST"')
[ "$n" = 1 ]; ok $? "the announcement is an Event call"
n=$(requests 'q.get("log_type") == "Tail"')
[ "$n" = 2 ]; ok $? "log_tail asks for the log of the sync calls"
done_testing
