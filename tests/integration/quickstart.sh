#!/bin/sh
# The quickstart runs end to end through the host with the shipped thread
# plugin: a command, a C function from a task library, a retry, a branch
# skipped by `when`.
. "$SY_SRCDIR/tests/integration/lib.sh"
jget_cache=1 # every command below goes through `run`
host=$(mktemp -d "${TMPDIR:-/tmp}/sy-qs-XXXXXX")
chmod 0700 "$host"
cp -R "$SY_SRCDIR/examples/quickstart/." "$host/"
chmod -R u+w "$host"
mkdir -p "$host/lib" "$host/plugins"
cp "$SY_BUILDDIR/examples/quickstart/.libs/libquickstart.so" "$host/lib/"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
SWITCHYARD_PLUGIN_PATH="$host/plugins"; export SWITCHYARD_PLUGIN_PATH
SWITCHYARD_CONFIG="$host/switchyard.cfg"; export SWITCHYARD_CONFIG

run check
rc_is 0 "the quickstart configuration checks clean"
run run quickstart
rc_is 0 "the quickstart completes"
id=$(run_id)
is Completed "$id" 'r["status"]' "the run is Completed"
is '{"rows": 3, "total": 49.75}' "$id" 't["transform"]["output"]["summary"]' "the C function summarised what the command extracted"
is '["Completed", 2]' "$id" '[t["load"]["status"], t["load"]["attempts"]]' "load failed once and was retried"
is true "$id" 't["load"]["output"]["loaded"]' "the retried load produced its output"
is Completed "$id" 't["report_full"]["status"]' "the full-extract branch ran"
is Skipped "$id" 't["report_delta"]["status"]' "the delta branch was skipped by its when"
is true "$id" 't["notify"]["output"]["notified"]' "none_failed ran after a skipped branch"

sed -i 's|libquickstart.so:transform|libquickstart.so:transfrom|' "$host/workflows/quickstart.cfg"
run check
rc_is 1 "a misspelt function symbol fails check"
has "quickstart.cfg:" "naming the workflow file"
has "transfrom" "and the missing symbol"

rm -rf "$host"
done_testing
