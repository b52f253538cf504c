#!/bin/sh
# `switchyard backfill`: --dry-run lists each tick of the range and submits
# nothing; with a host firing the live schedule (a fake clock 120 times
# faster) over part of the range, a backfill fires the other ticks, so
# every tick has exactly one run; at most --max-active of the backfill's
# runs are ever unfinished at once; a second backfill fires nothing.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timed against a fast fake clock; the sanitizer pass runs it"
    exit 0
fi
make_host
workflow every <<'WF'
workflow = {
  name = "every";
  schedule = "* * * * *";
  tasks = ( { id = "a"; sleep_ms = 300; } );
};
WF
db=$host/var/switchyard.db
# Each tick in the store (ms) with its runs, and whether a backfill fired it.
python_db() { python3 - "$db" "$@"; }

minute=60000
now=$(python3 -c 'import time; print(int(time.time() * 1000))')
base=$((now / minute * minute - 30 * minute))
iso() { python3 -c 'import sys, time; print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(sys.argv[1]) / 1000)))' "$1"; }
from=$(iso "$base")
to=$(iso $((base + 9 * minute)))

run backfill every --from "$from" --to "$to" --dry-run
rc_is 0 "backfill --dry-run"
has "$from  would run" "lists the first tick"
has "backfill: 10 of 10 ticks would run (dry run: nothing submitted)" "and all ten"
[ ! -f "$db" ] || [ "$(python_db <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])
PY
)" = 0 ]
ok $? "and submits nothing"

# The live schedule fires from the range's fifth minute on.
anchor=$(python3 -c 'import time; print(int(time.time() * 1000))')
SWITCHYARD_FAKE_CLOCK="$((base + 4 * minute + 30000))x120@$anchor" "$SWITCHYARD" serve \
    >"$host/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 200); do
    [ "$(grep -c 'every: tick .* fired' "$host/serve.log")" -ge 3 ] && break
    sleep 0.1
done
run backfill every --from "$from" --to "$to" --max-active 2
rc_is 0 "backfill with a live schedule"
has "already fired" "skips the ticks the live schedule fired"
printf '%s\n' "$out" >"$host/backfill.out"
run backfill every --from "$from" --to "$to"
has "backfill: 0 runs submitted, 10 ticks had one already" "a second backfill fires nothing"
kill -TERM $serve
wait $serve

python_db "$base" <<'PY' >"$host/check" 2>&1
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
base = int(sys.argv[2])
runs = {}
for rid, ctx in db.execute("SELECT id, context FROM runs WHERE workflow = 'every'"):
    runs.setdefault(json.loads(ctx)["schedule"]["tick_ms"], []).append(rid)
want = [base + i * 60000 for i in range(10)]
twice = [t for t, r in runs.items() if len(r) > 1]
missing = [t for t in want if t not in runs]
print("twice", twice, "missing", missing)
# Backfilled runs: never more than 2 unfinished at once.
bf = db.execute("SELECT r.created, r.finished FROM schedule_ticks t JOIN runs r"
                " ON r.id = t.run_id WHERE t.backfill = 1").fetchall()
live = db.execute("SELECT count(*) FROM schedule_ticks WHERE backfill = 0").fetchone()[0]
worst = max(sum(1 for c2, f2 in bf if c2 <= c and (f2 == 0 or f2 > c)) for c, _ in bf)
print("backfilled", len(bf), "live", live, "worst", worst)
sys.exit(0 if not twice and not missing and worst <= 2 and live >= 3 and len(bf) >= 1 else 1)
PY
r=$?
out=$(cat "$host/check")
ok $r "every tick of the range has exactly one run; at most 2 backfilled runs unfinished at once"
cleanup_host
done_testing
