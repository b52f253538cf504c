#!/bin/sh
# Overflow routes: a rule naming a list of instances sends each task to the
# first with capacity.  A local pool of 2 takes 2 tasks, the rest burst to
# the second instance; when both are full a task waits and goes to
# whichever frees first; once the first frees, new tasks go back to it.
# `route` and `check` explain the list, and a bad list is one error line
# naming the file and line.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
python3 - "$host/switchyard.cfg" "$host" <<'PY'
import re, sys
p, host = sys.argv[1], sys.argv[2]
s = open(p).read()
s = re.sub(r'executors = \{\n.*?\n\};\n',
           'executors = {\n'
           f'  local = {{ plugin = "ctl"; slots = 2; record = "{host}/local.log"; }};\n'
           f'  burst = {{ plugin = "ctl"; slots = 4; record = "{host}/burst.log"; }};\n'
           '};\nroutes = ["routes.cfg"];\n', s, count=1, flags=re.S)
open(p, 'w').write(s)
PY
cat >"$host/routes.cfg" <<'CFG'
routes = {
  default = "local";
  rules = ( { match = "public::spill*::*"; to = ["local", "burst"]; } );
};
CFG
# a1, a2 fill the pool; b1..b4 burst and fill the burst instance; e finds
# both full and waits; c1, c2 follow a1, a2 while the burst is still busy;
# f comes after everything, when both are free.
workflow spill <<'WF'
workflow = {
  name = "spill";
  tasks = (
    { id = "a1"; sleep_ms = 400; },
    { id = "a2"; sleep_ms = 400; },
    { id = "b1"; sleep_ms = 3000; },
    { id = "b2"; sleep_ms = 3000; },
    { id = "b3"; sleep_ms = 3000; },
    { id = "b4"; sleep_ms = 3000; },
    { id = "e"; sleep_ms = 10; },
    { id = "c1"; after = ["a1"]; sleep_ms = 10; },
    { id = "c2"; after = ["a2"]; sleep_ms = 10; },
    { id = "f"; after = ["b1", "b2", "b3", "b4", "c1", "c2", "e"]; sleep_ms = 10; }
  );
};
WF

run route public::spill::a1
has "public::spill::a1 -> local, burst" "route names the list in the order it is tried"
has "overflow: a task goes to the first of local, burst with capacity" "and says what the list means"
has "routes.cfg:3: \"public::spill*::*\" -> local, burst: match" "the trace shows the list"
run route public::spill::a1 --quiet
[ "$out" = "$(printf 'local\nburst')" ]
ok $? "--quiet prints one instance a line, in order"
run route public::spill::a1 --json
printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["executors"]==["local","burst"] and j["executor"]=="local" else 1)'
ok $? "--json gives executors (the list) and executor (the first)"
run check
rc_is 0 "check accepts the list"

run run spill
rc_is 0 "the run completes"
id=$(run_id)
dispatched() { grep "^dispatch " "$host/$1.log" | sed 's/.*::\([a-z0-9]*\) [0-9]*$/\1/' | sort | tr '\n' ' '; }
local_got=$(dispatched local)
burst_got=$(dispatched burst)
echo "# local: $local_got; burst: $burst_got"
[ "$burst_got" = "b1 b2 b3 b4 " ]
ok $? "the pool took 2, the next 4 burst to the second instance"
[ "$local_got" = "a1 a2 c1 c2 e f " ]
ok $? "a task finding both full waited and went to the first that freed; new tasks went back to the pool"
is '["local", "local", "burst", "burst", "burst", "burst", "local", "local", "local", "local"]' "$id" \
    '[t[x]["executor"] for x in ["a1","a2","b1","b2","b3","b4","e","c1","c2","f"]]' \
    "the store records the instance each task ran on"

# Both full, and the burst instance frees first: the waiting task goes
# there; it waits on its route, not on the first instance alone.
workflow spill2 <<'WF'
workflow = {
  name = "spill2";
  tasks = (
    { id = "a1"; sleep_ms = 3000; },
    { id = "a2"; sleep_ms = 3000; },
    { id = "b1"; sleep_ms = 300; },
    { id = "b2"; sleep_ms = 300; },
    { id = "b3"; sleep_ms = 300; },
    { id = "b4"; sleep_ms = 300; },
    { id = "e"; sleep_ms = 10; }
  );
};
WF
: >"$host/local.log"
: >"$host/burst.log"
run run spill2
rc_is 0 "the second run completes"
local_got=$(dispatched local)
burst_got=$(dispatched burst)
echo "# local: $local_got; burst: $burst_got"
[ "$local_got" = "a1 a2 " ] && [ "$burst_got" = "b1 b2 b3 b4 e " ]
ok $? "a task finding both full went to whichever freed first (the burst instance)"

# Bad lists: one error each, naming the file and the line.
cp "$host/routes.cfg" "$host/routes.good"
printf 'routes = {\n  rules = ( { match = "a::*"; to = ["local", "nowhere"]; } );\n};\n' >"$host/routes.cfg"
run check
rc_is 1 "check refuses a list naming an unknown instance"
has "routes.cfg:2: error: rule \"a::*\" sends to executor 'nowhere', which is not defined" "naming the file, the line and the instance"
printf 'routes = {\n  rules = ( { match = "a::*"; to = []; } );\n};\n' >"$host/routes.cfg"
run check
rc_is 1 "check refuses an empty list"
has "routes.cfg:2: error: 'to' is an empty list" "naming the file and the line"
printf 'routes = {\n  default = ["local", "local"];\n};\n' >"$host/routes.cfg"
run check
has "routes.cfg:2: error: 'default' names executor 'local' twice" "an instance twice in a list is refused"
printf 'routes = {\n  rules = ( { match = "a::*"; executor = "local"; to = ["burst"]; } );\n};\n' >"$host/routes.cfg"
run check
has "routes.cfg:2: error: 'executor' and 'to' in one rule" "executor and to together are refused"
# An instance with no limit first: what follows it never gets a task.
cp "$SY_TEST_PLUGIN_DIR/good.so" "$host/plugins/good.so" && chmod 0755 "$host/plugins/good.so"
sed 's|^executors = {$|executors = {\n  wide = { plugin = "good"; };|' "$host/switchyard.cfg" >"$host/wide.cfg"
printf 'routes = {\n  default = "local";\n  rules = ( { match = "x::*"; to = ["wide", "burst"]; } );\n};\n' >"$host/routes.cfg"
run --config "$host/wide.cfg" check
has "routes.cfg:3: warning: rule \"x::*\": executor 'wide' has unlimited capacity, so 'burst' after it never gets a task" \
    "check warns when an instance without a limit comes before others in a list"
cleanup_host
done_testing
