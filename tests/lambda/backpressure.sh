#!/bin/sh
# The lambda plugin's answers to a strained Lambda, through `switchyard
# run`: 429s defer the task without charging an attempt, 5xx and refused
# connections are retried inside the plugin, a dropped connection or a
# timeout after the request went out is not, and a timed-out call is
# abandoned with a note.
. "$SY_SRCDIR/tests/lambda/lib.sh"
jget_cache=1 # every command below goes through `run`
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-lambda-XXXXXX")
chmod 0700 "$dir"
trap 'stop_server; rm -rf "$dir"' EXIT
start_server
make_lambda_host "access_key_id = \"$LAMBDA_KEY\"; secret_access_key = \"$LAMBDA_SECRET\";
                  retry_base = \"10ms\"; retry_max = \"50ms\";"

now_ms() { python3 -c 'import time; print(int(time.monotonic() * 1000))'; }

workflow throttle <<'WF'
workflow = {
  name = "lam::throttle";
  retry = { attempts = 1; };
  tasks = (
    { id = "header"; function = "throttle-2"; },
    { id = "body"; function = "throttlebody-1"; },
    { id = "bare"; function = "throttlebare-1"; }
  );
};
WF
t0=$(now_ms)
run run lam::throttle
t1=$(now_ms)
rc_is 0 "throttled tasks complete once Lambda lets them through"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["header"]["status"], t["header"]["attempts"]]' "two 429s with Retry-After charge no attempt"
is '["Completed", 1]' "$id" '[t["body"]["status"], t["body"]["attempts"]]' "a 429 with retryAfterSeconds in the body charges none"
is '["Completed", 1]' "$id" '[t["bare"]["status"], t["bare"]["attempts"]]' "a 429 without a hint charges none"
[ $((t1 - t0)) -ge 1900 ]; ok $? "Retry-After was honoured: two 1 s pauses (took $((t1 - t0)) ms)"
out=$(notes "$id")
has "throttled: ReservedFunctionConcurrentInvocationLimitExceeded" "the 429's Reason is recorded with the attempt"
has "throttled: FunctionInvocationRateLimitExceeded" "from the body too"
has "throttled: ConcurrentInvocationLimitExceeded" "and without a retry hint"
n=$(requests 'q.get("name") == "throttle-2"')
[ "$n" = 3 ]; ok $? "the throttled call was offered three times ($n)"

# Retry-After may be an HTTP date (RFC 9110): two seconds ahead, to the
# second, is a pause of one to two seconds.
workflow dated <<'WF'
workflow = {
  name = "lam::dated";
  retry = { attempts = 1; };
  tasks = ( { id = "d"; function = "throttledate-1"; } );
};
WF
t0=$(now_ms)
run run lam::dated
t1=$(now_ms)
rc_is 0 "a 429 whose Retry-After is an HTTP date is waited out"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["d"]["status"], t["d"]["attempts"]]' "and charges no attempt"
[ $((t1 - t0)) -ge 900 ]; ok $? "the date was honoured: a pause of a second or more (took $((t1 - t0)) ms)"

workflow faults <<'WF'
workflow = {
  name = "lam::faults";
  retry = { attempts = 1; };
  tasks = (
    { id = "flaky"; function = "error5xx-2"; },
    { id = "down"; function = "error5xx-9"; },
    { id = "drop"; function = "drop-sync"; },
    { id = "slow"; function = "slow-5000"; timeout = "300ms"; },
    { id = "slowev"; function = "slow-5000"; invocation_type = "Event"; timeout = "300ms"; }
  );
};
WF
run run lam::faults
rc_is 1 "a run with failed calls exits 1"
id=$(run_id)
is '["Completed", 1]' "$id" '[t["flaky"]["status"], t["flaky"]["attempts"]]' "two 5xx are retried inside the plugin: one attempt"
n=$(requests 'q.get("name") == "error5xx-2"')
[ "$n" = 3 ]; ok $? "with three requests"
is '["Failed", 1]' "$id" '[t["down"]["status"], t["down"]["attempts"]]' "a 5xx past the retries fails the attempt"
is true "$id" 't["down"]["error"].startswith("ServiceException (HTTP 500): internal failure")' "with Lambda's type and message"
n=$(requests 'q.get("name") == "error5xx-9"')
[ "$n" = 4 ]; ok $? "after 1 + retries (3) requests"
is Failed "$id" 't["drop"]["status"]' "a connection dropped after the request fails the attempt"
is true "$id" '"dropped after the request was sent" in t["drop"]["error"] and "not retried" in t["drop"]["error"]' "saying the function may have run"
n=$(requests 'q.get("name") == "drop-sync"')
[ "$n" = 1 ]; ok $? "and is not retried by the plugin"
is Failed "$id" 't["slow"]["status"]' "a call past the task's timeout fails"
is true "$id" '"timed out after 300ms" in t["slow"]["error"]' "as timed out"
out=$(notes "$id" stale)
n=$(printf '%s\n' "$out" | grep -c "attempt 1 cancelled after its timeout")
[ "$n" = 2 ]; ok $? "the host's cancel at the deadline abandons both calls (sync and Event)"

# A kept-alive connection that dies under a call: curl would send the
# request again on a fresh connection; the plugin refuses, since the
# function may have run.
workflow reuse <<'WF'
workflow = {
  name = "lam::reuse";
  retry = { attempts = 1; };
  tasks = (
    { id = "warm"; function = "echo-warm"; },
    { id = "drop"; after = ["warm"]; function = "drop-reused"; }
  );
};
WF
run run lam::reuse
id=$(run_id)
is true "$id" '"dropped after the request was sent" in t["drop"]["error"]' "a call on a reused connection that drops fails the attempt"
n=$(requests 'q.get("name") == "drop-reused"')
[ "$n" = 1 ]; ok $? "and was sent once: curl's own resend on a fresh connection is refused ($n)"

# Nothing listens: refused connections are retried, then fail.
free_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
port=$free_port
make_lambda_host "access_key_id = \"$LAMBDA_KEY\"; secret_access_key = \"$LAMBDA_SECRET\";
                  retries = 2; retry_base = \"10ms\"; connect_timeout = \"1s\";"
workflow refused <<'WF'
workflow = {
  name = "lam::refused";
  retry = { attempts = 1; };
  tasks = ( { id = "x"; function = "echo-refused"; } );
};
WF
run run lam::refused
rc_is 1 "an unreachable endpoint fails the run"
id=$(run_id)
is true "$id" 't["x"]["error"].startswith("could not reach http://127.0.0.1:'"$free_port"' after 3 tries")' "after the plugin's retries, naming the endpoint"

done_testing
