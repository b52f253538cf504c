#!/bin/sh
# Fencing: two `serve` hosts on one SQLite file with a 1s lease.  The first
# is stopped (SIGSTOP) past its lease while its attempts run; the second
# takes the run over and runs them again.  When the first resumes, its
# late results must not overwrite the second's: every task's row is from
# its latest attempt, and the resumed host says it lost the lease and
# keeps running.  Then hosts started together on new store files all open
# them.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-sensitive (a paused host, a 1s lease); it runs in the sanitizer pass"
    exit 0
fi
make_host 'lease = "1s";'
workflow fence <<'WF'
workflow = {
  name = "fence";
  tasks = (
    { id = "a"; sleep_ms = 2000; },
    { id = "b"; sleep_ms = 2000; },
    { id = "c"; sleep_ms = 2000; },
    { id = "d"; sleep_ms = 2000; },
    { id = "e"; after = ["a"]; sleep_ms = 200; },
    { id = "f"; after = ["b", "c"]; sleep_ms = 200; }
  );
};
WF

wait_for() { # wait_for RUN EXPR EXPECTED TRIES
    for _ in $(seq 1 "$4"); do
        [ "$(jget "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

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
kill -0 "$a" 2>/dev/null
ok $? "the resumed host is still up"
kill -TERM "$a" "$b"
wait "$a" "$b"

grep -q "lost its lease" "$host/a.log"
ok $? "the resumed host logged that it lost the lease"
grep "lost its lease\|write refused" "$host/a.log" | sed 's/^/# /'
grep -q "adopted" "$host/b.log"
ok $? "the second host took the run over"
is Completed "$id" '"Completed" if all(x["status"] == "Completed" for x in r["tasks"]) else "mixed"' "every task is Completed"
jget "$id" 'r' >/dev/null
python3 - "$host/status.json" "$host/dispatch.log" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
latest = collections.defaultdict(int)
for line in open(sys.argv[2]):
    what, ns, attempt = line.split()
    if what == "dispatch":
        latest[ns] = max(latest[ns], int(attempt))
bad = [(t["id"], t["attempts"], latest[t["namespace"]]) for t in r["tasks"]
       if t["attempts"] != latest[t["namespace"]]]
print("# recorded attempt != latest dispatched:", bad if bad else "none")
again = sum(1 for t in r["tasks"] if latest[t["namespace"]] > 1)
print("# tasks run again by the second host:", again)
sys.exit(1 if bad or again == 0 else 0)
PY
ok $? "every task's recorded result is from its latest attempt"

# Hosts started together on a new store file: 20 pairs, none fails.
fails=0
for i in $(seq 1 20); do
    sed "s|sqlite:var/switchyard.db|sqlite:pairs/$i.db|" "$host/switchyard.cfg" >"$host/pair$i.cfg"
    SWITCHYARD_CONFIG="$host/pair$i.cfg" "$SWITCHYARD" submit fence >"$host/p$i.1" 2>&1 &
    p1=$!
    SWITCHYARD_CONFIG="$host/pair$i.cfg" "$SWITCHYARD" submit fence >"$host/p$i.2" 2>&1 &
    p2=$!
    wait "$p1" || { fails=$((fails + 1)); sed 's/^/# /' "$host/p$i.1"; }
    wait "$p2" || { fails=$((fails + 1)); sed 's/^/# /' "$host/p$i.2"; }
done
[ "$fails" -eq 0 ]; ok $? "20 pairs of hosts opened new store files together ($fails failures)"

cleanup_host
done_testing
