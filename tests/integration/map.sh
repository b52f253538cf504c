#!/bin/sh
# A map of 1,000 elements through `switchyard run` with the thread plugin's
# C function tasks: every element runs once with its item, the task after
# the map gets all 1,000 outputs in order, `status` sums the map up
# instead of listing it and lists it when asked, and a map over more than
# max_map fails naming the task and the count.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP 1,000 elements; the sanitizer pass runs it"
    exit 0
fi
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-map-XXXXXX")
chmod 0700 "$host"
mkdir -p "$host/lib" "$host/plugins" "$host/workflows"
cp "$SY_TASKLIB" "$host/lib/tasks.so"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 4; }; };
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"; export SWITCHYARD_CONFIG
cat >"$host/workflows/fan.cfg" <<'CFG'
workflow = {
  name = "fan";
  max_map = 1000;
  tasks = (
    { id = "each"; map = "files"; function = "../lib/tasks.so:ok_echo"; },
    { id = "after"; after = ["each"]; function = "../lib/tasks.so:ok_echo"; }
  );
};
CFG
python3 -c 'import json; print(json.dumps({"files": ["f%d" % i for i in range(1000)], "who": "me"}))' \
    >"$host/ctx.json"

run check
rc_is 0 "a workflow with a map checks clean"
run graph fan
has '"each" [label="each\ndefault\nmap files", shape=box3d];' "graph draws the mapped task as a stack"
run run fan --context "@$host/ctx.json"
rc_is 0 "the run of a 1,000-element map completes"
id=$(run_id)
is Completed "$id" 't["each"]["status"]' "the mapped task is Completed"
is '{"Completed": 1000}' "$id" 't["each"]["map"]["elements"]' "status --json counts its elements by state"
is '[1000, 1000]' "$id" '[t["each"]["map"]["size"], t["each"]["map"]["created"]]' "of 1,000, every one made"
is true "$id" '[o["item"] for o in t["after"]["output"]["each"]] == ["f%d" % i for i in range(1000)]' \
    "the task after the map got all 1,000 outputs in order"
is true "$id" '[o["map_index"] for o in t["after"]["output"]["each"]] == list(range(1000))' \
    "each output names its element"
is '["me", false]' "$id" '[t["after"]["output"]["each"][7]["who"], "files" in t["after"]["output"]["each"][7]]' \
    "an element's input is the context less the list, with its item"
is false "$id" '"list" in t["each"]["map"]' "the elements are not listed unless asked"

run status "$id"
rc_is 0 "status"
has "map each: 1000 elements: 1000 Completed (1000 made)" "status sums a map up in one line"
lines=$(printf '%s\n' "$out" | wc -l)
[ "$lines" -lt 20 ]; ok $? "instead of 1,000 rows ($lines lines)"
run status "$id" --task each
rc_is 0 "status --task of the mapped task"
has "each[999]" "lists its elements"
run status "$id" --task each --json
python3 -c '
import json, sys
t = json.loads(sys.stdin.read())
sys.exit(0 if [e["index"] for e in t["map"]["list"]] == list(range(1000)) else 1)' <<EOF2
$out
EOF2
ok $? "status --task --json lists every element in order"

python3 -c 'import json; print(json.dumps({"files": list(range(1001))}))' >"$host/big.json"
run run fan --context "@$host/big.json"
rc_is 1 "a map over more than max_map fails the run"
id=$(run_id)
is "task 'each' maps over 1001 elements, more than max_map 1000 (raise max_map on the task or the workflow)" \
    "$id" 't["each"]["error"]' "naming the task, the count and the limit"
is Skipped "$id" 't["after"]["status"]' "and what depends on it is skipped"

# The same map on the PostgreSQL store, when its binaries are installed.
pgdir="$host/pgdir"
mkdir -p "$pgdir" && chmod 0755 "$host" "$pgdir"
if url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$pgdir"); then
    sed -i "s|^store = .*|store = \"$url\";|" "$host/switchyard.cfg"
    run run fan --context "@$host/ctx.json"
    rc_is 0 "on PostgreSQL, the 1,000-element map completes"
    id=$(run_id)
    is true "$id" '[o["item"] for o in t["after"]["output"]["each"]] == ["f%d" % i for i in range(1000)]' \
        "on PostgreSQL too, the task after it got all 1,000 outputs in order"
    is '{"Completed": 1000}' "$id" 't["each"]["map"]["elements"]' "and status counts them"
    "$SY_SRCDIR/tests/bin/pg-throwaway" stop "$pgdir"
else
    echo "# no PostgreSQL binaries: the PostgreSQL part is not run"
fi
rm -rf "$host"

# The example in examples/fanout runs as its README says.
ex=$(mktemp -d "${TMPDIR:-/tmp}/sy-fanout-XXXXXX")
cp -R "$SY_SRCDIR/examples/fanout/." "$ex/"
chmod -R u+w "$ex"
mkdir -p "$ex/plugins"
install -m 0755 "$SY_THREAD_PLUGIN" "$ex/plugins/thread.so"
SWITCHYARD_PLUGIN_PATH="$ex/plugins"; export SWITCHYARD_PLUGIN_PATH
SWITCHYARD_CONFIG="$ex/switchyard.cfg"; export SWITCHYARD_CONFIG
host=$ex
run run fanout
rc_is 0 "examples/fanout runs"
id=$(run_id)
is 28 "$id" 't["total"]["output"]["letters"]' "its total got every measurement"
is '[1, 4, 9, 16, 25, 36, 49, 64, 81, 100]' "$id" '[o["square"] for o in t["squares"]["output"]["squares"]]' \
    "its range map squared 1 to 10 in order"

rm -rf "$ex"

# `retry` of a run whose map failed maps again: commands that fail until a
# file exists, then succeed; the task after it gets all the new outputs.
make_host
mkdir -p "$host/plugins"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
sed -i 's/plugin = "ctl"; slots = 4;.*}/plugin = "thread"; workers = 4; }/' "$host/switchyard.cfg"
workflow again <<WF
workflow = {
  name = "again";
  tasks = (
    { id = "each"; map_range = 5;
      command = ["/bin/sh", "-c", "[ -f $host/mark ] && echo '{\\"ok\\": true}'"]; },
    { id = "after"; after = ["each"]; command = ["/bin/cat"]; }
  );
};
WF
run run again
rc_is 1 "a map whose elements all fail fails its run"
id=$(run_id)
: >"$host/mark"
run retry "$id"
rc_is 0 "retry runs it again"
is Completed "$id" 'r["status"]' "the run is Completed"
is '{"Completed": 5}' "$id" 't["each"]["map"]["elements"]' "the map was made again: 5 elements, all Completed"
is 5 "$id" 'len(t["after"]["output"]["each"])' "the task after it got the 5 new outputs"
cleanup_host
done_testing
