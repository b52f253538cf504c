#!/bin/sh
# The host's log in its three forms: JSON lines with `log.format = "json"`
# (each line an object with time, level, message, and the instance for a
# plugin's line), the journal's "<N>" priority prefixes without timestamps
# when stderr is the stream JOURNAL_STREAM names, the human form otherwise
# (a JOURNAL_STREAM left over from a parent does not count), and a bad
# value refused in one line naming the field.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP eight hosts started; the sanitizer pass runs it (test_log_line runs under valgrind)"
    exit 0
fi
make_host
# /dev/full: every record the plugin writes fails, and the plugin logs it.
sed -i 's|record = "[^"]*"|record = "/dev/full"|' "$host/switchyard.cfg"
workflow one <<'WF'
workflow = { name = "one"; tasks = ( { id = "a"; sleep_ms = 1; } ); };
WF
cp "$host/switchyard.cfg" "$host/base.cfg"

# serve_once LOG [ENV...]: submits `one` and serves it, stderr to LOG.
serve_once() {
    log=$1
    shift
    run submit one
    : >"$log"
    env "$@" $SY_WRAP "$SWITCHYARD" serve --exit-when-idle 2>>"$log" >/dev/null
}

{ cat "$host/base.cfg"; echo 'log = { format = "json"; };'; } >"$host/switchyard.cfg"
serve_once "$host/json.log"; ok $? "serve with log.format = \"json\""
python3 - "$host/json.log" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no log"
objs = [json.loads(l) for l in lines]
for o in objs:
    assert set(o) >= {"time", "level", "message"}, o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    assert o["level"] in ("error", "warn", "info", "debug"), o
assert any(o.get("source") == "serve" and o["message"].startswith("serving as") for o in objs)
plug = [o for o in objs if o["message"].startswith("record:")]
assert plug and plug[0]["instance"] == "default" and plug[0]["level"] == "warn", objs
PY
ok $? "every line is a JSON object; a plugin's line names its instance"

cp "$host/base.cfg" "$host/switchyard.cfg"
j="$host/journal.log"
: >"$j"
stream=$(stat -c '%d:%i' "$j")
serve_once "$j" JOURNAL_STREAM="$stream"; ok $? "serve with JOURNAL_STREAM naming its stderr"
out=$(cat "$j")
has "<6>serve: serving as" "the journal's priority prefix, no timestamp"
has "<4>default: record:" "a warning is <4>"
grep -qv '^<[0-7]>' "$j"; [ $? -eq 1 ]; ok $? "every line has a prefix"

serve_once "$host/other.log" JOURNAL_STREAM="1:1"
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T.* info  serve: serving as' "$host/other.log"
ok $? "a JOURNAL_STREAM naming another file leaves the human form"

{ cat "$host/base.cfg"; echo 'log = { format = "text"; };'; } >"$host/switchyard.cfg"
: >"$j"
serve_once "$j" JOURNAL_STREAM="$(stat -c '%d:%i' "$j")"
grep -Eq '^[0-9]{4}-.* info  serve: serving as' "$j"; ok $? "log.format = \"text\" wins over the journal"

{ cat "$host/base.cfg"; echo 'log = { format = "journal"; };'; } >"$host/switchyard.cfg"
serve_once "$host/forced.log"
grep -q '^<6>serve: serving as' "$host/forced.log"; ok $? "log.format = \"journal\" without the journal"

# A host that cannot start says why at the error priority.
{ sed 's|^store = .*|store = "sqlite:/dev/null/x.db";|' "$host/base.cfg"
  echo 'log = { format = "journal"; };'; } >"$host/switchyard.cfg"
$SY_WRAP "$SWITCHYARD" serve 2>"$host/fail.log" >/dev/null
rc=$?
rc_is 2 "a store that cannot be opened stops serve"
grep -q '^<3>.*switchyard.cfg:1: error: store "sqlite:/dev/null/x.db"' "$host/fail.log"
ok $? "its error is a <3> line naming the file and line"

{ cat "$host/base.cfg"; echo 'log = { format = "yaml"; };'; } >"$host/switchyard.cfg"
line=$(grep -n '^log = ' "$host/switchyard.cfg" | cut -d: -f1)
run check
rc_is 1 "a bad log.format is a configuration error"
has "switchyard.cfg:$line: error: 'log.format' must be \"auto\", \"text\", \"journal\" or \"json\", not \"yaml\"" \
    "in one line naming the field"
cleanup_host
done_testing
