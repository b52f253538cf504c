#!/bin/sh
# Workflow triggers on `serve` (docs/events.md): a run of `up` ending
# Completed starts `after_up` with up's output; an event whose payload
# matches starts `landed`, one that does not is passed over with why
# (`switchyard triggers`); an event key seen already is not stored again;
# an AND starts one run once both parts happened; a debounced trigger
# consumes every event once, in runs at least its window apart.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven end to end; the sanitizer pass runs it"
    exit 0
fi
make_host
workflow up <<'WF'
workflow = { name = "up"; tasks = ( { id = "a"; output = { rows = 3; }; } ); };
WF
workflow after_up <<'WF'
workflow = { name = "after_up";
  triggers = ( { name = "on-up"; run = "up"; } );
  tasks = ( { id = "a"; } ); };
WF
workflow landed <<'WF'
workflow = { name = "landed";
  triggers = ( { name = "raw"; event = "file.landed";
                 when = ( { path = "bucket"; equals = "raw"; } ); } );
  tasks = ( { id = "a"; } ); };
WF
workflow both <<'WF'
workflow = { name = "both";
  triggers = ( { name = "and"; all = ( { event = "prices.ready"; }, { run = "up"; } ); } );
  tasks = ( { id = "a"; } ); };
WF
workflow batched <<'WF'
workflow = { name = "batched";
  triggers = ( { name = "b"; event = "row.changed"; debounce = "1s"; payloads = "all"; } );
  tasks = ( { id = "a"; } ); };
WF

# q SQL: the rows of a query on the store, one line each.
q() {
    python3 - "$host/var/switchyard.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join(str(c) for c in row))
PY
}
# until_q SQL EXPECTED: waits (at most 20 s) until the query prints it.
until_q() {
    for _ in $(seq 1 200); do
        [ "$(q "$1" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    echo "# $1: got '$(q "$1")', expected '$2'"
    return 1
}
runs_of() { echo "SELECT count(*) FROM runs WHERE workflow = '$1'"; }
# same EXPECTED GOT NAME
same() {
    if [ "$2" = "$1" ]; then ok 0 "$3"; else echo "# got '$2', expected '$1'"; ok 1 "$3"; fi
}

# check: a trigger on the runs of a workflow no directory holds is said.
workflow orphan <<'WF'
workflow = { name = "orphan";
  triggers = ( { name = "o"; run = "nosuch"; } );
  tasks = ( { id = "a"; } ); };
WF
"$SWITCHYARD" check >"$host/check.out" 2>&1
grep -q "orphan.cfg:2: warning: trigger 'o' waits for runs of 'nosuch', which no workflow directory holds for tenant 'public': it never fires" \
    "$host/check.out"
ok $? "check warns of a trigger on an unknown workflow's runs"
rm "$host/workflows/orphan.cfg"

"$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 200); do
    [ "$(grep -c 'listens' "$host/serve.log")" -ge 4 ] && break
    sleep 0.1
done
is_in() { grep -q "$1" "$2"; }
is_in "trigger on-up listens" "$host/serve.log"; ok $? "serve reads every trigger"

# --- a run's end ---------------------------------------------------------
up=$("$SWITCHYARD" submit up)
until_q "$(runs_of after_up)" 1; ok $? "a Completed run of up starts one run of after_up"
ctx=$(q "SELECT context FROM runs WHERE workflow = 'after_up'")
python3 -c 'import json,sys; c=json.loads(sys.argv[1])["trigger"]; assert c["name"]=="on-up" and c["run"]["id"]==int(sys.argv[2]) and c["run"]["output"]["a"]["rows"]==3, c' \
    "$ctx" "$up"; ok $? "its context holds up's run and output"

# --- events and conditions --------------------------------------------------
"$SWITCHYARD" emit file.landed --data '{"bucket": "other"}' >/dev/null
"$SWITCHYARD" emit file.landed --data '{"bucket": "raw", "path": "a.csv"}' --key a.csv >"$host/e1"
"$SWITCHYARD" emit file.landed --data '{"bucket": "raw", "path": "a.csv"}' --key a.csv \
    >"$host/e2" 2>"$host/e2.err"
cmp -s "$host/e1" "$host/e2"; ok $? "a key seen already answers the first event's id"
is_in "nothing new recorded" "$host/e2.err"; ok $? "and says so"
same "2" "$(q "SELECT count(*) FROM named_events WHERE name = 'file.landed'")" "only two events stored"
until_q "SELECT count(*) FROM trigger_items WHERE trigger_key = 'public::landed::raw'" 2
ok $? "both events are settled"
same "1" "$(q "$(runs_of landed)")" "the matching event starts one run, the other none"
"$SWITCHYARD" triggers >"$host/triggers.txt"
is_in "passed over event [0-9]*: condition 1: 'bucket' equals \"raw\" does not hold (it is \"other\")" \
    "$host/triggers.txt"
ok $? "triggers says why the other event was passed over"
"$SWITCHYARD" triggers --json >"$host/triggers.json"
python3 -c 'import json,sys; t={x["name"]: x for x in json.load(open(sys.argv[1]))}; assert t["raw"]["firings"]==1 and t["on-up"]["last_run"] is not None, t' \
    "$host/triggers.json"; ok $? "triggers --json: firings and last run"

# --- an AND ------------------------------------------------------------------
# up's run above is one part; the event is the other: one run, once.
"$SWITCHYARD" emit prices.ready >/dev/null
until_q "$(runs_of both)" 1; ok $? "both parts happened: one run of both"
"$SWITCHYARD" emit prices.ready >/dev/null
sleep 0.6
same "1" "$(q "$(runs_of both)")" "one part again alone starts nothing"
"$SWITCHYARD" triggers --json >"$host/triggers.json"
python3 -c 'import json,sys; t={x["name"]: x for x in json.load(open(sys.argv[1]))}; p=t["and"]["parts"]; assert p[0]["pending"]==1 and p[1]["pending"]==0, p' \
    "$host/triggers.json"; ok $? "triggers shows the part pending and the part missing"

# --- debounce -----------------------------------------------------------------
for i in 1 2 3 4 5; do "$SWITCHYARD" emit row.changed --data "{\"i\": $i}" >/dev/null; done
until_q "SELECT count(*) FROM trigger_items WHERE trigger_key = 'public::batched::b'" 5
ok $? "every debounced event is consumed"
python3 - "$host/var/switchyard.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT context, created FROM runs WHERE workflow = 'batched' ORDER BY id").fetchall()
seen = [e["data"]["i"] for ctx, _ in rows for e in json.loads(ctx)["trigger"]["parts"][0]]
assert sorted(seen) == [1, 2, 3, 4, 5], seen
assert all(b[1] - a[1] >= 1000 for a, b in zip(rows, rows[1:])), rows
PY
ok $? "in runs a window apart, each with every payload it consumed"

kill -TERM $serve
wait $serve
ok $? "serve stops cleanly"
done_testing
cleanup_host
