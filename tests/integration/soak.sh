#!/bin/bash
# The soak: one `serve` under a continuous stream of workflows (commands,
# function tasks, a small map, random failures with retries, slow runs
# that get cancelled) for SY_SOAK_SECONDS (default 20; scripts/soak runs
# an hour).  Every SY_SOAK_EVERY seconds (default 2; the hour: 60) a line
# with the host's RSS and open descriptors.  At the end every run
# submitted is in a final state, the RSS of the second half is within
# SY_SOAK_RSS_SLACK percent (default 25; the hour: 10) plus 8 MiB of the
# first half's, and the host idle after the stream holds no more
# descriptors than idle before it.
#
#   SY_SOAK_SEED   the random seed (default: from the clock, printed)
# Arrays and $RANDOM: bash, whichever shell the harness started.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP the soak measures a live host's RSS; it runs in the sanitizer pass"
    exit 0
fi
seconds=${SY_SOAK_SECONDS:-20}
every=${SY_SOAK_EVERY:-2}
slack=${SY_SOAK_RSS_SLACK:-25}
seed=${SY_SOAK_SEED:-$(date +%s)}
RANDOM=$seed
echo "# soak: ${seconds}s, a sample every ${every}s, seed $seed (SY_SOAK_SEED=$seed to repeat)"

host=$(mktemp -d "${TMPDIR:-/tmp}/sy-soak-XXXXXX") || exit 1
chmod 0700 "$host"
mkdir -p "$host/plugins" "$host/workflows" "$host/lib" "$host/var"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cp "$SY_TASKLIB" "$host/lib/tasks.so"
cat >"$host/switchyard.cfg" <<'CFG'
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 8; }; };
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"
export SWITCHYARD_CONFIG
# A quarter of the flaky task's attempts fail; three attempts.
cat >"$host/workflows/mixed.cfg" <<'WF'
workflow = {
  name = "mixed";
  retry = { attempts = 3; delay = "10ms"; };
  tasks = (
    { id = "start"; command = ["/bin/echo", "{\"n\": 4}"]; },
    { id = "fn"; after = ["start"]; function = "../lib/tasks.so:ok_echo"; },
    { id = "flaky"; after = ["start"]; command = ["/bin/sh", "-c", "[ $(od -An -N1 -tu1 /dev/urandom) -ge 64 ] && echo '{}'"]; },
    { id = "fan"; after = ["start"]; map_range = 8; command = ["/bin/true"]; },
    { id = "join"; after = ["fn", "flaky", "fan"]; command = ["/bin/true"]; }
  );
};
WF
cat >"$host/workflows/doomed.cfg" <<'WF'
workflow = {
  name = "doomed";
  tasks = ( { id = "no"; function = "../lib/tasks.so:fail_with_error"; },
            { id = "after"; after = ["no"]; command = ["/bin/true"]; } );
};
WF
cat >"$host/workflows/slow.cfg" <<'WF'
workflow = {
  name = "slow";
  tasks = ( { id = "nap"; command = ["/bin/sleep", "3"]; } );
};
WF

# Under AddressSanitizer the freed memory it quarantines (256 MiB) would
# read as growth: none is kept, so the RSS measures the host's own.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0" \
    "$SWITCHYARD" serve >"$host/serve.log" 2>&1 &
pid=$!
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null; }
fds() { ls "/proc/$pid/fd" 2>/dev/null | wc -l; }
sleep 1
idle_fds=$(fds)

submitted=0 cancelled=0 bad_submit=0
start=$(date +%s)
next_sample=$((start + every))
samples=()
slow_ids=()
while :; do
    now=$(date +%s)
    [ $((now - start)) -ge "$seconds" ] && break
    kill -0 "$pid" 2>/dev/null || break
    r=$((RANDOM % 10))
    if [ $r -lt 6 ]; then wf=mixed; elif [ $r -lt 8 ]; then wf=doomed; else wf=slow; fi
    if out=$("$SWITCHYARD" submit "$wf" 2>&1); then
        submitted=$((submitted + 1))
        [ $wf = slow ] && slow_ids+=("$out")
    else
        bad_submit=$((bad_submit + 1))
        echo "# submit failed: $out"
    fi
    # Half the slow runs are cancelled, running or not yet started.
    if [ ${#slow_ids[@]} -gt 0 ] && [ $((RANDOM % 2)) -eq 0 ]; then
        if "$SWITCHYARD" cancel "${slow_ids[0]}" >/dev/null 2>&1; then
            cancelled=$((cancelled + 1))
        fi
        slow_ids=("${slow_ids[@]:1}")
    elif [ ${#slow_ids[@]} -gt 8 ]; then
        slow_ids=("${slow_ids[@]:1}")
    fi
    if [ "$now" -ge "$next_sample" ]; then
        s="$(rss) $(fds)"
        samples+=("$s")
        echo "# $((now - start))s: $submitted runs submitted, $cancelled cancelled, RSS ${s% *} KiB, ${s#* } descriptors"
        next_sample=$((next_sample + every))
    fi
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null
ok $? "the host served the whole soak"
[ "$bad_submit" -eq 0 ]; ok $? "every submit was accepted ($submitted, $bad_submit refused)"

# Let what is in flight end, then stop the host.
for _ in $(seq 1 600); do
    n=$("$SWITCHYARD" runs --all --json | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin) if r["status"] in ("Pending", "Running")))')
    [ "$n" = 0 ] && break
    sleep 0.1
done
sleep 0.5
end_fds=$(fds)
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ]; ok $? "serve drains and exits 0 (got $rc)"
"$SWITCHYARD" runs --all --json >"$host/runs.json"
out=$(python3 - "$host/runs.json" "$submitted" <<'PY'
import collections, json, sys
runs = json.load(open(sys.argv[1]))
states = collections.Counter(r["status"] for r in runs)
print(dict(states))
ok = len(runs) == int(sys.argv[2]) and set(states) <= {"Completed", "Failed", "Cancelled"}
sys.exit(0 if ok else 1)
PY
)
ok $? "every run submitted ended in a final state: $out"
case $out in *Completed*) ok 0 "some runs completed" ;; *) ok 1 "some runs completed" ;; esac
case $out in *Failed*) ok 0 "the doomed ones failed" ;; *) ok 1 "the doomed ones failed" ;; esac

# Descriptors: those of running tasks come and go, so the host idle after
# the stream holds what it held idle before it.
[ "$end_fds" -le "$idle_fds" ]
ok $? "no descriptor kept: $end_fds open when idle after the stream, $idle_fds before it"

# Flat: the second half's highest against the first half's (the first
# sample, taken while the host warms up, is left out).
n=${#samples[@]}
if [ "$n" -ge 4 ]; then
    half=$((n / 2))
    r1=0 f1=0 r2=0 f2=0
    for ((i = 1; i < n; i++)); do
        set -- ${samples[$i]}
        if [ $i -lt $half ]; then
            [ "$1" -gt $r1 ] && r1=$1
            [ "$2" -gt $f1 ] && f1=$2
        else
            [ "$1" -gt $r2 ] && r2=$1
            [ "$2" -gt $f2 ] && f2=$2
        fi
    done
    [ "$r2" -le $((r1 + r1 * slack / 100 + 8192)) ]
    ok $? "RSS flat: at most $r2 KiB in the second half against $r1 KiB in the first (slack ${slack}% + 8 MiB)"
else
    ok 1 "enough samples to judge growth ($n)"
fi
if [ "$tap_failed" -eq 0 ] && [ -z "${SY_SOAK_KEEP:-}" ]; then rm -rf "$host"; else echo "# kept: $host"; fi
done_testing
