#!/bin/sh
# A crash inside a plugin is named at once: the process's last line on
# stderr names the signal, the plugin, the instance, the call and the task
# in flight (from the call record, written async-signal-safe before the
# process dies of the same signal), under `run` and under `serve` alike.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP kills hosts with SIGSEGV; it runs in the sanitizer pass"
    exit 0
fi
# The sanitizer's own SIGSEGV report would follow the line: the default
# action, as a production build has, ends the process instead.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"
export ASAN_OPTIONS
make_host 'lease = "1s";'
cat >>"$host/switchyard.cfg" <<'CFG'
executors = {
  default = { plugin = "ctl"; slots = 2; };
  crashy = { plugin = "ctl"; slots = 2; };
};
routes = ["routes.cfg"];
CFG
cat >"$host/routes.cfg" <<'CFG'
routes = { default = "default"; rules = ({ match = "**::crash*"; executor = "crashy"; }); };
CFG
python3 - "$host/switchyard.cfg" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'executors = \{\n  default = \{ plugin = "ctl"; slots = 4;[^\n]*\n\};\n', '', s, count=1)
open(p, 'w').write(s)
PY
workflow crashwf <<'WF'
workflow = {
  name = "crashwf";
  tasks = ( { id = "crash_x"; crash = "submit"; } );
};
WF

# last_line FILE: the file's last non-empty line.
last_line() { grep -v '^$' "$1" | tail -n 1; }

# Each host runs in the background and is waited for: a shell reports a
# foreground command's signal on its own stderr, which some shells point
# at the command's redirection; a waited-for background job's goes to the
# shell's stderr, so the files hold what the process wrote and nothing else.
"$SWITCHYARD" run crashwf >"$host/run.out" 2>"$host/run.err" &
wait $!
rc=$?
[ "$rc" -eq 139 ]; ok $? "run dies of the signal itself (status $rc, 128 + SIGSEGV)"
id=$(sed -n 's/^run \([0-9]*\):.*/\1/p' "$host/run.out")
line=$(last_line "$host/run.err")
echo "# $line"
case "$line" in
"switchyard: fatal: SIGSEGV in plugin 'ctl' code (+0x"*"), inside call submit of plugin 'ctl', instance 'crashy', task public::crashwf::crash_x (run $id, attempt 1); the process dies with it")
    ok 0 "run's last line names the signal, plugin, instance, call and task" ;;
*) ok 1 "run's last line names the signal, plugin, instance, call and task" ;;
esac
[ "$(grep -c 'switchyard: fatal:' "$host/run.err")" -eq 1 ]; ok $? "said once"

# serve: a fresh store, the run submitted first.
sed -i 's|sqlite:var/switchyard.db|sqlite:var/serve.db|' "$host/switchyard.cfg"
out=$("$SWITCHYARD" submit crashwf 2>&1)
id=$(run_id)
timeout 30 "$SWITCHYARD" serve --exit-when-idle >"$host/serve.out" 2>"$host/serve.err" &
wait $!
rc=$?
[ "$rc" -eq 139 ]; ok $? "serve dies of the signal itself (status $rc)"
line=$(last_line "$host/serve.err")
echo "# $line"
case "$line" in
"switchyard: fatal: SIGSEGV in plugin 'ctl' code (+0x"*"), inside call submit of plugin 'ctl', instance 'crashy', task public::crashwf::crash_x (run $id, attempt 1); the process dies with it")
    ok 0 "serve's last line names them too" ;;
*) ok 1 "serve's last line names them too" ;;
esac

cleanup_host
done_testing
