#!/bin/sh
# SIGHUP reloads the configuration without losing a task: with the routing
# file changed, the attempt in flight finishes on the instance it started
# on and the next task goes to the new route; a reload that does not
# validate is refused with its reason and the configuration in force stays.
. "$SY_SRCDIR/tests/integration/lib.sh"
make_host
python3 - "$host/switchyard.cfg" "$host" <<'PY'
import re, sys
p, host = sys.argv[1], sys.argv[2]
s = open(p).read()
s = re.sub(r'executors = \{\n.*?\n\};\n',
           'executors = {\n'
           f'  one = {{ plugin = "ctl"; slots = 2; record = "{host}/one.log"; }};\n'
           f'  two = {{ plugin = "ctl"; slots = 2; record = "{host}/two.log"; }};\n'
           '};\nroutes = ["routes.cfg"];\n', s, count=1, flags=re.S)
open(p, 'w').write(s)
PY
echo 'routes = { default = "one"; };' >"$host/routes.cfg"
workflow pair <<'WF'
workflow = {
  name = "pair";
  tasks = (
    { id = "first"; sleep_ms = 1500; },
    { id = "second"; after = ["first"]; sleep_ms = 10; }
  );
};
WF
wait_log() { for _ in $(seq 1 "$2"); do grep -q "$1" "$host/serve.log" && return 0; sleep 0.1; done; return 1; }

$SY_WRAP "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
pid=$!
run submit pair
id=$(run_id)
for _ in $(seq 1 100); do grep -q "dispatch public::pair::first" "$host/one.log" 2>/dev/null && break; sleep 0.1; done
grep -q "dispatch public::pair::first" "$host/one.log"
ok $? "the first task runs on instance one"
echo 'routes = { default = "two"; };' >"$host/routes.cfg"
kill -HUP "$pid"
wait_log "reloaded: 2 instances" 100
ok $? "SIGHUP reloads the configuration"
# Polled with `status` bare (under valgrind each poll was a program start of
# seconds, so the count is high); the `is` after it reads it under valgrind.
for _ in $(seq 1 600); do [ "$(SY_WRAP= jget "$id" 'r["status"]')" = Completed ] && break; sleep 0.1; done
is Completed "$id" 'r["status"]' "the run completes across the reload"
grep -q "complete public::pair::first" "$host/one.log"
ok $? "the attempt in flight finished on the instance it started on"
grep -q "dispatch public::pair::second" "$host/two.log"
ok $? "the next task went where the new routes say"
grep -q "public::pair::second" "$host/one.log"
ok $([ $? -ne 0 ] && echo 0 || echo 1) "and not to the old instance"
wait_log "instances finished their attempts and were stopped" 50
ok $? "the previous instances are stopped once they have nothing left"

# A valid copy to submit with while the host's own file is broken.
cp "$host/routes.cfg" "$host/routes-ok.cfg"
sed 's|"routes.cfg"|"routes-ok.cfg"|' "$host/switchyard.cfg" >"$host/submit.cfg"
echo 'routes = { default = "three"; };' >"$host/routes.cfg"
kill -HUP "$pid"
wait_log "reload refused" 100
ok $? "a configuration that does not validate is refused"
grep -q "routes.cfg:1: error: .*three" "$host/serve.log"
ok $? "naming the file, the line and the reason"
# An overflow list naming an instance that does not exist: refused too.
printf 'routes = {\n  default = ["two", "nowhere"];\n};\n' >"$host/routes.cfg"
kill -HUP "$pid"
for _ in $(seq 1 100); do [ "$(grep -c "reload refused" "$host/serve.log")" -ge 2 ] && break; sleep 0.1; done
grep -q "routes.cfg:2: error: the default route sends to executor 'nowhere', which is not defined" "$host/serve.log"
ok $? "an overflow list with an unknown instance is refused, naming the file and line"
# The CLI reads the valid copy from here on; the host keeps what it has.
SWITCHYARD_CONFIG="$host/submit.cfg"
run submit pair
id2=$(run_id)
for _ in $(seq 1 600); do [ "$(SY_WRAP= jget "$id2" 'r["status"]')" = Completed ] && break; sleep 0.1; done
is Completed "$id2" 'r["status"]' "the configuration in force stays and runs"
ok $(grep -c "dispatch public::pair::first" "$host/two.log" | grep -qx 1; echo $?) "on the routes it had"
kill -TERM "$pid"
wait "$pid"
ok $? "the host drains and exits"
cleanup_host
done_testing
