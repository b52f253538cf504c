#!/bin/sh
# The event stream tells named events and cache hits, each as an event of
# its own: `named` (its id, name, key and payload) for an event posted to
# the API or recorded by `switchyard emit` on the same store, once, in
# order, never one recorded before the stream opened nor a key's
# duplicate, from an empty store on; `cached` for a task Completed from
# the cache (its run, task and the run whose output it took).  A read
# token may follow it; a client of one run hears no named event.
. "$SY_SRCDIR/tests/admin/lib.sh"
# Under valgrind (SY_WRAP) the timing these streams watch is too slow to
# be meaningful; the sanitizer pass runs it.
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP streams under valgrind"
    exit 0
fi
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; tokens_file = "tokens";'
workflow conv <<'WF'
workflow = { name = "conv"; tasks = (
  { id = "a"; command = ["sh", "-c", "echo '{\"rows\": 7}'"];
    cache = { key = "{file}"; lifetime = "1h"; }; },
  { id = "b"; after = ["a"]; command = ["true"]; }
); };
WF
workflow landed <<'WF'
workflow = { name = "landed";
  triggers = ( { name = "raw"; event = "file.landed";
                 when = ( { path = "bucket"; equals = "raw"; } ); } );
  tasks = ( { id = "a"; command = ["true"]; } ); };
WF
reader=$("$SWITCHYARD" token new --role read --name watcher 2>"$host/token.err")
ok $? "a read token"
start_serve
ok $? "serve listens"

api POST /api/v1/runs '{"workflow": "conv", "context": {"file": "x.csv"}}' token
code_is 201 "a first run of conv"
first=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
wait_status "$first" Completed
ok $? "it ran its task"

curl -sN --max-time 30 -H "Authorization: Bearer $reader" "$base/api/v1/events" \
    >"$host/all.sse" 2>/dev/null &
all=$!
curl -sN --max-time 30 "$base/api/v1/events?run=$first" >"$host/one.sse" 2>/dev/null &
one=$!
subscribed "$host/all.sse" "$host/one.sse"
ok $? "the event streams are subscribed"

api POST /api/v1/events '{"name": "file.landed", "data": {"bucket": "raw"}, "key": "a.csv"}' token
code_is 201 "an event posted"
posted=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["event_id"])')
api POST /api/v1/events '{"name": "file.landed", "data": {"bucket": "raw"}, "key": "a.csv"}' token
code_is 200 "its key again: a duplicate"
big=$(python3 -c 'print("x" * 2000)')
"$SWITCHYARD" emit big.one --data "{\"blob\": \"$big\"}" >/dev/null 2>&1
ok $? "an event recorded by emit on the same store"
api POST /api/v1/runs '{"workflow": "conv", "context": {"file": "x.csv"}}' token
second=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
wait_status "$second" Completed
ok $? "a second run with the same input"
for _ in $(seq 1 100); do
    grep -q '^event: cached' "$host/all.sse" && grep -q 'big.one' "$host/all.sse" &&
        grep -q '^event: trigger' "$host/all.sse" && break
    sleep 0.1
done
sleep 0.3
kill "$all" "$one" 2>/dev/null
wait "$all" "$one" 2>/dev/null

# kind|what: the named and cached events, in order.
sse_each "$host/all.sse" '
if ev == "named":
    print("named", d["event_id"], d["name"], d["key"], json.dumps(d.get("data")),
          d["data_bytes"])
elif ev == "cached":
    print("cached", d["run_id"], d["workflow"], d["task"], d["state"], d["attempt"],
          d["from_run"])
elif ev == "trigger":
    print("trigger", d["workflow"], d["trigger"])' >"$host/events.txt"
got=$(cat "$host/events.txt")
echo "$got" | sed 's/^/# /'
named=$(echo "$got" | grep '^named')
case "$named" in
"named $posted file.landed a.csv {\"bucket\": \"raw\"} 16
named $((posted + 1)) big.one None null 2011") ok 0 "each named event once, in order, with id, name, key and payload" ;;
*) ok 1 "each named event once, in order, with id, name, key and payload" ;;
esac
[ "$(echo "$got" | grep '^cached')" = "cached $second conv a Completed 1 $first" ]
ok $? "the cache hit: its run, task, state, attempt and the run it took the output of"
echo "$got" | grep -q '^trigger landed raw'
ok $? "the event fired its trigger"
grep -q '^event: named' "$host/one.sse"
[ $? -ne 0 ]; ok $? "a client of one run hears no named event"

# Nobody listens now: the next client starts from the newest event.
"$SWITCHYARD" emit before.open --data '{"n": 0}' >/dev/null 2>&1
ok $? "an event recorded while nobody listens"
curl -sN --max-time 30 "$base/api/v1/events" >"$host/late.sse" 2>/dev/null &
late=$!
subscribed "$host/late.sse"
ok $? "the late stream is subscribed"
api POST /api/v1/events '{"name": "after.open"}' token
for _ in $(seq 1 100); do grep -q 'after.open' "$host/late.sse" && break; sleep 0.1; done
kill "$late" 2>/dev/null
wait "$late" 2>/dev/null
[ "$(sse_each "$host/late.sse" 'print(d["name"]) if ev == "named" else None')" = after.open ]
ok $? "a later client hears the events recorded after it came, not before"

stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
