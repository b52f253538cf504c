#!/bin/bash
# The issue's test of concurrency keys across hosts (issue 33), too long
# for `make check` (tests/integration/limits_hosts.sh is its short
# version there): three `serve` hosts on one PostgreSQL database (a
# throwaway server), a 4s lease (SY_SOAK_LEASE), TASKS tasks (default 5,000: runs of 50)
# over 50 keys of limit 2 (each run's context names its key;
# SY_SOAK_KEYS and SY_SOAK_LIMIT change them, SY_SOAK_SLOTS each host's
# executor slots, default 16; SY_SOAK_CHAIN=1 makes each run's tasks a
# chain: a key of some hundreds that many runs' chains take, one task a
# run at a time, has hosts take within grants without writing their
# counts, docs/flow-control.md "Takes not written"), hosts
# killed with -9 and started again during the run (KILLS times, default
# 6).  From the attempts' start and end times as the store recorded them
# (each task's row), no key ever had more than 2 running; sampled from
# the store all along, no key's live holders were ever more than 2; every
# task Completed, once; no slot is left held.  Run by scripts/limits-soak.
. "$SY_SRCDIR/tests/integration/lib.sh"
tasks=${SY_SOAK_TASKS:-5000}
kills=${SY_SOAK_KILLS:-6}
keys=${SY_SOAK_KEYS:-50}
limit=${SY_SOAK_LIMIT:-2}
slots=${SY_SOAK_SLOTS:-16}
# Long enough that a busy machine (the sanitizer build, other work)
# renews in time: a live host that lapses gives its runs up too, and a
# task lost with its host 6 times fails.
lease=${SY_SOAK_LEASE:-4s}
runs=$((tasks / 50))
pg_host ""
PSQL=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -n1)
[ -n "$PSQL" ] || { echo "Bail out! no psql"; exit 1; }
cat >"$host/switchyard.cfg" <<CFG
store = "$url";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
lease = "$lease";
executors = { default = { plugin = "ctl"; slots = $slots; }; };
CFG
cd "$host" || exit 1
{
    echo "workflow = { name = \"keyed\"; limits = ( { key = \"db:{k}\"; limit = $limit; } ); tasks = ("
    for i in $(seq 1 50); do
        after=
        [ -n "${SY_SOAK_CHAIN:-}" ] && [ "$i" -gt 1 ] && after=" after = [\"t$((i - 1))\"];"
        printf '  { id = "t%d"; sleep_ms = 20;%s }%s\n' "$i" "$after" "$([ "$i" -lt 50 ] && echo ,)"
    done
    echo '); };'
} >"$host/workflows/keyed.cfg"
for i in $(seq 1 "$runs"); do
    "$SWITCHYARD" submit keyed --context "{\"k\": \"$((i % keys))\"}" >/dev/null || {
        echo "Bail out! submit failed"; exit 1; }
done
NOW="(extract(epoch from clock_timestamp()) * 1000)::bigint"
LIVE="EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner AND r.lease_epoch = s.epoch AND r.lease_until > $NOW)"
# The most any key holds, by its live holders (the attempts' rows and any
# slot rows) or by the hosts' counts the takes read (each host's the
# greater of what it holds and was granted), whichever is more.
most_held="SELECT GREATEST((SELECT COALESCE(max(h), 0) FROM (SELECT sum(n) AS h FROM slot_holders s WHERE $LIVE GROUP BY key) x), (SELECT COALESCE(max(h), 0) FROM (SELECT key, sum(GREATEST(held, granted)) AS h FROM slot_counts WHERE until > $NOW GROUP BY key) y))"
declare -a pid
start_host() { "$SWITCHYARD" serve >>"$host/h$1.log" 2>&1 & pid[$1]=$!; }
for h in 1 2 3; do start_host "$h"; done
: >"$host/samples"
killed=0 t0=$(date +%s)
next_kill=$((t0 + 2))
while :; do
    "$PSQL" -qtA "$url" -c "$most_held" >>"$host/samples"
    now=$(date +%s)
    if [ "$killed" -lt "$kills" ] && [ "$now" -ge "$next_kill" ]; then
        h=$((killed % 3 + 1))
        kill -9 "${pid[$h]}"
        wait "${pid[$h]}" 2>/dev/null
        killed=$((killed + 1))
        # Started again after its lease ended, or at once: both orders.
        [ $((killed % 2)) -eq 0 ] && sleep 4.5
        start_host "$h"
        next_kill=$((now + 5))
    fi
    left=$("$PSQL" -qtA "$url" -c "SELECT count(*) FROM runs WHERE state IN (0, 1)")
    [ "$left" = 0 ] && [ "$killed" -ge "$kills" ] && break
    [ $((now - t0)) -gt 1200 ] && break
    sleep 0.05
done
[ "$left" = 0 ]
ok $? "$runs runs of 50 tasks over $keys keys of limit $limit, 3 hosts, $killed killed with -9 and started again: every run over in $(( $(date +%s) - t0 )) s"
max=$(sort -n "$host/samples" | tail -n1)
[ "$max" -le "$limit" ] && [ "$max" -ge 1 ]
ok $? "sampled from the store, no key's live holders ever more than $limit (max $max in $(wc -l <"$host/samples") samples)"
# Every attempt that completed, its start and end as its row recorded
# them, by key: at no moment more than the limit of one key running.
"$PSQL" -qtA -F ' ' "$url" -c "SELECT r.context::json->>'k', t.started, t.finished, t.run_id, t.task_id, t.attempts, t.recoveries, t.host FROM tasks t JOIN runs r ON r.id = t.run_id WHERE t.state = 3" >"$host/attempts"
python3 - "$host/attempts" "$(( runs < keys ? runs : keys ))" "$limit" <<'PY'
import collections, sys
ev = collections.defaultdict(list)
n = 0
for line in open(sys.argv[1]):
    k, s, f, *who = line.split()
    ev[k] += [(int(s), 1, who), (int(f), -1, who)]
    n += 1
worst = 0
for k, e in ev.items():
    e.sort(key=lambda x: (x[0], x[1]))  # an end before a start at the same ms
    c, running = 0, []
    for t, d, who in e:
        c += d
        if d > 0:
            running.append(who)
        else:
            running.remove(who)
        if c > int(sys.argv[3]):
            print(f"# key {k} at {t}: {c} running: {running}")
        worst = max(worst, c)
print(f"# {n} attempts over {len(ev)} keys: at most {worst} of one key running at once")
sys.exit(0 if worst <= int(sys.argv[3]) and len(ev) == int(sys.argv[2]) else 1)
PY
ok $? "from the attempts' start and end times, no key ever had more than $limit running"
bad=$("$PSQL" -qtA "$url" -c "SELECT count(*) FROM tasks WHERE state <> 3")
all=$("$PSQL" -qtA "$url" -c "SELECT count(*) FROM tasks")
[ "$bad" = 0 ] && [ "$all" = "$tasks" ]
ok $? "every task Completed, once ($all task rows, $bad not Completed)"
live=$("$PSQL" -qtA "$url" -c "SELECT count(*) FROM slot_holders s WHERE $LIVE")
[ "$live" = 0 ]
ok $? "no slot is left held at the end ($live live rows)"
for h in 1 2 3; do kill -TERM "${pid[$h]}" 2>/dev/null; done
wait
cleanup_host
done_testing
