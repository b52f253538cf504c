#!/bin/sh
# The grant order of a contended key across hosts (docs/flow-control.md,
# "The order across hosts"): two `serve` hosts on one PostgreSQL database
# (a throwaway server), a pool of 1 slot.  Host A holds the slot and has
# three low-priority tasks waiting for it; then host B gets a run of
# priority 10, whose task waits too, newer than A's.  `switchyard limits`
# lists the four waiters with B's first; when A's holder ends, B's task
# takes the slot before A's older waiters, on A's own host's return.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-sensitive (a stopped host); it runs in the sanitizer pass"
    exit 0
fi
pg_store_host 'lease = "10s";
pools = { one = 1; };'
workflow blocker <<'WF'
workflow = { name = "blocker"; pool = "one"; tasks = ( { id = "hold"; sleep_ms = 1500; } ); };
WF
workflow low <<'WF'
workflow = { name = "low"; pool = "one"; tasks = ( { id = "t"; sleep_ms = 30; } ); };
WF
workflow high <<'WF'
workflow = { name = "high"; pool = "one"; priority = 10; tasks = ( { id = "t"; sleep_ms = 30; } ); };
WF
q() { "$PSQL" -qtA "$url" -c "$1"; }
# Polls (up to 10 s) until query $1 answers $2.
until_is() {
    for _ in $(seq 1 500); do
        [ "$(q "$1")" = "$2" ] && return 0
        sleep 0.02
    done
    return 1
}

run submit blocker
lows=""
for _ in 1 2 3; do
    run submit low
    lows="$lows $(run_id)"
done
"$SWITCHYARD" serve >"$host/a.log" 2>&1 &
a=$!
until_is "SELECT count(*) FROM slot_waiters" 3
ok $? "host A holds the pool's slot and its 3 tasks wait for it in the store"
# A stands still while B claims the new run (A's lease holds: 10 s).
kill -STOP "$a"
run submit high
high=$(run_id)
"$SWITCHYARD" serve >"$host/b.log" 2>&1 &
b=$!
until_is "SELECT count(*) FROM slot_waiters WHERE run_id = $high AND owner LIKE '%:$b'" 1
ok $? "host B's task of priority 10 waits in the store too"
seen=$("$SWITCHYARD" limits --json 2>&1)
python3 - "$seen" "$high" "$b" "$a" <<'PY'
import json, sys
k = {x["key"]: x for x in json.loads(sys.argv[1])["keys"]}["pool:one"]
w = k["waiters"]
assert k["held"] == 1 and k["waiting"] == 4 and len(w) == 4, k
assert [x["position"] for x in w] == [1, 2, 3, 4], w
assert w[0]["run"] == int(sys.argv[2]) and w[0]["priority"] == 10, w
assert w[0]["host"].endswith(":" + sys.argv[3]), w
assert all(x["host"].endswith(":" + sys.argv[4]) and x["priority"] == 0 for x in w[1:]), w
assert w[1]["since"] <= w[2]["since"] <= w[3]["since"], w
PY
ok $? "switchyard limits lists pool:one's 4 waiters, B's first ($(printf '%s' "$seen" | head -c 200))"
text=$("$SWITCHYARD" limits 2>&1)
case $text in
*"pool:one: 1 held of 1, 4 waiting"*"waiting #1: run $high "*":$b"*) ok 0 "switchyard limits prints the queue" ;;
*) ok 1 "switchyard limits prints the queue (got: $text)" ;;
esac
kill -CONT "$a"
until_is "SELECT count(*) FROM runs WHERE state IN (0, 1)" 0
ok $? "every run is over"
first=$(q "SELECT run_id FROM tasks t JOIN runs r ON r.id = t.run_id WHERE r.workflow <> 'blocker' ORDER BY t.started LIMIT 1")
[ "$first" = "$high" ]
first_ok=$?
# How long the slot stood free between A's holder and B's waiter: B is
# woken by A's give-back (store/postgres/slots.c), not left to its retry.
gap=$(q "SELECT h.started - b.finished FROM tasks h, tasks b JOIN runs r ON r.id = b.run_id WHERE h.run_id = $high AND r.workflow = 'blocker'")
ok $first_ok "B's task of priority 10 started first, before A's older waiters (first: run $first, high: run $high; $gap ms after A's holder ended)"
order=$(q "SELECT string_agg(t.run_id::text, ' ' ORDER BY t.started) FROM tasks t JOIN runs r ON r.id = t.run_id WHERE r.workflow = 'low'")
[ " $order" = "$lows" ]
ok $? "A's waiters then in order of readiness ($order; submitted$lows)"
left=$(q "SELECT count(*) FROM slot_waiters")
[ "$left" = 0 ]
ok $? "no waiter row is left ($left)"
kill -TERM "$a" "$b"
wait "$a" "$b"
ok $? "both hosts drain and exit 0"
cleanup_host
done_testing
