#!/bin/sh
# What `serve` tells systemd (Type=notify, sd_notify(3)): READY=1 once it
# serves, STATUS= lines, RELOADING=1 with MONOTONIC_USEC then READY=1 around
# a SIGHUP reload (and one asked through the admin API), STOPPING=1 on SIGTERM, WATCHDOG=1 every half of
# WATCHDOG_USEC when WATCHDOG_PID names it (and none when it names another
# process), and none while the loop is wedged; an abstract socket ("@name")
# works too, and the tasks it runs do not inherit NOTIFY_SOCKET.  A
# test-side listener plays systemd.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP five hosts started, timed pings; the sanitizer pass runs it (test_sdnotify runs under valgrind)"
    exit 0
fi
make_host 'admin = { listen = "127.0.0.1:0"; token_file = "token"; };'
token=admin-test-token-0123456789abcdef
printf '%s\n' "$token" >"$host/token"
chmod 0600 "$host/token"
workflow slow <<'WF'
workflow = {
  name = "slow";
  tasks = ( { id = "only"; sleep_ms = 2500; } );
};
WF

# listen WHERE LOG: a listener in the background ($lpid).
listen() {
    rm -f "$2" "$2.listening"
    python3 "$SY_SRCDIR/tests/integration/notify_listen.py" "$1" "$2" &
    lpid=$!
    for _ in $(seq 1 100); do [ -f "$2.listening" ] && return 0; sleep 0.05; done
    return 1
}
# seen PATTERN LOG [TENTHS]: waits until a datagram matches the grep pattern.
seen() {
    for _ in $(seq 1 "${3:-100}"); do grep -q -- "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}

n="$host/notify.log"
listen "$host/notify.sock" "$n"; ok $? "the listener is up"
# WATCHDOG_PID is set the way systemd sets it: to the pid that execs the
# host (valgrind, when it wraps the host, runs in that same process).
NOTIFY_SOCKET="$host/notify.sock" WATCHDOG_USEC=400000 \
    sh -c 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec $SY_WRAP "$SWITCHYARD" serve' \
    >"$host/serve.log" 2>&1 &
pid=$!
seen '^READY=1' "$n"; ok $? "READY=1 once the host serves"
out=$(cat "$n")
has "STATUS=serving, 0 runs, 0 tasks running" "with a STATUS= line saying what it does"
run submit slow
seen 'STATUS=serving, 1 run, 1 task running' "$n" 60
ok $? "STATUS= follows the work (a run taken, its task running)"
seen '^WATCHDOG=1' "$n"; ok $? "WATCHDOG=1 with WATCHDOG_USEC set for its pid"
c1=$(grep -c '^WATCHDOG=1' "$n")
sleep 1
c2=$(grep -c '^WATCHDOG=1' "$n")
# Under valgrind the loop turns slowly: one ping is enough there.
[ $((c2 - c1)) -ge "$([ -n "$SY_WRAP" ] && echo 1 || echo 3)" ]
ok $? "about every half interval (got $((c2 - c1)) in 1 s, interval 400 ms)"

kill -HUP "$pid"
seen 'RELOADING=1' "$n"; ok $? "a SIGHUP sends RELOADING=1"
seen 'reloaded: 1 instance' "$host/serve.log" 50; ok $? "and reloads"
python3 - "$n" <<'PY'
import re, sys, time
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
i = next(i for i, l in enumerate(lines) if l.startswith("RELOADING=1"))
m = re.search(r"MONOTONIC_USEC=(\d+)", lines[i])
assert m, lines[i]
now = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
assert abs(now - int(m.group(1))) < 60e6, (now, m.group(1))
assert any(l.startswith("READY=1") for l in lines[i + 1:]), lines[i:]
PY
ok $? "with MONOTONIC_USEC on CLOCK_MONOTONIC, then READY=1 again"

# A reload asked through the admin API tells systemd the same.
if command -v curl >/dev/null 2>&1; then
    where=$(sed -n 's/.*admin: listening on \([^ ]*\).*/\1/p' "$host/serve.log" | head -n1)
    r1=$(grep -c '^RELOADING=1' "$n")
    y1=$(grep -c '^READY=1' "$n")
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $token" \
        "http://$where/api/v1/reload")
    [ "$code" = 200 ]; ok $? "POST /api/v1/reload reloads (HTTP $code)"
    for _ in $(seq 1 50); do [ "$(grep -c '^RELOADING=1' "$n")" -gt "$r1" ] && break; sleep 0.1; done
    [ "$(grep -c '^RELOADING=1' "$n")" -gt "$r1" ]
    ok $? "and sends RELOADING=1 as SIGHUP does"
    for _ in $(seq 1 50); do [ "$(grep -c '^READY=1' "$n")" -gt "$y1" ] && break; sleep 0.1; done
    [ "$(grep -c '^READY=1' "$n")" -gt "$y1" ]; ok $? "then READY=1 again"
fi

kill -TERM "$pid"
seen '^STOPPING=1' "$n"; ok $? "SIGTERM sends STOPPING=1 as the drain begins"
wait "$pid"; ok $? "the host drains and exits 0"
kill "$lpid"; wait "$lpid" 2>/dev/null

# An abstract socket, a watchdog meant for another process, and a task that
# looks for the variables in its environment.
cp "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
python3 - "$host/switchyard.cfg" "$host" <<'PY'
import sys
p, host = sys.argv[1], sys.argv[2]
s = open(p).read().replace('executors = {', 'executors = {\n  sh = { plugin = "thread"; };', 1)
s += 'routes = { default = "default"; rules = ( { match = "**::envtask::**"; executor = "sh"; } ); };\n'
open(p, "w").write(s)
PY
workflow envtask <<WF
workflow = {
  name = "envtask";
  tasks = ( { id = "env"; command = ["sh", "-c", "env > '$host/task.env'"]; } );
};
WF
run submit envtask
abs="@sy-notify-$$-$(date +%s%N)"
n2="$host/notify2.log"
listen "$abs" "$n2"; ok $? "a listener on an abstract socket"
NOTIFY_SOCKET="$abs" WATCHDOG_USEC=100000 WATCHDOG_PID=1 \
    $SY_WRAP "$SWITCHYARD" serve --exit-when-idle >"$host/serve2.log" 2>&1
ok $? "serve ran the task and left when idle"
grep -q '^READY=1' "$n2"; ok $? "READY=1 reaches an abstract socket"
grep -q 'STOPPING=1' "$n2"; ok $? "and STOPPING=1 when it leaves"
! grep -q 'WATCHDOG=1' "$n2"; ok $? "no WATCHDOG=1 when WATCHDOG_PID names another process"
[ -f "$host/task.env" ] && ! grep -q 'NOTIFY_SOCKET\|WATCHDOG_' "$host/task.env"
ok $? "a task does not inherit NOTIFY_SOCKET nor WATCHDOG_*"
kill "$lpid"; wait "$lpid" 2>/dev/null

# A wedged loop stops the pings (so systemd's watchdog fires): a submit()
# that blocks 1.2 s holds the loop, and no WATCHDOG=1 comes meanwhile,
# though it is due every 100 ms; then they come again.
sed -i 's|record = |call_timeout = "10s"; record = |' "$host/switchyard.cfg"
workflow wedge <<'WF'
workflow = {
  name = "wedge";
  tasks = ( { id = "held"; block_ms = 1200; }, { id = "then"; after = ["held"]; sleep_ms = 500; } );
};
WF
run submit wedge
n3="$host/notify3.log"
listen "$host/notify3.sock" "$n3"
NOTIFY_SOCKET="$host/notify3.sock" WATCHDOG_USEC=200000 \
    sh -c 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec $SY_WRAP "$SWITCHYARD" serve --exit-when-idle' \
    >"$host/serve3.log" 2>&1
ok $? "serve ran the wedging workflow"
kill "$lpid"; wait "$lpid" 2>/dev/null
python3 - "$n3" <<'PY'
import sys
t = [float(l.rsplit("@", 1)[1]) for l in open(sys.argv[1]) if l.startswith("WATCHDOG=1")]
gaps = [b - a for a, b in zip(t, t[1:])]
assert gaps, t
i = max(range(len(gaps)), key=gaps.__getitem__)
assert gaps[i] >= 1.0, gaps      # silent while the loop was held
assert len(gaps) - i >= 3, gaps  # and again every turn after it
print("# longest gap %.2f s, %d pings after it" % (gaps[i], len(gaps) - i))
PY
ok $? "no WATCHDOG=1 while the loop is held; they resume after"

# With a PostgreSQL store the call record (what names a plugin a crash
# was in) goes to the unit's state directory, $STATE_DIRECTORY: the
# configuration's directory is read-only under ProtectSystem=strict.
url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host" 2>/dev/null)
case $? in
0)
    trap '"$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host" >/dev/null 2>&1' EXIT
    sed "s|^store = .*|store = \"$url\";|" "$host/switchyard.cfg" >"$host/pg.cfg"
    mkdir -p "$host/state"
    if "$SWITCHYARD" --config "$host/pg.cfg" migrate 2>&1 | grep -q "not in this build"; then
        echo "ok $((tap_n += 1)) # SKIP this build has no PostgreSQL store"
    else
        n5="$host/notify5.log"
        listen "$host/notify5.sock" "$n5"
        NOTIFY_SOCKET="$host/notify5.sock" STATE_DIRECTORY="$host/state" \
            "$SWITCHYARD" --config "$host/pg.cfg" serve >"$host/serve5.log" 2>&1 &
        pid=$!
        seen '^READY=1' "$n5"
        ls "$host"/state/switchyard.calls.* >/dev/null 2>&1 &&
            ! ls "$host"/switchyard.calls.* >/dev/null 2>&1
        ok $? "PostgreSQL store: the call record is in \$STATE_DIRECTORY"
        kill -TERM "$pid"; wait "$pid"
        kill "$lpid"; wait "$lpid" 2>/dev/null
    fi ;;
77) echo "ok $((tap_n += 1)) # SKIP no PostgreSQL server binaries (apt-get install postgresql-15)" ;;
*) ok 1 "the throwaway PostgreSQL server starts" ;;
esac

# Without NOTIFY_SOCKET nothing is sent and nothing complains.
"$SWITCHYARD" serve --exit-when-idle >"$host/serve4.log" 2>&1
ok $? "serve without a service manager"
! grep -qi 'notify\|systemd' "$host/serve4.log"; ok $? "says nothing about one"
cleanup_host
done_testing
