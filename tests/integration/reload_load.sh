#!/bin/sh
# Reload under load: 10,000 tasks flow through `serve` while the routes
# change six times (SIGHUP, a new routing file each time, overflow lists
# among them).  None is lost: every task is Completed, once (one attempt in
# the store, one dispatch and one completion in the plugin's records), and
# each ran on an instance its route named when it was dispatched: the
# store's executor and dispatch time against the times of the reloads in
# the host's log.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP 10,000 tasks; the sanitizer pass runs it"
    exit 0
fi
make_host
python3 - "$host/switchyard.cfg" "$host" <<'PY'
import re, sys
p, host = sys.argv[1], sys.argv[2]
s = open(p).read()
inst = "".join(f'  {n} = {{ plugin = "ctl"; slots = 4; record = "{host}/{n}.log"; }};\n'
               for n in "abcd")
s = re.sub(r'executors = \{\n.*?\n\};\n', 'executors = {\n' + inst + '};\nroutes = ["routes.cfg"];\n',
           s, count=1, flags=re.S)
open(p, 'w').write(s)
PY
# The routing of each generation; gen_targets() in the checker below must
# say the same.
gen() {
    case $1 in
    0) echo 'routes = { default = "a"; };' ;;
    1) echo 'routes = { default = ["b", "c"]; };' ;;
    2) echo 'routes = { default = "d"; };' ;;
    3) echo 'routes = { default = ["c", "b"]; rules = ( { match = "*::load::odd_*"; to = "a"; } ); };' ;;
    4) echo 'routes = { default = "b"; };' ;;
    5) echo 'routes = { default = "c"; rules = ( { match = "public::**"; executor = ["d", "a"]; } ); };' ;;
    6) echo 'routes = { default = ["a", "b", "c", "d"]; };' ;;
    esac
}
gen 0 >"$host/routes.cfg"
# 100 columns of 100: each task waits for the one above it, so the tasks
# flow for the whole run rather than all at once.
python3 - "$host/workflows/load.cfg" <<'PY'
import sys
rows = []
for layer in range(100):
    for col in range(100):
        kind = "odd" if col % 2 else "even"
        after = f' after = ["{kind}_{layer - 1}_{col}"];' if layer else ""
        rows.append(f'    {{ id = "{kind}_{layer}_{col}";{after} sleep_ms = 1; }}')
open(sys.argv[1], "w").write('workflow = {\n  name = "load";\n  tasks = (\n'
                             + ",\n".join(rows) + "\n  );\n};\n")
PY
$SY_WRAP "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "serving" "$host/serve.log" && break; sleep 0.1; done
run submit load
id=$(run_id)
completed() { cat "$host"/[abcd].log 2>/dev/null | grep -c "^complete "; }
# A reload at every 1,200 tasks done, each waited for before the next.
reloads=0
for g in 1 2 3 4 5 6; do
    while [ "$(completed)" -lt $((g * 1200)) ]; do sleep 0.05; done
    gen "$g" >"$host/routes.cfg"
    kill -HUP "$pid"
    for _ in $(seq 1 200); do [ "$(grep -c "reload: reloaded" "$host/serve.log")" -ge "$g" ] && break; sleep 0.05; done
    [ "$(completed)" -lt 10000 ] && reloads=$((reloads + 1))
done
ok $([ "$reloads" = 6 ] && echo 0 || echo 1) "six reloads taken while tasks were flowing ($reloads)"
for _ in $(seq 1 600); do [ "$(completed)" -ge 10000 ] && break; sleep 0.1; done
# A drain writes what is done before the host exits.
kill -TERM "$pid"
wait "$pid"
ok $? "the host drains and exits"
"$SWITCHYARD" status "$id" --json >"$host/status.json"
cat "$host"/[abcd].log >"$host/records"
python3 - "$host/status.json" "$host/serve.log" "$host" >"$host/check" <<'PY'
import calendar, collections, json, re, sqlite3, sys, time
r = json.load(open(sys.argv[1]))
host = sys.argv[3]
# The dispatch time of each task's attempt, as the store keeps it.
db = sqlite3.connect(f"{host}/var/switchyard.db")
started = dict(db.execute("SELECT ns, started FROM tasks WHERE run_id = ?", (int(r["run_id"]),)))

def gen_targets(g, tid):
    odd = tid.startswith("odd_")
    return [{"a"}, {"b", "c"}, {"d"}, {"a"} if odd else {"c", "b"}, {"b"}, {"d", "a"},
            {"a", "b", "c", "d"}][g]

def stamp(line):
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z", line)
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 1000 + int(m.group(2))

hup, done = [], []
for line in open(sys.argv[2]):
    if "reload: Hangup: reading" in line:
        hup.append(stamp(line))
    elif "reload: reloaded:" in line:
        done.append(stamp(line))
# Generation g is in force from some instant of [hup[g-1], done[g-1]] to
# some instant of [hup[g], done[g]].
inf = float("inf")
start = [-inf] + hup
end = done + [inf]

recs = collections.Counter()
where = {}
for name in "abcd":
    for line in open(f"{host}/{name}.log"):
        what, ns, attempt = line.split()
        recs[(what, ns)] += 1
        if what == "dispatch":
            where[ns] = name

bad, wrong_place, twice = [], [], []
for t in r["tasks"]:
    ns = t["namespace"]
    if t["status"] != "Completed" or t["attempts"] != 1:
        bad.append((t["id"], t["status"], t["attempts"]))
    if recs[("dispatch", ns)] != 1 or recs[("complete", ns)] != 1:
        twice.append((t["id"], recs[("dispatch", ns)], recs[("complete", ns)]))
    ex, s = t["executor"], started[ns]
    ok = any(start[g] - 1 <= s <= end[g] + 1 and ex in gen_targets(g, t["id"])
             for g in range(len(start)))
    if not ok or where.get(ns) != ex:
        wrong_place.append((t["id"], ex, where.get(ns), s))
used = collections.Counter(t["executor"] for t in r["tasks"])
if r["status"] != "Completed":
    bad.append(("run", r["status"], None))
print(len(r["tasks"]), len(bad), len(twice), len(wrong_place), len(hup), len(done))
print("# by instance:", dict(sorted(used.items())))
for x in (bad[:3] + twice[:3] + wrong_place[:5]):
    print("#", x)
PY
read -r n nbad ntwice nwrong nhup ndone <"$host/check"
sed -n '2,$p' "$host/check"
ok $([ "$n" = 10000 ] && [ "$nbad" = 0 ] && echo 0 || echo 1) \
    "the run and all $n tasks Completed, with one attempt each ($nbad not)"
ok $([ "$ntwice" = 0 ] && echo 0 || echo 1) "each dispatched and completed exactly once ($ntwice not)"
ok $([ "$nwrong" = 0 ] && [ "$nhup" = 6 ] && [ "$ndone" = 6 ] && echo 0 || echo 1) \
    "each ran on an instance its route named when it was dispatched ($nwrong not)"
others=$(grep -c " error \|AddressSanitizer\|runtime error" "$host/serve.log")
ok $([ "$others" = 0 ] && echo 0 || echo 1) "no error in the host's log ($others)"
cleanup_host
done_testing
