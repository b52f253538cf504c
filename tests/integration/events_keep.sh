#!/bin/sh
# events_keep through `switchyard gc`: a named event older than the keep
# period that no trigger listens for is deleted; one that a trigger has
# not settled yet (a part of an `all` still waiting for the other) stays,
# however old; a young event stays.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host 'events_keep = "2d";'
workflow both <<'WF'
workflow = { name = "both";
  triggers = ( { name = "and"; all = ( { event = "p.ready"; }, { event = "q.ready"; } ); } );
  tasks = ( { id = "a"; } ); };
WF
q() {
    python3 - "$host/var/switchyard.db" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join(str(c) for c in row))
db.commit()
PY
}
# The trigger listens from now on (`triggers` registers it), then events.
$SY_WRAP "$SWITCHYARD" triggers >/dev/null
ok $? "triggers registers the trigger"
$SY_WRAP "$SWITCHYARD" emit p.ready >/dev/null && $SY_WRAP "$SWITCHYARD" emit nobody.listens >/dev/null
ok $? "two events emitted"
# Three days pass for everything recorded so far.
q "UPDATE named_events SET created = created - 259200000" >/dev/null
q "UPDATE trigger_states SET since = since - 259200000" >/dev/null
$SY_WRAP "$SWITCHYARD" emit nobody.listens --data '{"young": true}' >/dev/null
out=$($SY_WRAP "$SWITCHYARD" gc --older-than 3650d 2>&1)
ok $? "gc runs"
case "$out" in
*"removed 1 named event, 0 trigger items and 0 trigger firings older than events_keep"*) ok 0 "gc says what it removed" ;;
*) echo "# $out"; ok 1 "gc says what it removed" ;;
esac
got=$(q "SELECT name, data FROM named_events ORDER BY id")
if [ "$got" = 'p.ready|{}
nobody.listens|{"young":true}' ]; then ok 0 "the pending part's event and the young one stay"
else echo "# $got"; ok 1 "the pending part's event and the young one stay"; fi
$SY_WRAP "$SWITCHYARD" triggers --json >"$host/t.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))[0]; assert t["parts"][0]["pending"]==1 and t["parts"][1]["pending"]==0, t' \
    "$host/t.json"; ok $? "the trigger still has its part pending"
done_testing
cleanup_host
