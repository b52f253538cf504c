#!/bin/sh
# Schedules fire on `serve`: two hosts on one SQLite store, each minute of
# a fake clock 120 times faster than the real one, fire every tick
# exactly once (one run per tick, consecutive ticks); hosts that start
# after ticks were missed fire them by the workflow's catchup: none,
# latest, all up to catchup_max; `schedules` shows the zone, the last tick
# and the next ones across a change of the clocks.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timed against a fast fake clock; the sanitizer pass runs it"
    exit 0
fi
make_host
# every: every minute; catchup is set per phase below.
every() {
    workflow every <<WF
workflow = {
  name = "every";
  schedule = "* * * * *";
  $1
  tasks = ( { id = "a"; sleep_ms = 1; } );
};
WF
}
every ""
workflow berlin <<'WF'
workflow = {
  name = "berlin";
  schedule = "30 2 * * *";
  timezone = "Europe/Berlin";
  tasks = ( { id = "a"; } );
};
WF

# The runs of `every`, as their ticks (ms), one line each, oldest first.
ticks() {
    python3 - "$host/var/switchyard.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (ctx,) in db.execute("SELECT context FROM runs WHERE workflow = 'every' ORDER BY id"):
    print(json.loads(ctx)["schedule"]["tick_ms"])
PY
}
last_tick() { ticks | tail -n1; }
count() { ticks | wc -l | tr -d ' '; }

now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

# start_hosts START [HOSTS]: HOSTS serving hosts (1) with the fake clock at
# START (ms) when they start, $speed times the real one; $pids.
start_hosts() {
    anchor=$(now_ms)
    pids=
    for i in $(seq 1 "${2:-1}"); do
        SWITCHYARD_FAKE_CLOCK="$1x$speed@$anchor" "$SWITCHYARD" serve \
            >>"$host/serve$i.log" 2>&1 &
        pids="$pids $!"
    done
}
stop_hosts() {
    kill -TERM $pids
    wait $pids
}

# until_count N: waits (at most 20 s) until `every` has N runs.
until_count() {
    for _ in $(seq 1 200); do
        [ "$(count)" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# catch_up START: one host started at START fires its catch-up: waits for
# it to have read its schedules (and a little more), then stops it.
catch_up() {
    : >"$host/serve1.log"
    start_hosts "$1"
    for _ in $(seq 1 200); do
        grep -q 'schedule: every: "' "$host/serve1.log" && break
        sleep 0.1
    done
    until_count "$2"
    sleep 0.3
    stop_hosts
}

# 2026-03-29T00:58:30Z: two hosts for about five fake minutes.
start=1774745910000
speed=120
start_hosts "$start" 2
until_count 4
stop_hosts
out=$(cat "$host/serve1.log" "$host/serve2.log")
n=$(count)
[ "$n" -ge 4 ]; ok $? "two hosts fired ticks ($n)"
ticks >"$host/ticks"
python3 - "$host/ticks" <<'PY'
import sys
t = [int(x) for x in open(sys.argv[1])]
# A host slow to start lets the first ticks go by (catchup none).
ok = len(t) == len(set(t)) and all(b - a == 60000 for a, b in zip(t, t[1:]))
ok = ok and t[0] >= 1774745940000 and t[0] % 60000 == 0
sys.exit(0 if ok else 1)
PY
ok $? "each tick fired exactly once, every minute"
fired1=$(grep -c "every: tick .* fired" "$host/serve1.log")
fired2=$(grep -c "every: tick .* fired" "$host/serve2.log")
[ $((fired1 + fired2)) -eq "$n" ]; ok $? "the hosts' logs count one firing per run ($fired1 + $fired2)"
has "berlin: tick 2026-03-29T01:00:00Z fired" "02:30 Berlin, skipped by the clocks, fired at the jump"
run runs --json
has '"Completed"' "the fired runs are ordinary runs, run to their end"

# Missed ticks.  A host starts ten and a half minutes after the last tick.
speed=1
last=$(last_tick)
before=$(count)
catch_up $((last + 630000)) "$before"
[ "$(count)" -eq "$before" ]; ok $? "catchup none: the missed ticks are not fired"

every 'catchup = "latest";'
catch_up $((last + 630000)) $((before + 1))
[ "$(count)" -eq $((before + 1)) ] && [ "$(last_tick)" -eq $((last + 600000)) ]
ok $? "catchup latest: the latest missed tick alone"

every 'catchup = "all"; catchup_max = 4;'
last=$(last_tick)
before=$(count)
catch_up $((last + 630000)) $((before + 4))
ticks | tail -n4 >"$host/tail"
[ "$(count)" -eq $((before + 4)) ] && [ "$(head -n1 "$host/tail")" -eq $((last + 420000)) ]
ok $? "catchup all: the latest catchup_max missed ticks, oldest first"
out=$(cat "$host/serve1.log")
has "every: 6 missed ticks not fired" "the ticks left out are logged"

last=$(last_tick)
before=$(count)
every 'catchup = "all";'
catch_up $((last + 210000)) $((before + 3))
[ "$(count)" -eq $((before + 3)) ]; ok $? "catchup all: every missed tick"

# A workflow scheduled while the host runs: SIGHUP reads it.
: >"$host/serve1.log"
speed=120
start_hosts "$start"
for _ in $(seq 1 100); do
    grep -q 'schedule: every: "' "$host/serve1.log" && break
    sleep 0.1
done
workflow late <<'WF'
workflow = { name = "late"; schedule = "* * * * *"; tasks = ( { id = "a"; } ); };
WF
kill -HUP $pids
for _ in $(seq 1 100); do
    grep -q "late: tick .* fired" "$host/serve1.log" && break
    sleep 0.1
done
stop_hosts
out=$(cat "$host/serve1.log")
has "late: tick" "a workflow added before SIGHUP is fired"
rm "$host/workflows/late.cfg"

# `schedules`: the day before Berlin springs forward.
SWITCHYARD_FAKE_CLOCK=2026-03-28T12:00:00Z run schedules --count 2
rc_is 0 "schedules exits 0"
has "2026-03-29T03:00:00+02:00, 2026-03-30T02:30:00+02:00" "next fire times in the zone, across the change"
has "Europe/Berlin" "the zone is shown"
SWITCHYARD_FAKE_CLOCK=2026-03-28T12:00:00Z run schedules --json --count 1
python3 - "$out" <<'PY'
import json, sys
v = {w["name"]: w for w in json.loads(sys.argv[1])}
b, e = v["berlin"], v["every"]
ok = (b["timezone"] == "Europe/Berlin" and b["catchup"] == "none" and
      b["last_tick"] == "2026-03-29T03:00:00+02:00" and
      b["next"] == ["2026-03-29T03:00:00+02:00"] and e["catchup"] == "all" and
      e["catchup_max"] == 100 and e["last_run"] > 0 and e["error"] is None)
sys.exit(0 if ok else 1)
PY
ok $? "schedules --json: zone, catchup, last tick and run, next"
run schedules --count 1001
rc_is 2 "a count out of range is a usage error"

workflow bad <<'WF'
workflow = { name = "bad"; schedule = "@daily"; timezone = "Mars/Olympus";
  tasks = ( { id = "a"; } ); };
WF
run check
has "bad.cfg:1: error: unknown time zone \"Mars/Olympus\"" "check names the file and line of an unknown zone"
cleanup_host
done_testing
