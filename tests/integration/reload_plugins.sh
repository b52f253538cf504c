#!/bin/sh
# Plugins and reload: a `.so` dropped into the plugin directory is loaded
# by SIGHUP, without a restart, and a new instance of it takes tasks; an
# instance removed by a reload finishes its attempt, then is stopped, even
# with its `.so` gone from the directory (a plugin is never unloaded under
# its instances); a `.so` replaced in place is not loaded again (the loader
# hands back the mapped copy), and the reload says so; under a new file
# name it is loaded afresh.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
python3 - "$host/switchyard.cfg" "$host" <<'PY'
import re, sys
p, host = sys.argv[1], sys.argv[2]
s = open(p).read()
s = re.sub(r'executors = \{\n.*?\n\};\n',
           'executors = {\n'
           f'  default = {{ plugin = "ctl"; slots = 2; record = "{host}/ctl.log"; }};\n'
           '};\n', s, count=1, flags=re.S)
open(p, 'w').write(s)
PY
cp "$host/switchyard.cfg" "$host/first.cfg"
wait_log() { for _ in $(seq 1 "$2"); do [ "$(grep -c "$1" "$host/serve.log")" -ge "${3:-1}" ] && return 0; sleep 0.1; done; return 1; }
# finished RUN N: polls `status` bare up to N times (under valgrind each poll
# was a program start of seconds); the `is` after it reads it under valgrind.
finished() { for _ in $(seq 1 "$2"); do case "$(SY_WRAP= jget "$1" 'r["status"]')" in Completed|Failed|Cancelled) return 0 ;; esac; sleep 0.1; done; return 1; }

SWITCHYARD_LOG=debug $SY_WRAP "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
pid=$!
# Generous limits: they cost only on failure, and valgrind is slow.
wait_log "serving" 600 || { echo "# serve did not start"; cat "$host/serve.log"; }

# The thread plugin arrives with an instance of it and a route to it.
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
python3 - "$host/switchyard.cfg" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('executors = {\n', 'executors = {\n  cmd = { plugin = "thread"; workers = 2; };\n', 1)
s += 'routes = { rules = ( { match = "*::shell::*"; executor = "cmd"; } ); default = "default"; };\n'
open(p, 'w').write(s)
PY
# The task says it started, then holds until the test lets it go.
workflow shell <<WF
workflow = {
  name = "shell";
  tasks = ( { id = "say"; command = ["sh", "-c",
    "touch $host/started; while [ ! -e $host/go ]; do sleep 0.05; done; echo '{\\"said\\": \\"hi\\"}'"]; } );
};
WF
kill -HUP "$pid"
wait_log "reloaded: 2 instances" 600
ok $? "SIGHUP reloads with the new plugin's instance"
grep -q "reload: plugin thread .* loaded from .*/plugins/thread.so" "$host/serve.log"
ok $? "the .so dropped into the plugin directory was loaded, without a restart"
run submit shell
id=$(run_id)
for _ in $(seq 1 600); do [ -e "$host/started" ] && break; sleep 0.1; done
is Running "$id" 't["say"]["status"]' "a task runs on the new plugin's instance"

# The instance and its .so go while its task runs: the reload is taken,
# the attempt finishes where it started, then the instance is stopped.
rm -f "$host/plugins/thread.so" "$host/workflows/shell.cfg"
cp "$host/first.cfg" "$host/switchyard.cfg"
kill -HUP "$pid"
wait_log "reloaded: 1 instance," 600
ok $? "a reload without the instance (and without its .so) is taken"
sleep 0.3
stopped_early=$(grep -c "were stopped" "$host/serve.log")
touch "$host/go"
finished "$id" 600
is Completed "$id" 'r["status"]' "the attempt in flight finishes on the removed instance"
is cmd "$id" 't["say"]["executor"]' "the store names the instance that ran it"
is '{"said": "hi"}' "$id" 't["say"]["output"]' "with the plugin's output"
wait_log "were stopped" 600 2
ok $? "then the removed instance is stopped (drained, then destroyed)"
ok $([ "$stopped_early" -le 1 ] && echo 0 || echo 1) "and not before its attempt finished"

# The ctl .so replaced in place: not loaded again; the reload says so.
cp "$SY_TEST_PLUGIN_DIR/ctl.so" "$host/plugins/ctl.so.new"
chmod 0755 "$host/plugins/ctl.so.new"
touch -d '2001-01-01' "$host/plugins/ctl.so.new"
mv "$host/plugins/ctl.so.new" "$host/plugins/ctl.so"
kill -HUP "$pid"
wait_log "reloaded: 1 instance," 600 2
ok $? "a reload after the .so was replaced in place is taken"
grep -q "plugin ctl: .*/plugins/ctl.so was replaced on disk, but this host keeps running the version it loaded" "$host/serve.log"
ok $? "and says the loaded version keeps running until a restart"
# The upgrade that works without a restart: the new version under a new
# file name, the old file removed; the reload loads it fresh.
cp "$SY_TEST_PLUGIN_DIR/ctl.so" "$host/plugins/ctl-2.so.new"
chmod 0755 "$host/plugins/ctl-2.so.new"
mv "$host/plugins/ctl-2.so.new" "$host/plugins/ctl-2.so"
rm "$host/plugins/ctl.so"
kill -HUP "$pid"
wait_log "reloaded: 1 instance," 600 3
ok $? "a reload with the plugin under a new file name is taken"
grep -q "reload: plugin ctl .* loaded from .*/plugins/ctl-2.so" "$host/serve.log"
ok $? "the new file is loaded afresh, beside the copy the old instances ran"

# The configurations nothing uses any more were released by the reloads;
# the host goes on.
workflow after <<'WF'
workflow = { name = "after"; tasks = ( { id = "one"; sleep_ms = 10; } ); };
WF
run submit after
id3=$(run_id)
finished "$id3" 600
grep -q "reload: the configuration of reload 1 was freed: nothing uses it any more" "$host/serve.log"
ok $? "the configuration nothing uses any more was freed (its plugin left loaded)"
is '["Completed", "default"]' "$id3" '[r["status"], t["one"]["executor"]]' "a run after those reloads completes"
kill -TERM "$pid"
wait "$pid"
ok $? "the host drains and exits"
grep -q "AddressSanitizer\|runtime error" "$host/serve.log"
ok $([ $? -ne 0 ] && echo 0 || echo 1) "nothing went wrong in the host"
cleanup_host
done_testing
