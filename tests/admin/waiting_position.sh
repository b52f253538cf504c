#!/bin/sh
# A Waiting task's queue position is current wherever it is read: four
# tasks on one key of limit 1, one holding it, three waiting.  The admin
# API's run and `status` (text and --json) say "position P of 3 waiting"
# with "waiting_key", "waiting_position" and "waiting_count"; once the
# holder ends and the first waiter starts, the one that was second says
# "position 1 of 2 waiting", though the engine wrote its reason once
# (docs/flow-control.md, "Waiting, and why").  A map's waiting elements
# are placed the same way.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a serving host polled while tasks hold and wait for a key; the sanitizer pass runs it"
    exit 0
fi
make_admin_host
cd "$host" || exit 1
# Each task holds the key until its own file go-ID is there.
hold() { printf '{ id = "hold_%s"; command = ["sh", "-c", "while [ ! -f %s/go-hold_%s ]; do sleep 0.05; done"]; }' "$1" "$host" "$1"; }
workflow w <<WF
workflow = { name = "w"; limits = ( { key = "db"; limit = 1; } );
  tasks = ( $(hold a), $(hold b), $(hold c), $(hold d) ); };
WF
# And a map of 3 elements on the key.
workflow m <<WF
workflow = { name = "m"; limits = ( { key = "db"; limit = 1; } );
  tasks = ( { id = "fan"; map_range = 3;
              command = ["sh", "-c", "while [ ! -f $host/go-fan ]; do sleep 0.05; done"]; } ); };
WF
start_serve
ok $? "serve listens"
api POST /api/v1/runs '{"workflow": "w"}' token
code_is 201 "a run submitted"
id=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')

# queue: "HOLDER W1 W2 ..." from the last body: the Running task, then the
# Waiting ones by their position; empty until every waiter has one.
queue() {
    printf '%s' "$body" | python3 -c '
import json, sys
t = json.load(sys.stdin)["tasks"]
run = [x["id"] for x in t if x["status"] == "Running"]
w = [x for x in t if x["status"] == "Waiting"]
if len(run) == 1 and w and all(x.get("waiting_position") for x in w):
    print(" ".join(run + [x["id"] for x in sorted(w, key=lambda x: x["waiting_position"])]))'
}
# until_queue N: polls the API (10 s at most) until one task runs and N wait.
until_queue() {
    for _ in $(seq 1 200); do
        api GET "/api/v1/runs/$id"
        set -- "$1" $(queue)
        [ $# -eq $(($1 + 2)) ] && return 0
        set -- "$1"
        sleep 0.05
    done
    echo "# never one running and $1 waiting: $body"
    return 1
}

until_queue 3
ok $? "one task holds the key, three wait, each with its position"
set -- $(queue)
holder=$1 first=$2 second=$3 third=$4
jq_is '[[1, 3], [2, 3], [3, 3]]' \
    'sorted([t["waiting_position"], t["waiting_count"]] for t in b["tasks"] if t["status"] == "Waiting")' \
    "the API: positions 1, 2 and 3 of 3"
jq_is true \
    "[t for t in b['tasks'] if t['id'] == '$second'][0]['waiting_for'].endswith('position 2 of 3 waiting)')" \
    "the API: the second says so in waiting_for"
jq_is '["key:db", "key:db", "key:db"]' \
    '[t["waiting_key"] for t in b["tasks"] if t["status"] == "Waiting"]' \
    "the API: the key each waits for"
jq_is '[]' '[k for t in b["tasks"] if t["status"] != "Waiting" for k in t if k.startswith("waiting_") and k != "waiting_for"]' \
    "the API: the running task has no waiting fields"

# The holder ends; the first waiter takes the key.
: >"$host/go-$holder"
for _ in $(seq 1 200); do
    api GET "/api/v1/runs/$id"
    [ "$(queue)" = "$first $second $third" ] && break
    sleep 0.05
done
[ "$(queue)" = "$first $second $third" ]
ok $? "the first waiter holds the key now (got: $(queue))"
jq_is '[[1, 2], [2, 2]]' \
    'sorted([t["waiting_position"], t["waiting_count"]] for t in b["tasks"] if t["status"] == "Waiting")' \
    "the API: positions 1 and 2 of 2"
jq_is true \
    "[t for t in b['tasks'] if t['id'] == '$second'][0]['waiting_for'].endswith('position 1 of 2 waiting)')" \
    "the API: the former second is first of 2 in waiting_for"
body=$("$SWITCHYARD" status "$id" --json 2>&1)
jq_is '[2, 2, "key:db"]' \
    "[[t['waiting_position'], t['waiting_count'], t['waiting_key']] for t in b['tasks'] if t['id'] == '$third'][0]" \
    "status --json: the former third is second of 2"
out=$("$SWITCHYARD" status "$id" 2>&1 | grep " $second ")
has "position 1 of 2 waiting" "status: the former second's line says first of 2"

for t in a b c d; do : >"$host/go-hold_$t"; done
wait_status "$id" Completed
ok $? "every task runs once the key is free"
jq_is '[]' '[k for t in b["tasks"] for k in t if k.startswith("waiting_") and k != "waiting_for"]' \
    "and none says where it waits"

# The map's elements (workflow m): one holds the key, two wait, each placed.
api POST /api/v1/runs '{"workflow": "m"}' token
code_is 201 "a mapped run submitted"
id=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
placed='sorted([e["waiting_position"], e["waiting_count"], e["waiting_key"]] for e in b["tasks"][0].get("map", {}).get("list", []) if e["status"] == "Waiting" and e.get("waiting_position"))'
for _ in $(seq 1 200); do
    api GET "/api/v1/runs/$id?elements=*"
    case "$body" in *'"waiting_count":2'*'"waiting_count":2'*) break ;; esac
    sleep 0.05
done
jq_is '[[1, 2, "key:db"], [2, 2, "key:db"]]' "$placed" "the API: two elements wait, first and second of 2"
jq_is '[true, true]' \
    '[e["waiting_for"].endswith("position %d of 2 waiting)" % e["waiting_position"]) for e in b["tasks"][0]["map"]["list"] if e["status"] == "Waiting"]' \
    "the API: each element's waiting_for says its place"
: >"$host/go-fan"
wait_status "$id" Completed
ok $? "the elements run once the key is free"
stop_serve
ok $? "serve stops cleanly"
cd / || exit 1
cleanup_host
done_testing
