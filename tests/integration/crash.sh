#!/bin/sh
# Durability: a 2,000-task workflow; the host is killed with SIGKILL at 10
# random moments and restarted each time.  At the end every task is
# Completed exactly once in the store's record, and no attempt that had
# completed was dispatched again (checked against the plugin's own log of
# every dispatch).
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP the crash test kills hosts; it runs in the sanitizer pass"
    exit 0
fi
make_host
sed -i 's/slots = 4;/slots = 8;/' "$host/switchyard.cfg"

# 20 layers of 100; each task depends on its neighbour in the layer above,
# every tenth also on the next one (a join).
python3 - "$host/workflows/big.cfg" <<'PY'
import sys
out = ['workflow = {', '  name = "big";', '  tasks = (']
rows = []
for layer in range(20):
    for i in range(100):
        deps = []
        if layer:
            deps.append(f'"t{layer-1}_{i}"')
            if i % 10 == 0:
                deps.append(f'"t{layer-1}_{(i + 1) % 100}"')
        after = f' after = [{", ".join(deps)}];' if deps else ''
        rows.append(f'    {{ id = "t{layer}_{i}";{after} sleep_ms = 15; }}')
out.append(',\n'.join(rows))
out += ['  );', '};']
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
PY

run submit big
rc_is 0 "the 2,000-task run is submitted"
id=$(run_id)

kills=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$SWITCHYARD" serve >>"$host/serve.log" 2>&1 &
    pid=$!
    ms=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 500 + 50 ))
    sleep "$(printf '0.%03d' "$ms")"
    kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
    wait "$pid" 2>/dev/null
done
[ "$kills" -eq 10 ]; ok $? "the host was killed 10 times mid-run"
done_before=$(jget "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Completed")')
echo "# completed before the last start: $done_before of 2000"
[ "$done_before" -lt 2000 ]; ok $? "every kill landed while the run was still going"

timeout 120 "$SWITCHYARD" serve --exit-when-idle >>"$host/serve.log" 2>&1
rc=$?
rc_is 0 "a last host finishes the run"
is Completed "$id" 'r["status"]' "the run is Completed"
is 2000 "$id" 'sum(1 for x in r["tasks"] if x["status"] == "Completed")' "every task is Completed"

python3 - "$host/status.json" "$host/dispatch.log" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
final = {x["namespace"]: x["attempts"] for x in r["tasks"]}
seen = collections.defaultdict(list)
for line in open(sys.argv[2]):
    parts = line.split()
    if len(parts) == 3 and parts[0] == "dispatch":
        seen[parts[1]].append(int(parts[2]))
bad = []
for ns, att in final.items():
    d = seen.get(ns, [])
    # The completing attempt is the last one dispatched: any dispatch with
    # a higher number would be a completed task run again.
    if max(d, default=0) > att or d.count(att) != 1:
        bad.append((ns, att, d))
recovered = sum(1 for x in r["tasks"] if x["recoveries"] > 0)
print(f"# tasks recovered from a killed host: {recovered}; dispatches: {sum(len(v) for v in seen.values())}")
for b in bad[:10]:
    print("# bad:", b)
sys.exit(1 if bad else 0)
PY
ok $? "no completed task was dispatched again; each completing attempt dispatched once"

cleanup_host
done_testing
