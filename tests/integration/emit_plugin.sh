#!/bin/sh
# A plugin emits named events (executor ABI 1.5, emit_event): a task that
# emits on completion starts the workflow whose trigger listens for the
# event, with the payload in its context, from an instance in the host's
# process and from an isolated one (isolate_plugin = true) alike; a
# refused emit (a bad name) reaches the plugin as an error, which the
# task's failure shows.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven end to end; the sanitizer pass runs it"
    exit 0
fi
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
workflow producer <<'WF'
workflow = { name = "producer"; tasks = (
  { id = "a"; output = { rows = 3; }; emit = "a.done"; emit_key = "day-1"; },
  { id = "iso_b"; output = { rows = 4; }; emit = "b.done"; } ); };
WF
workflow bad <<'WF'
workflow = { name = "bad"; tasks = (
  { id = "a"; emit = "bad name!"; },
  { id = "iso_a"; emit = "bad name!"; } ); };
WF
workflow on_a <<'WF'
workflow = { name = "on_a"; triggers = ( { name = "a"; event = "a.done"; } );
  tasks = ( { id = "x"; } ); };
WF
workflow on_b <<'WF'
workflow = { name = "on_b"; triggers = ( { name = "b"; event = "b.done"; } );
  tasks = ( { id = "x"; } ); };
WF

q() {
    python3 - "$host/var/switchyard.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join(str(c) for c in row))
PY
}
until_q() {
    for _ in $(seq 1 200); do
        [ "$(q "$1" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    echo "# $1: got '$(q "$1")', expected '$2'"
    return 1
}

"$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 200); do
    [ "$(grep -c 'listens' "$host/serve.log")" -ge 2 ] && break
    sleep 0.1
done

out=$("$SWITCHYARD" submit producer)
producer=$(run_id)
# Run states as stored: 2 Completed, 3 Failed.
until_q "SELECT state FROM runs WHERE id = $producer" 2
ok $? "the tasks that emit complete"
until_q "SELECT count(*) FROM runs WHERE workflow IN ('on_a', 'on_b')" 2
ok $? "each emitted event starts the run of the workflow listening for it"
same_ctx() {
    python3 -c 'import json,sys; e=json.loads(sys.argv[1])["trigger"]["event"]; assert e["name"]==sys.argv[2] and e["data"]=={"rows": int(sys.argv[3])} and e["key"]==(sys.argv[4] or None), e' \
        "$(q "SELECT context FROM runs WHERE workflow = '$1'")" "$2" "$3" "${4:-}"
}
same_ctx on_a a.done 3 day-1; ok $? "its context holds the event, payload and key (in-process plugin)"
same_ctx on_b b.done 4; ok $? "its context holds the event and payload (isolated plugin)"
[ "$(q "SELECT count(*) FROM named_events")" = 2 ]; ok $? "two events are stored"

out=$("$SWITCHYARD" submit bad)
bad=$(run_id)
until_q "SELECT state FROM runs WHERE id = $bad" 3
ok $? "a run whose tasks' emits are refused fails"
for t in a iso_a; do
    err=$(q "SELECT error FROM tasks WHERE run_id = $bad AND task_id = '$t'")
    case "$err" in
    *"emit_event refused (status -1, event 0): event name \"bad name!\": may hold only letters, digits and . _ - : /"*)
        ok 0 "the plugin sees the refusal: SY_EINVAL and the reason ($t)" ;;
    *) echo "# error of $t: '$err'"; ok 1 "the plugin sees the refusal: SY_EINVAL and the reason ($t)" ;;
    esac
done
[ "$(q "SELECT count(*) FROM named_events")" = 2 ]; ok $? "a refused event is not stored"

kill -TERM $serve
wait $serve
ok $? "serve stops cleanly"
done_testing
cleanup_host
