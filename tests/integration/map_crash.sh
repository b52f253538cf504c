#!/bin/sh
# Durability of a map: a task mapped over 400 elements; the host is killed
# with SIGKILL at 5 random moments and restarted each time.  At the end
# the map is Completed with all 400 outputs in order, every element was
# made once, and no element that had completed was dispatched again
# (checked against the plugin's own log of every dispatch).
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP the crash test kills hosts; it runs in the sanitizer pass"
    exit 0
fi
make_host
sed -i 's/slots = 4;/slots = 8;/' "$host/switchyard.cfg"
workflow fan <<'CFG'
workflow = {
  name = "fan";
  tasks = (
    { id = "m"; map_range = 400; sleep_ms = 20; echo = true; },
    { id = "after"; after = ["m"]; echo = true; }
  );
};
CFG

run submit fan
rc_is 0 "the run is submitted"
id=$(run_id)
kills=0
for i in 1 2 3 4 5; do
    before=$(wc -l <"$host/dispatch.log" 2>/dev/null || echo 0)
    "$SWITCHYARD" serve >>"$host/serve.log" 2>&1 &
    pid=$!
    # The kill lands after this host has dispatched something (a loaded
    # machine can take longer than the wait below just to start a host,
    # and a kill before any dispatch abandons nothing), at a random moment.
    for _ in $(seq 1 500); do
        [ "$(wc -l <"$host/dispatch.log" 2>/dev/null || echo 0)" -gt "$before" ] && break
        sleep 0.02
    done
    ms=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 100 + 10 ))
    sleep "$(printf '0.%03d' "$ms")"
    kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
    wait "$pid" 2>/dev/null
done
[ "$kills" -eq 5 ]; ok $? "the host was killed 5 times mid-run"
made=$(jget "$id" 't["m"].get("map", {}).get("elements", {}).get("Completed", 0)')
echo "# elements completed before the last start: $made of 400"
[ "$made" -lt 400 ]; ok $? "every kill landed while the map was still going"

timeout 120 "$SWITCHYARD" serve --exit-when-idle >>"$host/serve.log" 2>&1
rc_is 0 "a last host finishes the run"
is Completed "$id" 'r["status"]' "the run is Completed"
is '[400, 400, {"Completed": 400}]' "$id" '[t["m"]["map"][k] for k in ("size", "created", "elements")]' \
    "every element was made once and Completed"
is true "$id" '[o["map_index"] for o in t["after"]["output"]["m"]] == list(range(400))' \
    "the task after the map got all 400 outputs in order"

is true "$id" 'len(t["m"]["abandoned"]) > 0 and all(a.get("element", -1) >= 0 and a["host"] for a in t["m"]["abandoned"])' \
    "each attempt a killed host left is named by its element and host"
run status "$id"
has "abandoned: m[" "status names the element of an abandoned attempt"
"$SWITCHYARD" status "$id" --task m --json >"$host/m.json"
python3 - "$host/m.json" "$host/dispatch.log" <<'PY'
import json, sys, collections
t = json.load(open(sys.argv[1]))
final = {f'{t["namespace"]}[{e["index"]}]': e["attempts"] for e in t["map"]["list"]}
seen = collections.defaultdict(list)
for line in open(sys.argv[2]):
    parts = line.split()
    if len(parts) == 3 and parts[0] == "dispatch" and "[" in parts[1]:
        seen[parts[1]].append(int(parts[2]))
bad = [(k, a, seen.get(k, [])) for k, a in final.items()
       if max(seen.get(k, []), default=0) > a or seen.get(k, []).count(a) != 1]
recovered = sum(1 for e in t["map"]["list"] if e["recoveries"] > 0)
print(f"# elements recovered from a killed host: {recovered}; dispatches: {sum(len(v) for v in seen.values())}")
for b in bad[:10]:
    print("# bad:", b)
sys.exit(1 if bad or len(final) != 400 else 0)
PY
ok $? "no completed element was dispatched again; each completing attempt dispatched once"

cleanup_host
done_testing
