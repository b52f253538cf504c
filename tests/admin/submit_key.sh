#!/bin/sh
# Idempotent submits: `submit --key K`, here and over --host, and the admin
# API's Idempotency-Key header give back the run recorded under K within
# submit_key_window instead of a new one; two submits racing one key get
# one run; after the window the key records a new run; a bad key is
# refused in one line.  (Both stores: tests/store/test_keyed.)
. "$SY_SRCDIR/tests/admin/lib.sh"
make_admin_host
cfg=$host/switchyard.cfg
cp "$cfg" "$host/base.cfg"
window() { { cat "$host/base.cfg"; echo "submit_key_window = \"$1\";"; } >"$cfg"; }
window 1h
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
runs_of_w() {
    python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])' \
        "$host/var/sy.db"
}

run submit w --key order-17
rc_is 0 "submit --key records a run"
first=$out
run submit w --key order-17 --context '{"other": 1}'
rc_is 0 "the same key again succeeds"
has "key 'order-17' names run $first, submitted within submit_key_window: no new run" \
    "saying the key named a run"
[ "$(printf '%s\n' "$out" | tail -n1)" = "$first" ]
ok $? "and printing that run's id"
run submit w --key order-18
[ "$out" != "$first" ] && [ "$(runs_of_w)" = 2 ]
ok $? "another key records another run"

# Two clients at once with one key: one run, both told its id.
$SY_WRAP "$SWITCHYARD" submit w --key raced >"$host/r1" 2>&1 &
p1=$!
$SY_WRAP "$SWITCHYARD" submit w --key raced >"$host/r2" 2>&1 &
p2=$!
wait $p1 $p2
[ "$(tail -n1 "$host/r1")" = "$(tail -n1 "$host/r2")" ] && [ "$(runs_of_w)" = 3 ]
ok $? "two submits racing one key record one run"

run submit w --key 'two words'
rc_is 2 "a key with a space is refused"
has "submit: --key: the key holds byte 0x20 at offset 3: use printable ASCII without spaces" \
    "in one line naming the byte"

window 1ms
run submit w --key order-17
[ "$out" != "$first" ] && [ "$(runs_of_w)" = 4 ]
ok $? "after the window the key records a new run"
window 1h

start_serve
ok $? "serve listens"
post() {
    code=$(curl -s -o "$host/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H 'Content-Type: application/json' "$@" --data-binary '{"workflow": "w"}' \
        "$base/api/v1/runs")
    body=$(cat "$host/body")
}
post -H 'Idempotency-Key: hook-1'
code_is 201 "POST with a new Idempotency-Key: 201"
jq_is true 'b["created"]' "created"
api_first=$(printf '%s' "$body" | python3 -c 'import json, sys; print(json.load(sys.stdin)["run_id"])')
post -H 'Idempotency-Key: hook-1'
code_is 200 "the same key again: 200"
jq_is "[$api_first, false]" '[b["run_id"], b["created"]]' "with the same run, not created"
post -H "Idempotency-Key: $(python3 -c 'print("k" * 257)')"
code_is 400 "a key over 256 bytes: 400"
jq_is "header Idempotency-Key: the key is 257 bytes: it must be 1 to 256" 'b["error"]' \
    "saying why"
run --host "$base" --token-file "$host/token" submit w --key hook-1
[ "$(printf '%s\n' "$out" | tail -n1)" = "$api_first" ]
ok $? "submit --host --key sends the header: the same run"
has "key 'hook-1' names run $api_first" "and says so"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
