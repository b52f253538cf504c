#!/bin/sh
# The parse cache through the commands: `check` of a large workflow file
# leaves one entry in var/workflow-cache; `graph` answers the same from it,
# and from a damaged entry (which it rewrites); a route that sends a task
# to a plugin that refuses its parameters is still an error at the task's
# line, though the file's bytes did not change; `workflow_cache = ""`
# writes nothing.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP a file of 1,300 tasks parsed several times; the sanitizer pass runs it"
    exit 0
fi
make_host
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
# 1,300 tasks, over the 64 KiB from which files are cached.
python3 - "$host/workflows/big.cfg" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('workflow = {\n  name = "big";\n  tasks = (\n')
    rows = []
    for i in range(1300):
        after = ' after = ["t%d"];' % (i - 1) if i else ""
        rows.append('    { id = "t%d";%s mode = "ok"; sleep_ms = %d; }' % (i, after, i % 3))
    f.write(",\n".join(rows) + "\n  );\n};\n")
PY
cache="$host/var/workflow-cache"
entries() { find "$cache" -type f 2>/dev/null | wc -l; }

run check
rc_is 0 "a large workflow checks clean"
[ "$(entries)" -eq 1 ]; ok $? "and leaves one cache entry ($(entries))"
entry=$(find "$cache" -type f -name '*.wfc')
size=$(wc -c <"$entry")

inode=$(stat -c %i "$entry")
run graph big
rc_is 0 "graph from the cache entry"
[ "$(stat -c %i "$entry")" = "$inode" ]; ok $? "which it reads, not writes"
printf '%s\n' "$out" >"$host/graph1.dot"
has '"t1299" [label="t1299\ndefault"];' "draws the tasks"
has '"t1298" -> "t1299";' "and the edges"

python3 - "$entry" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40
open(p, "wb").write(bytes(b))
PY
run graph big
rc_is 0 "graph with a damaged entry"
printf '%s\n' "$out" >"$host/graph2.dot"
cmp -s "$host/graph1.dot" "$host/graph2.dot"; ok $? "draws the same graph (the file parsed again)"
[ "$(entries)" -eq 1 ] && [ "$(wc -c <"$entry")" -eq "$size" ]; ok $? "and the entry is whole again"
# An entry is only ever replaced (renamed over): the same inode is a hit.
inode=$(stat -c %i "$entry")
run graph big
cmp -s "$host/graph1.dot" - <<EOF2
$out
EOF2
ok $? "which the next graph reads"
[ "$(stat -c %i "$entry")" = "$inode" ]; ok $? "without writing it again"

# The file is unchanged; where task t700 goes is not.
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = {
  default = { plugin = "ctl"; slots = 4; };
  thr = { plugin = "thread"; };
};
routes = { default = "default"; rules = ( { match = "public::big::t700"; executor = "thr"; } ); };
CFG
run check
rc_is 1 "a task routed to a plugin that refuses its parameters fails check, cache or not"
has "big.cfg:704: error: task 't700' (executor 'thr', plugin 'thread'): unknown key 'mode'" \
    "at the task's line, as a parse reports it"

host2=$host
make_host 'workflow_cache = "";'
cp "$host2/workflows/big.cfg" "$host/workflows/"
run check
rc_is 0 "with workflow_cache = \"\""
[ ! -e "$host/var/workflow-cache" ]; ok $? "nothing is cached"
rm -rf "$host2"
cleanup_host
done_testing
