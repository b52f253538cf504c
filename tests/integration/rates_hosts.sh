#!/bin/sh
# Rate limits exact across hosts (docs/flow-control.md, "Rate limits"):
# two `serve` hosts on one PostgreSQL database (a throwaway server), 8
# runs of 5 tasks that all name rate limit "api" of 10 a second, burst 2.
# From the attempts' recorded start times, no window of w ms holds more
# than 2 + 10 * w / 1000 starts, counting both hosts; the 40 starts are
# paced (they take at least 3.8 s); every task Completes.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven (a rate in real time); it runs in the sanitizer pass"
    exit 0
fi
pg_store_host
workflow paced <<'WF'
workflow = {
  name = "paced";
  rate_limits = ( { key = "api"; rate = 10; interval = "1s"; burst = 2; } );
  tasks = (
    { id = "a"; sleep_ms = 5; }, { id = "b"; sleep_ms = 5; },
    { id = "c"; sleep_ms = 5; }, { id = "d"; sleep_ms = 5; },
    { id = "e"; sleep_ms = 5; }
  );
};
WF
pids=""
for h in 1 2; do
    "$SWITCHYARD" serve >"$host/h$h.log" 2>&1 &
    pids="$pids $!"
done
for _ in $(seq 1 8); do
    run submit paced
done
for _ in $(seq 1 600); do
    left=$("$PSQL" -qtA "$url" -c "SELECT count(*) FROM runs WHERE state IN (0, 1)")
    [ "$left" = 0 ] && break
    sleep 0.05
done
[ "$left" = 0 ]
ok $? "8 runs of 5 tasks on rate api (10/s, burst 2), 2 hosts: every run over"
bad=$("$PSQL" -qtA "$url" -c "SELECT count(*) FROM tasks WHERE state <> 3")
[ "$bad" = 0 ]
ok $? "every task Completed ($bad not)"
"$PSQL" -qtA -F' ' "$url" -c "SELECT started, host FROM tasks ORDER BY started" >"$host/starts"
python3 - "$host/starts" >"$host/verdict" 2>&1 <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
s = [int(r[0]) for r in rows]
hosts = sorted(set(r[1] for r in rows))
assert len(s) == 40, len(s)
worst = None
for i in range(len(s)):
    for j in range(i, len(s)):
        n, w = j - i + 1, s[j] - s[i]
        bound = 2 + 10 * w / 1000
        if worst is None or n - bound > worst[0]:
            worst = (n - bound, n, w)
        assert n <= bound, "%d starts in %d ms (bound %.1f)" % (n, w, bound)
span = s[-1] - s[0]
assert span >= 3800, "40 starts in %d ms: not paced" % span
print("40 starts over %d ms by %d host(s); the fullest window: %d starts in %d ms"
      % (span, len(hosts), worst[1], worst[2]))
PY
rc=$?
ok $rc "no window of the recorded starts holds more than 2 + 10/s (both hosts): $(cat "$host/verdict" | tail -n1)"
set -- $pids
kill -TERM "$1" "$2"
wait "$1" "$2"
ok $? "the hosts drain and exit 0"
cleanup_host
done_testing
