#!/bin/sh
# A slow or greedy client cannot stall the loop or hold the host: a
# connection that sends half a request neither blocks other requests nor
# outlives admin.timeout; admin.max_connections bounds connections (one
# more waits in the kernel's queue until a slot frees), and the host
# serves again once they close.
. "$SY_SRCDIR/tests/admin/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP timeouts and slow clients; the sanitizer pass runs it (reads.sh and bodies.sh run the server under valgrind)"
    exit 0
fi
make_admin_host 'listen = "127.0.0.1:0"; token_file = "token"; timeout = "1s"; max_connections = 3;'
workflow w <<'WF'
workflow = { name = "w"; tasks = ( { id = "a"; command = ["true"]; } ); };
WF
start_serve
ok $? "serve listens"
port=${where##*:}
python3 - "$port" "$base" >"$host/limits.out" 2>&1 <<'PY'
import socket, subprocess, sys, time
port, base = int(sys.argv[1]), sys.argv[2]

def curl():
    t = time.time()
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                        base + "/api/v1/health"], capture_output=True, text=True)
    return r.stdout, time.time() - t

slow = socket.create_connection(("127.0.0.1", port))
slow.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")   # and no more
code, took = curl()
print("while-slow", code, "fast" if took < 0.9 else "slow:%.2f" % took)
slow.settimeout(4)
t = time.time()
try:
    got = slow.recv(4096)
except socket.timeout:
    got = None
print("slow-closed", "yes" if got is not None and (got == b"" or got.startswith(b"HTTP/1.1 408")) else "no",
      "%.1f" % (time.time() - t))
slow.close()

idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
time.sleep(0.2)
code, took = curl()
# Over the limit a connection waits in the kernel's queue until a slot
# frees: here when the idle ones pass admin.timeout.
print("at-limit", code, "waited" if took > 0.6 else "served-at-once:%.2f" % took)
for s in idle:
    s.close()
time.sleep(0.3)
code, took = curl()
print("after", code)
PY
out=$(cat "$host/limits.out")
has "while-slow 200 fast" "half a request on one connection does not stall another"
has "slow-closed yes" "and is closed after admin.timeout"
has "at-limit 200 waited" "over admin.max_connections a connection waits until one frees"
has "after 200" "and the host serves again once they close"
stop_serve
ok $? "serve stops cleanly"
cleanup_host
done_testing
