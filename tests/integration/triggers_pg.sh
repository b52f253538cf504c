#!/bin/sh
# Exactly once across hosts (docs/events.md): two `serve` hosts on one
# PostgreSQL database, each with the admin API; 1,000 events are posted
# (POST /api/v1/events, each with its own key, retried against the other
# host until acknowledged) while the hosts are killed (-9) and restarted in
# turn.  Every event is stored once, and fires its trigger exactly once:
# 1,000 runs, one per event.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timing-driven end to end (hosts killed mid-way); the sanitizer pass runs it"
    exit 0
fi
if ! command -v curl >/dev/null 2>&1; then
    echo "1..0 # SKIP curl is not installed"
    exit 0
fi
PSQL=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -n1)
[ -n "$PSQL" ] || { echo "1..0 # SKIP no psql"; exit 0; }
make_host 'lease = "1s";'
url=$("$SY_SRCDIR/tests/bin/pg-throwaway" start "$host")
case $? in
0) ;;
77) echo "1..0 # SKIP no PostgreSQL server binaries (apt-get install postgresql-15)"; exit 0 ;;
*) echo "Bail out! the throwaway PostgreSQL server did not start"; exit 1 ;;
esac
stop_pg() { "$SY_SRCDIR/tests/bin/pg-throwaway" stop "$host"; }
trap stop_pg EXIT
sed -i "s|sqlite:var/switchyard.db|$url|" "$host/switchyard.cfg"
cd "$host" || exit 1
out=$("$SWITCHYARD" migrate 2>&1)
case $out in
*"not in this build"*) echo "1..0 # SKIP this build has no PostgreSQL store"; exit 0 ;;
esac
sql() { "$PSQL" -At -d "$url" -c "$1"; }
TOKEN=triggers-test-token-0123456789abcdef
printf '%s\n' "$TOKEN" >token
chmod 0600 token
workflow on_tick <<'WF'
workflow = { name = "on_tick";
  triggers = ( { name = "t"; event = "tick"; } );
  tasks = ( { id = "a"; } ); };
WF
# Two configurations, one port each (picked free now, kept across restarts).
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
port1=$1 port2=$2
for h in 1 2; do
    eval port=\$port$h
    sed "s|^executors|admin = { listen = \"127.0.0.1:$port\"; token_file = \"$host/token\"; };\nexecutors|" \
        switchyard.cfg >"h$h.cfg"
done
start() { # start H: host H in the background, its pid in $pidH
    SWITCHYARD_CONFIG="$host/h$1.cfg" "$SWITCHYARD" serve >>"$host/h$1.log" 2>&1 &
    eval pid$1=$!
}
start 1
start 2
for h in 1 2; do
    for _ in $(seq 1 300); do grep -q "admin: listening" "$host/h$h.log" && break; sleep 0.1; done
done

# The poster: 1,000 events, each retried (against either host) until one
# acknowledges it; it stops after 120 s whatever happened.
python3 - "$port1" "$port2" "$TOKEN" >"$host/post.out" 2>&1 <<'PY' &
import http.client, json, sys, time
ports, token = sys.argv[1:3], sys.argv[3]
deadline = time.time() + 120
acked = 0
for i in range(1000):
    body = json.dumps({"name": "tick", "key": "e%d" % i, "data": {"i": i}})
    k = i
    while time.time() < deadline:
        port = ports[k % 2]
        k += 1
        try:
            c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=5)
            c.request("POST", "/api/v1/events", body,
                      {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            c.close()
            if r.status in (200, 201):
                acked += 1
                break
        except OSError:
            pass
        time.sleep(0.05)
print("acked", acked)
PY
poster=$!
# Kill and restart each host in turn while the poster posts.
for round in 1 2 3; do
    for h in 1 2; do
        sleep 0.7
        eval kill -9 \$pid$h
        eval wait \$pid$h 2>/dev/null
        sleep 0.3
        start "$h"
    done
done
wait $poster
grep -q "acked 1000" "$host/post.out"; ok $? "every event acknowledged ($(cat "$host/post.out"))"
same() { if [ "$2" = "$1" ]; then ok 0 "$3"; else echo "# got '$2', expected '$1'"; ok 1 "$3"; fi; }
same 1000 "$(sql "SELECT count(*) FROM named_events WHERE name = 'tick'")" \
    "each event stored once, retried posts included"
for _ in $(seq 1 300); do
    [ "$(sql "SELECT count(*) FROM trigger_items WHERE trigger_key = 'public::on_tick::t'")" = 1000 ] && break
    sleep 0.1
done
same 1000 "$(sql "SELECT count(*) FROM trigger_items WHERE trigger_key = 'public::on_tick::t' AND firing IS NOT NULL")" \
    "every event consumed by a firing"
same 1000 "$(sql "SELECT count(*) FROM runs WHERE workflow = 'on_tick'")" "1,000 runs: one per event"
same 1000 "$(sql "SELECT count(DISTINCT (context::json->'trigger'->'event'->>'id')) FROM runs WHERE workflow = 'on_tick'")" \
    "each run started by a different event"
same 0 "$(sql "SELECT count(*) FROM trigger_firings f LEFT JOIN runs r ON r.id = f.run_id WHERE r.id IS NULL")" \
    "every firing has its run"
kill -TERM $pid1 $pid2
wait $pid1 $pid2
done_testing
