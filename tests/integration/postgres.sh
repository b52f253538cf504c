#!/bin/sh
# Several `serve` hosts on one PostgreSQL database (a throwaway server,
# tests/bin/pg-throwaway), with a 1s lease:
#  - two hosts (SY_PG_HOSTS) share runs submitted while they serve: every
#    task completes exactly once (attempt counts and the ctl plugin's
#    dispatch log), and each host runs its share;
#  - idle hosts are woken by a submit: the run starts within milliseconds;
#  - three hosts started together on a backlog of runs each run a fair
#    share of them;
#  - kill -9 of a host mid-run: the other takes its run over and finishes
#    it, and nothing completed runs again;
#  - SIGSTOP of a host past its lease, then SIGCONT: its late results are
#    refused and the tasks' results are the new attempts';
#  - pg_ctl restart mid-run: the host reconnects, listens for wake-ups
#    again, and the run completes with nothing lost.
# SY_PG_TASKS sets how many tasks the shared part runs (default 2,100, in
# runs of 150; scripts/pg-soak runs 10,050).
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-sensitive (a paused host, a 1s lease); it runs in the sanitizer pass"
    exit 0
fi
pg_host 'lease = "1s";'
# A password in the URL (the server trusts 127.0.0.1 and never asks for
# it): it must show in no log or message.
url=$(printf '%s' "$url" | sed 's|://\([^@]*\)@|://\1:secret@|')
sed -i "s|sqlite:var/switchyard.db|$url|" "$host/switchyard.cfg"
cd "$host" || exit 1
out=$("$SWITCHYARD" migrate 2>&1)
case $out in
*"not in this build"*)
    echo "1..0 # SKIP this build has no PostgreSQL store (configure found no libpq)"
    exit 0 ;;
esac
has "the store's schema is this build's" "migrate creates the tables on a new database"
run migrate
has "the store's schema is this build's" "migrate again: nothing to do"

# A layered DAG of $1 layers of $2 tasks, each after the one above it;
# `sleep` milliseconds each.
layered() { # NAME LAYERS WIDTH SLEEP_MS
    python3 - "$host/workflows/$1.cfg" "$1" "$2" "$3" "$4" <<'PY'
import sys
path, name, layers, width, sleep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = []
for l in range(layers):
    for c in range(width):
        after = f' after = ["t_{l - 1}_{c}"];' if l else ""
        rows.append(f'    {{ id = "t_{l}_{c}";{after} sleep_ms = {sleep}; stamp = true; }}')
open(path, "w").write(f'workflow = {{\n  name = "{name}";\n  tasks = (\n'
                      + ",\n".join(rows) + "\n  );\n};\n")
PY
}

wait_for() { # wait_for RUN EXPR EXPECTED TRIES
    for _ in $(seq 1 "$4"); do
        [ "$(jget "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# Prints the number of tasks of runs $@ not Completed after exactly one
# attempt.
not_once() {
    for r in "$@"; do
        jget "$r" 'sum(1 for x in r["tasks"] if x["status"] != "Completed" or x["attempts"] != 1)'
    done | awk '{ s += $1 } END { print s + 0 }'
}

# --- several hosts share the runs -----------------------------------------------
tasks=${SY_PG_TASKS:-2100}
nhosts=${SY_PG_HOSTS:-2}
runs=$((tasks / 150))
layered shared 10 15 1
pids=""
for h in $(seq 1 "$nhosts"); do
    "$SWITCHYARD" serve >"$host/h$h.log" 2>&1 &
    pids="$pids $!"
done
# Every host is up before the first run comes: one still starting would
# leave them all to the others.
for h in $(seq 1 "$nhosts"); do
    for _ in $(seq 1 300); do
        grep -q "serving as" "$host/h$h.log" && break
        sleep 0.1
    done
done
grep -h "serving as" "$host"/h*.log | head -1 | sed 's/.*serve: /# /'
grep -q "secret" "$host"/h*.log
[ $? -ne 0 ]
ok $? "the hosts' logs name the store without its password"
ids=""
start=$(date +%s.%N)
for _ in $(seq 1 "$runs"); do
    run submit shared
    ids="$ids $(run_id)"
    sleep 0.05 # spread over several polls of every host
done
for r in $ids; do
    wait_for "$r" 'r["status"]' Completed 600 || { echo "# run $r did not complete"; break; }
done
secs=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
n=$(not_once $ids)
[ "$n" -eq 0 ]
ok $? "$runs runs, $((runs * 150)) tasks on $nhosts hosts: every task Completed after one attempt ($n not, ${secs}s)"
d=$(grep -c '^dispatch ' "$host/dispatch.log")
[ "$d" -eq $((runs * 150)) ]
ok $? "each task was dispatched once ($d dispatches for $((runs * 150)) tasks)"
total=0 idle=0 each=""
for h in $(seq 1 "$nhosts"); do
    c=$(grep -c adopted "$host/h$h.log")
    each="$each $c"
    total=$((total + c))
    [ "$c" -eq 0 ] && idle=$((idle + 1))
done
# Every submit wakes every host, and the least loaded claims first: each
# host runs its share (first come first served, one host took all 14).
min=$((runs / nhosts / 2))
[ "$idle" -eq 0 ] && for c in $each; do [ "$c" -ge "$min" ] || idle=$((idle + 1)); done
[ "$idle" -eq 0 ]
ok $? "each of the $nhosts hosts ran at least $min of the $runs runs (runs adopted by each:$each)"
[ "$total" -eq "$runs" ]
ok $? "no run was taken twice ($total adoptions for $runs runs)"
kill -TERM $pids
wait $pids
ok $? "the hosts drain and exit 0"

# --- wake-ups: a submitted run starts at once ------------------------------------
# Idle hosts are woken by the submit (LISTEN/NOTIFY), not by their next
# poll (200 ms, give or take a fifth, before): the median of 9 runs'
# submit to start, from the runs' own stamps, is well under a poll.
PSQL=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -n1)
workflow one <<'WF'
workflow = { name = "one"; tasks = ( { id = "t"; } ); };
WF
pids=""
for h in 1 2; do
    "$SWITCHYARD" serve >"$host/w$h.log" 2>&1 &
    pids="$pids $!"
done
for h in 1 2; do
    for _ in $(seq 1 300); do grep -q "serving as" "$host/w$h.log" && break; sleep 0.1; done
done
sleep 0.5
ids=""
for _ in $(seq 1 9); do
    run submit one
    id=$(run_id)
    ids="$ids,$id"
    wait_for "$id" 'r["status"]' Completed 100
done
kill -TERM $pids
wait $pids
if [ -z "$PSQL" ]; then
    ok 0 "submit to start # SKIP no psql to read the runs' stamps"
else
    lat=$("$PSQL" -qtA "$url" -c "SELECT started - created FROM runs WHERE id IN (${ids#,}) ORDER BY 1" | tr '\n' ' ')
    med=$(echo "$lat" | awk '{ print $5 }')
    [ -n "$med" ] && [ "$med" -lt 60 ]
    ok $? "a submitted run starts within 60 ms at the median (submit to start, ms: $lat)"
fi

# --- hosts started together on a backlog ------------------------------------------
# SY_PG_SPREAD runs (default 60) wait before 3 hosts start at once: each
# claims a bite at a time, and takes its next bite after the less loaded
# ones, so each runs a fair share (a claim of 64 at the first poll left
# the other hosts nothing).
spread=${SY_PG_SPREAD:-60}
workflow spread <<'WF'
workflow = {
  name = "spread";
  tasks = (
    { id = "a"; sleep_ms = 30; stamp = true; },
    { id = "b"; after = ["a"]; sleep_ms = 30; stamp = true; }
  );
};
WF
: >"$host/dispatch.log"
ids=""
for _ in $(seq 1 "$spread"); do
    run submit spread
    ids="$ids $(run_id)"
done
pids=""
for h in 1 2 3; do
    "$SWITCHYARD" serve --exit-when-idle >"$host/s$h.log" 2>&1 &
    pids="$pids $!"
done
wait $pids
ok $? "three hosts started together run $spread waiting runs and exit 0 when idle"
n=$(not_once $ids)
[ "$n" -eq 0 ]
ok $? "every task Completed after one attempt ($n not)"
each="" low=0 total=0
for h in 1 2 3; do
    c=$(grep -c adopted "$host/s$h.log")
    each="$each $c"
    total=$((total + c))
    [ "$c" -ge $((spread / 6)) ] || low=$((low + 1))
done
[ "$low" -eq 0 ]
ok $? "each host ran at least $((spread / 6)) of the $spread runs (runs adopted by each:$each)"
[ "$total" -eq "$spread" ]
ok $? "no run was taken twice ($total adoptions for $spread runs)"

# --- kill -9 of a host mid-run ------------------------------------------------------
layered killed 4 6 1000
: >"$host/dispatch.log"
"$SWITCHYARD" serve >"$host/a.log" 2>&1 &
a=$!
run submit killed
id=$(run_id)
wait_for "$id" '"y" if sum(1 for x in r["tasks"] if x["status"] == "Completed") >= 6 else "n"' y 100
kill -9 "$a"
wait "$a" 2>/dev/null
done_before=$(jget "$id" '[x["id"] for x in r["tasks"] if x["status"] == "Completed"]')
"$SWITCHYARD" serve --exit-when-idle >"$host/b.log" 2>&1 &
b=$!
wait_for "$id" 'r["status"]' Completed 100
ok $? "after kill -9 of its host, another host completes the run"
wait "$b"
grep -q "adopted" "$host/b.log"
ok $? "the second host adopted the run"
python3 - "$host/status.json" "$done_before" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
before = set(json.loads(sys.argv[2]))
t = {x["id"]: x for x in r["tasks"]}
again = [i for i in before if t[i]["attempts"] != 1]
bad = [x["id"] for x in r["tasks"] if x["status"] != "Completed" or x["output"]["attempt"] != x["attempts"]]
print(f"# completed before the kill: {len(before)}; run again: {again}; bad: {bad}")
sys.exit(1 if again or bad else 0)
PY
ok $? "no task completed before the kill ran again; each result is its last attempt's"

# --- SIGSTOP past the lease, then SIGCONT ---------------------------------------------
workflow fence <<'WF'
workflow = {
  name = "fence";
  tasks = (
    { id = "q"; stamp = true; },
    { id = "a"; after = ["q"]; sleep_ms = 2000; stamp = true; },
    { id = "b"; after = ["q"]; sleep_ms = 2000; stamp = true; },
    { id = "c"; after = ["q"]; sleep_ms = 2000; stamp = true; },
    { id = "d"; after = ["q"]; sleep_ms = 2000; stamp = true; }
  );
};
WF
: >"$host/dispatch.log"
run submit fence
id=$(run_id)
"$SWITCHYARD" serve >"$host/a.log" 2>&1 &
a=$!
wait_for "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Running")' 4 100
ok $? "the first host runs four attempts"
kill -STOP "$a"
"$SWITCHYARD" serve >"$host/b.log" 2>&1 &
b=$!
sleep 2.5
kill -CONT "$a"
wait_for "$id" 'r["status"]' Completed 200
ok $? "the run completes"
sleep 1.5 # the first host's late results come back and are refused
kill -TERM "$a" "$b"
wait "$a" "$b"
grep -q "lost its lease" "$host/a.log"
ok $? "the resumed host logged that it lost its lease"
jget "$id" 'r' >/dev/null
python3 - "$host/status.json" "$host/dispatch.log" "$a" "$b" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
a, b = int(sys.argv[3]), int(sys.argv[4])
dispatched = collections.defaultdict(list)
for line in open(sys.argv[2]):
    what, ns, attempt = line.split()
    if what == "dispatch":
        dispatched[ns].append(int(attempt))
t = {x["id"]: x for x in r["tasks"]}
bad = [x["id"] for x in r["tasks"] if x["output"].get("attempt") != x["attempts"]]
again = [x for x in "abcd" if t[x]["attempts"] >= 2 and t[x]["output"]["pid"] == b]
print(f"# results not the latest attempt's: {bad}; run again by the second host: {len(again)}")
sys.exit(1 if bad or len(again) != 4 or t["q"]["output"]["pid"] != a else 0)
PY
ok $? "the paused host's late results were refused: each result is the second host's new attempt"

# --- pg_ctl restart mid-run ----------------------------------------------------------------
layered restart 4 5 1000
: >"$host/dispatch.log"
run submit restart
id=$(run_id)
"$SWITCHYARD" serve --exit-when-idle >"$host/a.log" 2>&1 &
a=$!
wait_for "$id" '"y" if sum(1 for x in r["tasks"] if x["status"] == "Completed") >= 5 else "n"' y 100
"$SY_SRCDIR/tests/bin/pg-throwaway" restart "$host"
ok $? "the server restarts mid-run"
wait "$a"
rc=$?
[ "$rc" -eq 0 ]
ok $? "the host rode out the restart and exited 0 when idle (status $rc)"
grep "reconnect\|connection" "$host/a.log" | head -3 | sed 's/^/# /'
grep -q "listening for wake-ups again" "$host/a.log"
ok $? "the host listens for wake-ups again on a new connection"
is Completed "$id" 'r["status"]' "the run completed"
n=$(jget "$id" 'sum(1 for x in r["tasks"] if x["status"] != "Completed" or x["output"]["attempt"] != x["attempts"])')
[ "$n" -eq 0 ]
ok $? "every task Completed with its last attempt's result ($n not)"

# --- retention -----------------------------------------------------------------------------
finished=$(jget "$id" 'r' >/dev/null; "$SWITCHYARD" runs --all | awk 'NR > 1 && $2 != "Running" && $2 != "Pending"' | wc -l)
run gc --older-than 30d
has "removed 0 finished runs" "gc --older-than 30d keeps today's runs"
run gc --older-than 0s --batch 7
has "removed $finished finished runs" "gc --older-than 0s removes every finished run, 7 at a time ($finished)"
run status "$id"
rc_is 1 "a removed run is gone"
run gc --older-than soon
rc_is 2 "a bad duration is a usage error"
has "gc: --older-than 'soon'" "naming the option"

cd / && stop_pg && trap - EXIT
cleanup_host
done_testing
