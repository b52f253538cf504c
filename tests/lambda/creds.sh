#!/bin/sh
# Where the lambda plugin finds its credentials, in order: the instance
# settings, the environment, the shared credentials file and profile, the
# config file's profile.
# Secrets never appear in what the host prints.
. "$SY_SRCDIR/tests/lambda/lib.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-lambda-XXXXXX")
chmod 0700 "$dir"
trap 'stop_server; rm -rf "$dir"' EXIT
start_server --token 'session/token=='
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
    AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE AWS_CONTAINER_CREDENTIALS_FULL_URI \
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_ENDPOINT_URL_LAMBDA AWS_ENDPOINT_URL
HOME=$dir/home; export HOME
AWS_EC2_METADATA_DISABLED=true; export AWS_EC2_METADATA_DISABLED

workflow_one() {
    workflow one <<'WF'
workflow = {
  name = "lam::one";
  retry = { attempts = 1; };
  tasks = ( { id = "x"; function = "echo-creds"; } );
};
WF
}

make_lambda_host "access_key_id = \"$LAMBDA_KEY\"; secret_access_key = \"$LAMBDA_SECRET\";
                  session_token = \"session/token==\";"
workflow_one
run run lam::one
rc_is 0 "keys and session token from the instance settings sign the call"

make_lambda_host ""
run run lam::one
rc_is 2 "without any credentials the instance is refused"
has "no AWS credentials" "saying none were found"

AWS_ACCESS_KEY_ID=$LAMBDA_KEY AWS_SECRET_ACCESS_KEY=$LAMBDA_SECRET \
    AWS_SESSION_TOKEN='session/token==' run run lam::one
rc_is 0 "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN sign the call"

mkdir -p "$dir/home/.aws"
cat >"$dir/home/.aws/credentials" <<CRED
[default]
aws_access_key_id = $LAMBDA_KEY
aws_secret_access_key = $LAMBDA_SECRET
aws_session_token = session/token==
CRED
run run lam::one
rc_is 0 "the default profile of ~/.aws/credentials signs the call"

cat >"$dir/shared" <<CRED
# a comment
[default]
aws_access_key_id = AKIDWRONG
aws_secret_access_key = wrong
[ci]
aws_access_key_id = $LAMBDA_KEY
aws_secret_access_key = $LAMBDA_SECRET
aws_session_token = session/token==
CRED
AWS_SHARED_CREDENTIALS_FILE=$dir/shared AWS_PROFILE=ci run run lam::one
rc_is 0 "AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE pick the profile"

AWS_SHARED_CREDENTIALS_FILE=$dir/shared AWS_PROFILE=nope run run lam::one
rc_is 2 "a profile that is not in the file refuses the instance"
has "$dir/shared: no profile [nope]" "naming the file and the profile"

AWS_ACCESS_KEY_ID=$LAMBDA_KEY AWS_SECRET_ACCESS_KEY=$LAMBDA_SECRET \
    AWS_SESSION_TOKEN='session/token==' \
    AWS_SHARED_CREDENTIALS_FILE=$dir/shared AWS_PROFILE=nope run run lam::one
rc_is 0 "the environment comes before the shared file"

# The config file, as the AWS CLI writes it: [profile NAME] sections.
cat >"$dir/config" <<CONF
[default]
region = eu-west-1
[profile cfg]
region = us-east-1
aws_access_key_id = $LAMBDA_KEY
aws_secret_access_key = $LAMBDA_SECRET
aws_session_token = session/token==
CONF
AWS_SHARED_CREDENTIALS_FILE=$dir/shared AWS_CONFIG_FILE=$dir/config AWS_PROFILE=cfg run run lam::one
rc_is 0 "a profile found only in the config file ([profile cfg]) signs the call"
AWS_SHARED_CREDENTIALS_FILE=$dir/shared AWS_CONFIG_FILE=$dir/config AWS_PROFILE=none run run lam::one
rc_is 2 "a profile in neither file refuses the instance"
has "$dir/shared: no profile [none], nor [profile none] in $dir/config" "naming both files"

make_lambda_host "access_key_id = \"$LAMBDA_KEY\"; secret_access_key = \"not-the-secret-42\";"
AWS_SECRET_ACCESS_KEY=$LAMBDA_SECRET run run lam::one
rc_is 1 "the settings come before the environment: a wrong secret fails"
id=$(run_id)
is true "$id" 't["x"]["error"].startswith("InvalidSignatureException (HTTP 403)")' "Lambda's signature error is reported"
out="$out
$($SY_WRAP "$SWITCHYARD" status "$id" --json 2>&1)
$($SY_WRAP "$SWITCHYARD" plugins -v 2>&1)
$($SY_WRAP "$SWITCHYARD" check 2>&1)"
hasnt "not-the-secret-42" "the secret appears nowhere in run, status, plugins or check"

make_lambda_host "access_key_id = \"$LAMBDA_KEY\";"
run run lam::one
rc_is 2 "a key without its secret refuses the instance"
has "access_key_id: set with secret_access_key, or neither" "saying which key is missing"

# The metadata endpoints, last in the chain, served by the same endpoint.
rm -rf "$dir/home/.aws"
make_lambda_host ""
AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:$port/container/creds" \
    AWS_CONTAINER_AUTHORIZATION_TOKEN="Bearer container-token" run run lam::one
rc_is 0 "the container endpoint's credentials sign the call"
n=$(requests 'q.get("metadata") == "container"')
[ "$n" = 1 ]; ok $? "fetched once, with its authorization token"

AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:$port/container/creds" \
    AWS_CONTAINER_AUTHORIZATION_TOKEN="Bearer wrong" run run lam::one
rc_is 1 "a refused container endpoint fails the attempt"
id=$(run_id)
is true "$id" 't["x"]["error"].startswith("no AWS credentials: the container endpoint answered")' "saying where the credentials should have come from"

unset AWS_EC2_METADATA_DISABLED
AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$port/" run run lam::one
rc_is 0 "IMDSv2 (session token, role, credentials) signs the call"
n=$(requests 'q.get("metadata") == "token"')
[ "$n" = 1 ]; ok $? "the IMDSv2 session token was asked for with PUT"

# Credentials that expire within five minutes are refreshed in the
# background while the old ones still sign.
stop_server
start_server --token 'session/token==' --creds-ttl 240
make_lambda_host ""
workflow chain <<'WF'
workflow = {
  name = "lam::chain";
  retry = { attempts = 1; };
  tasks = (
    { id = "a"; function = "echo-chain"; },
    { id = "b"; after = ["a"]; function = "echo-chain"; },
    { id = "c"; after = ["b"]; function = "echo-chain"; }
  );
};
WF
AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$port" run run lam::chain
rc_is 0 "calls go on while expiring credentials are refreshed"
n=$(requests 'q.get("metadata") == "imds" and q.get("role") == "test-role"')
[ "$n" -ge 2 ]; ok $? "the credentials were fetched again before they expired ($n fetches)"

# An idle instance refreshes them too, so its next call does not wait for a
# fetch: credentials of 5 min 2 s are due for refresh 2 s after they came.
if [ -z "$SY_WRAP" ]; then
    stop_server
    start_server --token 'session/token==' --creds-ttl 302
    make_lambda_host ""
    run submit lam::one
    id=$out
    AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$port" "$SWITCHYARD" serve \
        >"$dir/serve.log" 2>&1 &
    spid=$!
    for _ in $(seq 1 100); do
        [ "$($SWITCHYARD status "$id" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')" = Completed ] && break
        sleep 0.05
    done
    n1=$(requests 'q.get("metadata") == "imds" and q.get("role") == "test-role"')
    sleep 3.5
    n2=$(requests 'q.get("metadata") == "imds" and q.get("role") == "test-role"')
    kill -TERM $spid
    wait $spid
    [ "$n1" -ge 1 ] && [ "$n2" -gt "$n1" ]
    ok $? "an idle instance fetched its expiring credentials again ($n1 fetches after the call, $n2 after 3.5 s idle)"
fi

done_testing
