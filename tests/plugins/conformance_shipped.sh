#!/bin/sh
# Every shipped plugin passes the conformance kit.
. "$SY_SRCDIR/tests/cli/tap.sh"
KIT=$SY_BUILDDIR/switchyard-conformance
if [ -n "$SY_WRAP" ]; then
    SWITCHYARD_CONFORMANCE_TIME_SCALE=${SWITCHYARD_CONFORMANCE_TIME_SCALE:-10}
    export SWITCHYARD_CONFORMANCE_TIME_SCALE
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-conf-XXXXXX")
install -m 0755 "$SY_THREAD_PLUGIN" "$dir/thread.so"

out=$($SY_WRAP "$KIT" "$dir/thread.so" --params "$SY_SRCDIR/tests/data/conformance/thread-cmd.cfg" 2>&1)
rc=$?
rc_is 0 "the thread plugin (command tasks) passes the kit"
hasnt "FAIL " "with no failed check"
has "PASS capacity" "capacity is honest under concurrent submitters"
has "PASS cancel" "queued and running commands are cancelled"

# Function tasks: the task library's functions, in process.
sed "s|@TASKLIB@|$SY_TASKLIB|" >"$dir/fn.cfg" <<'CFG'
instance = { workers = 2; };
task = { function = "@TASKLIB@:ok_echo"; };
long_task = { function = "@TASKLIB@:slow_cancellable"; };
bad_instance = { workers = -1; };
CFG
out=$($SY_WRAP "$KIT" "$dir/thread.so" --params "$dir/fn.cfg" 2>&1)
rc=$?
rc_is 0 "the thread plugin (function tasks) passes the kit"
hasnt "FAIL " "with no failed check"

rm -rf "$dir"
done_testing
