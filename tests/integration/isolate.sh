#!/bin/sh
# isolate_plugin = true: the plugin runs in a worker process of its own.  Its
# tasks run and return their outputs through it; when the worker crashes,
# only the attempts it held fail (and are retried on a new worker), the
# host and the other instance's tasks carry on.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
python3 - "$host/switchyard.cfg" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'executors = \{\n.*?\n\};\n',
           'executors = {\n  default = { plugin = "ctl"; slots = 4; };\n'
           '  iso = { plugin = "ctl"; slots = 4; isolate_plugin = true; };\n};\n'
           'routes = ["routes.cfg"];\n', s, count=1, flags=re.S)
open(p, 'w').write(s)
PY
cat >"$host/routes.cfg" <<'CFG'
routes = { default = "default"; rules = ( { match = "**::iso_*"; executor = "iso"; } ); };
CFG
python3 - "$host/workflows/calm.cfg" <<'PY'
import sys
rows = []
for i in range(20):
    rows.append(f'    {{ id = "iso_{i}"; sleep_ms = 20; output = {{ n = {i}; who = "iso_{i}"; }}; }}')
    rows.append(f'    {{ id = "home_{i}"; sleep_ms = 20; output = {{ n = {i}; who = "home_{i}"; }}; }}')
rows.append('    { id = "iso_join"; after = ["iso_0", "iso_1"]; echo = true; }')
open(sys.argv[1], "w").write('workflow = {\n  name = "calm";\n  tasks = (\n'
                             + ",\n".join(rows) + "\n  );\n};\n")
PY
out=$($SY_WRAP "$SWITCHYARD" run calm 2>"$host/calm.log")
ok $? "a run through an isolated instance completes"
id=$(run_id)
is '{"n": 7, "who": "iso_7"}' "$id" 't["iso_7"]["output"]' "an isolated task's output comes back"
is '{"n": 7, "who": "home_7"}' "$id" 't["home_7"]["output"]' "and the other instance's"
is '"iso_1"' "$id" 'json.dumps(t["iso_join"]["output"]["who"])' \
    "an isolated task gets its input context"

workflow crashy <<'WF'
workflow = {
  name = "crashy";
  tasks = (
    { id = "iso_a"; sleep_ms = 1500; output = { v = "a"; }; retry = { attempts = 2; }; },
    { id = "iso_b"; sleep_ms = 1500; output = { v = "b"; }; retry = { attempts = 2; }; },
    { id = "iso_boom"; sleep_ms = 200; crash = "worker"; },
    { id = "home"; sleep_ms = 500; output = { v = "home"; }; }
  );
};
WF
out=$($SY_WRAP "$SWITCHYARD" run crashy 2>"$host/crashy.log")
rc=$?
ok $([ "$rc" -eq 1 ] && echo 0 || echo 1) "the host survives the worker's crash; the run ends Failed (status $rc)"
id=$(run_id)
is Failed "$id" 't["iso_boom"]["status"]' "the crashing task fails"
has() { grep -q "$2" "$1" && ok 0 "$3" || { sed 's/^/# /' "$1"; ok 1 "$3"; }; }
has "$host/crashy.log" "the isolated worker of plugin 'ctl' (instance 'iso') \(was killed by signal\|exited with status\)" \
    "the log says how the worker ended"
has "$host/crashy.log" "a new isolated worker of plugin 'ctl' runs" "and that a new one runs"
is Completed "$id" 't["iso_a"]["status"]' "a task the worker held runs again on the new worker"
is '{"v": "a"}' "$id" 't["iso_a"]["output"]' "with its own output"
is 2 "$id" 't["iso_b"]["attempts"]' "its first attempt failed with the worker"
is Completed "$id" 't["home"]["status"]' "the other instance's task is untouched"
is 1 "$id" 't["home"]["attempts"]' "in one attempt"
left=0
for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$SWITCHYARD_PLUGIN_WORKER" ] && left=$((left + 1))
done
ok $([ "$left" -eq 0 ] && echo 0 || echo 1) "no worker outlives the host ($left left)"
cleanup_host
done_testing
