#!/bin/sh
# The PostgreSQL store when the network fails mid-conversation: a host
# reaches its database through tests/bin/tcp-cutter, which resets every
# open connection (both ends, TCP RST) on demand, wherever each statement
# was: in a claim, a batch of task rows, a commit, LISTEN.  Cuts land every
# 100 to 300 ms (seeded, the seed printed) while a run of 80 tasks goes on.
# What must hold:
#  - the host says each loss and reconnects (`connection lost;
#    reconnecting`, `reconnected`); when a cut lands in a commit, which it
#    does not send again (it may have landed), it stops saying so, and the
#    next `serve` resumes;
#  - the run completes, every task once with its last attempt's result;
#  - a task that ran twice did so only across such a stop (its completion
#    was in the commit that was cut), never inside one host's life.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven (cuts every few hundred ms); it runs in the sanitizer pass"
    exit 0
fi
make_host 'lease = "2s";'
url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host")
case $? in
0) ;;
77) echo "1..0 # SKIP no PostgreSQL server binaries (apt-get install postgresql-15)"; exit 0 ;;
*) echo "Bail out! the throwaway PostgreSQL server did not start"; exit 1 ;;
esac
cutter=
finish() {
    [ -n "$cutter" ] && kill "$cutter" 2>/dev/null
    "$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"
}
trap finish EXIT
cd "$host" || exit 1

# The database through the cutter.
pg_port=$(printf '%s' "$url" | sed 's|.*:\([0-9]*\)/.*|\1|')
python3 "$SY_SRCDIR/tests/bin/tcp-cutter" "$host/cutter.port" 127.0.0.1 "$pg_port" &
cutter=$!
for _ in $(seq 1 100); do [ -s "$host/cutter.port" ] && break; sleep 0.05; done
cut_port=$(cat "$host/cutter.port")
cut_url=$(printf '%s' "$url" | sed "s|:$pg_port/|:$cut_port/|")
sed -i "s|sqlite:var/switchyard.db|$cut_url|" "$host/switchyard.cfg"
out=$("$SWITCHYARD" migrate 2>&1)
case $out in
*"not in this build"*)
    echo "1..0 # SKIP this build has no PostgreSQL store (configure found no libpq)"
    exit 0 ;;
esac
has "the store's schema is this build's" "the store is reached through the cutter"

# 8 layers of 10 tasks, each after one above it; 100 ms each, 4 at a time.
python3 - "$host/workflows/cuts.cfg" <<'PY'
import sys
rows = []
for l in range(8):
    for c in range(10):
        after = f' after = ["t_{l - 1}_{c}"];' if l else ""
        rows.append(f'    {{ id = "t_{l}_{c}";{after} sleep_ms = 100; stamp = true; }}')
open(sys.argv[1], "w").write('workflow = {\n  name = "cuts";\n  tasks = (\n'
                             + ",\n".join(rows) + "\n  );\n};\n")
PY
: >"$host/dispatch.log"
run submit cuts
rc_is 0 "a run of 80 tasks is submitted"
id=$(run_id)

seed=${SY_CUT_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
echo "# seed $seed (SY_CUT_SEED=$seed reruns these delays)"
# The cuts, in the background while hosts serve.
python3 - "$seed" "$cutter" "$host/cutting" <<'PY' &
import os, random, signal, sys, time
rng = random.Random(int(sys.argv[1]))
pid, flag = int(sys.argv[2]), sys.argv[3]
open(flag, "w").close()
while os.path.exists(flag):
    time.sleep(rng.uniform(0.1, 0.3))
    if os.path.exists(flag):
        os.kill(pid, signal.SIGUSR1)
PY
cuts_pid=$!

# Hosts one after another until the run has ended: a host stops when a
# cut lands in a commit; the next one resumes the run.
serves=0
stopped=0
while [ $serves -lt 30 ]; do
    serves=$((serves + 1))
    "$SWITCHYARD" serve --exit-when-idle >"$host/serve.$serves.log" 2>&1
    src=$?
    [ $src -eq 0 ] && break
    stopped=$((stopped + 1))
    cat "$host/serve.$serves.log" >>"$host/stops.log"
done
rm -f "$host/cutting"
wait "$cuts_pid"
# What is checked from here on is the store's content, read straight from
# the database: a cut signalled just before the flag went could still
# land on the first read through the cutter (it did once, in CI).
sed -i "s|$cut_url|$url|" "$host/switchyard.cfg"
cuts=$(awk '$1 > 0' "$host/cutter.port.cuts" 2>/dev/null | wc -l)
echo "# $serves hosts ($stopped stopped by a cut), $cuts cuts of live connections"
[ "$src" -eq 0 ]; ok $? "a host finished the run and exited 0 when idle (after $stopped stops)"
[ "$cuts" -ge 2 ]; ok $? "cuts landed on live connections while hosts served ($cuts)"
cat "$host"/serve.*.log >"$host/all.log"
grep -q "connection lost; reconnecting" "$host/all.log"
ok $? "the hosts said they lost the connection"
grep -q "reconnected after" "$host/all.log"
ok $? "and reconnected"
if [ -s "$host/stops.log" ]; then
    grep -v '^\s*$' "$host/stops.log" | tail -n 3 | sed 's/^/# stop: /'
fi
# A stop is a cut in a statement the store will not send again: the
# lines that say so name the store and what was cut.
bad=$(grep -c "Segmentation\|AddressSanitizer\|runtime error" "$host/all.log")
[ "$bad" -eq 0 ]; ok $? "no crash, no sanitizer report in any host's log"

is Completed "$id" 'r["status"]' "the run completed"
n=$(jget "$id" 'sum(1 for x in r["tasks"] if x["status"] != "Completed" or x["output"]["attempt"] != x["attempts"])')
[ "$n" -eq 0 ]
ok $? "every task Completed with its last attempt's result ($n not)"
# Dispatches per task (the ctl plugin's record: "dispatch NS ATTEMPT"); a task dispatched more than once needs a stop in
# between: at most one extra per stop and task.
twice=$(python3 - "$host/dispatch.log" <<'PY'
import collections, re, sys
c = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"dispatch \S*::(t_\d+_\d+) ", line)
    if m:
        c[m.group(0)] += 1
print(len(c), max(c.values()) if c else 0, sum(v - 1 for v in c.values()))
PY
)
set -- $twice
[ "$1" -eq 80 ]; ok $? "all 80 tasks were dispatched ($1)"
[ "$2" -le $((stopped + 1)) ]
ok $? "none ran more often than once plus once per stop (most: $2, stops: $stopped, repeats: $3)"

cd / && finish && trap - EXIT
cleanup_host
done_testing
