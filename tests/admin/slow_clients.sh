#!/bin/sh
# Slow clients cannot hold the listener: 300 clients that send their
# request a byte at a time, from one address, beside normal requests from
# another.  One address takes at most admin.max_connections_per_ip slots
# (the others are closed as they come), and a connection that has not sent
# its headers within admin.header_timeout is closed however often its bytes
# come; every normal request meanwhile is answered within a bound.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timeouts and slow clients; the sanitizer pass runs it"
    exit 0
fi
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; header_timeout = "2s";'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens"
port=${where##*:}
timeout 60 python3 - "$port" >"$host/slow.out" 2>&1 <<'PY'
import errno, http.client, select, socket, sys, threading, time
port = int(sys.argv[1])
N, SECONDS, BOUND = 300, 5.0, 2.0
request = b"GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 4000

slow = []  # [socket, opened, ended or None, bytes sent]
for _ in range(N):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.2", 0))  # one address for every slow client
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    slow.append([s, time.time(), None, 0])

answers = []
def normal():
    end = time.time() + SECONDS
    while time.time() < end:
        t = time.time()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/api/v1/runs")
            status = c.getresponse().status
            c.close()
        except OSError as e:
            status = "error:%s" % e
        answers.append((status, time.time() - t))
        time.sleep(0.2)
th = threading.Thread(target=normal)
th.start()

end = time.time() + SECONDS
while time.time() < end:
    for k in slow:
        s = k[0]
        if k[2] is not None:
            continue
        r, _, _ = select.select([s], [], [], 0)
        try:
            if r and s.recv(1) == b"":
                raise ConnectionResetError
            if k[3] < len(request):
                s.send(request[k[3]:k[3] + 1])
                k[3] += 1
        except BlockingIOError:
            pass
        except OSError:
            k[2] = time.time()
    time.sleep(0.1)
th.join()

held = [k[2] - k[1] for k in slow if k[2] is not None]
still = sum(1 for k in slow if k[2] is None)
print("slow-ended", len(held), "still-open", still,
      "longest-held %.1f" % (max(held) if held else -1))
print("slow-held-past-deadline", sum(1 for h in held if h > 2.0 + 1.5))
bad = [a for a in answers if a[0] != 200 or a[1] > BOUND]
print("normal", len(answers), "bad", len(bad), "slowest %.2f" % max(a[1] for a in answers))
for a in bad[:5]:
    print("# bad", a)
PY
out=$(cat "$host/slow.out")
printf '%s\n' "$out" | sed 's/^/# /'
has "slow-ended 300 still-open 0" "every slow client is closed by the host within the test"
has "slow-held-past-deadline 0" "none held past admin.header_timeout (2 s) and a sweep"
case "$out" in
*"normal 0 "*) ok 1 "normal requests were made" ;;
*"bad 0 "*) ok 0 "every normal request beside them is answered 200 within 2 s" ;;
*) ok 1 "every normal request beside them is answered 200 within 2 s" ;;
esac
grep -q "admin: closed [0-9]* connections* that had not sent their request headers within admin.header_timeout (2000 ms)" "$host/serve.log"
ok $? "the host says what it closed, and why"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
