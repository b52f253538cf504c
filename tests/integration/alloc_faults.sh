#!/bin/sh
# Allocation failures swept through the real program: tests/fault/alloc.so
# (preloaded) fails the Nth allocation `switchyard` makes from main on, its
# own and those of the libraries it calls (SQLite, jansson, glibc, the
# plugins and task libraries it loads).  For each N:
#   - the process ends within a timeout, by an exit status or by the abort
#     the host chose for its own allocator (sy_xmalloc), never by another
#     signal, and no core file is left;
#   - when it fails, it says so in exactly one error line that names memory
#     (the abort's included);
#   - with the fault cleared, the store passes PRAGMA integrity_check, the
#     tasks Completed before the fault are not run again, and `serve`
#     (or `run`) completes the run.
# `check` (configuration, routing, plugins, workflows) is swept at every N;
# `check` of one instance each of slurm, kubernetes and lambda, with a task
# routed to each, at a seeded stride (SY_ALLOC_CLUSTER_POINTS, default 150;
# `all` for every N, the sweep before a release);
# `audit` (the trail a submit wrote in the store, read back) at a stride
# (SY_ALLOC_AUDIT_POINTS, default 20);
# `submit` (every other point with --key) and `run` of a workflow with
# command and function tasks on the SQLite store at a seeded stride (SY_ALLOC_SEED to repeat;
# SY_ALLOC_SUBMIT_POINTS, SY_ALLOC_RUN_POINTS and SY_ALLOC_SERVE_POINTS,
# default 30, 20 and 15, for a longer sweep); `serve --exit-when-idle` on a
# submitted run the same way.
#
# Allocations made directly by libconfig and libcrypto are not counted
# (SY_FAULT_ALLOC_SKIP): libconfig 1.5 dereferences its own failed
# allocations, and OpenSSL's first digest initializes the library in
# thousands of allocations of its own (docs/reliability.md).
#
# ASan and valgrind replace malloc, which a preload cannot wrap: this runs
# in the valgrind pass on its plain build, bare (not under valgrind), and
# skips itself in the sanitizer pass.
. "$SY_SRCDIR/tests/integration/lib.sh"
inject="$SY_BUILDDIR/tests/fault/.libs/alloc.so"
[ -f "$inject" ] || { echo "1..0 # SKIP $inject not built"; exit 0; }
if ldd "$SWITCHYARD" 2>/dev/null | grep -q 'libasan'; then
    echo "1..0 # SKIP the ASan build's malloc cannot be wrapped by a preload; the valgrind pass runs it on the plain build"
    exit 0
fi
# The plain build runs bare here, valgrind's pass or not.
SY_WRAP=
# Cores allowed, so that a crash or an abort that leaves one is seen (the
# host's out-of-memory abort turns them off for itself).
ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -Hc)" 2>/dev/null
seed=${SY_ALLOC_SEED:-$(date +%s)}
echo "# seed $seed (SY_ALLOC_SEED=$seed to repeat)"
skip_objs="libconfig.so,libcrypto.so"

host=$(mktemp -d "${TMPDIR:-/tmp}/sy-alloc-XXXXXX") || exit 1
chmod 0700 "$host"
trap 'rm -rf "$host"' EXIT
mkdir -p "$host/plugins" "$host/workflows" "$host/lib"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
cp "$SY_TASKLIB" "$host/lib/tasks.so"
cat >"$host/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 2; }; };
pools = { db = 4; };
rate_limits = { api = { rate = 1000; interval = "1s"; burst = 10; }; };
tenants = { public = { weight = 2; max_running = 8; }; };
routes = { default = "default"; rules = ( { match = "*::small::**"; executor = ["default"]; } ); };
CFG
SWITCHYARD_CONFIG="$host/switchyard.cfg"
CRASHLOOP_WITNESS="$host/witness"
export SWITCHYARD_CONFIG CRASHLOOP_WITNESS
# Each execution appends "ROUND TASK ATTEMPT" to the witness before it
# works: commands by echo, functions by tests/tasklib's record_run.
sh_task='echo \"${CRASHLOOP_ROUND:-0} $SWITCHYARD_TASK_ID $SWITCHYARD_ATTEMPT\" >>\"$CRASHLOOP_WITNESS\"; echo {}'
cat >"$host/workflows/small.cfg" <<CFG
workflow = {
  name = "small";
  retry = { attempts = 3; };
  priority = 1;
  limits = ( { key = "k:{@task}"; limit = 2; } );
  rate_limits = ( { key = "r:{@workflow}"; rate = 1000; interval = "1s"; } );
  tasks = (
    { id = "a"; command = ["/bin/sh", "-c", "$sh_task"]; },
    { id = "b"; after = ["a"]; function = "../lib/tasks.so:record_run"; pool = "db"; },
    { id = "c"; after = ["a"]; command = ["/bin/sh", "-c", "$sh_task"];
      rate_limits = ( { name = "api"; key = "{@task}"; } ); },
    { id = "d"; after = ["b", "c"]; function = "../lib/tasks.so:record_run"; }
  );
};
CFG
# A workflow with triggers: read by every command that reads the
# workflows (check's sweep), fired by serve on the events emit records.
cat >"$host/workflows/landed.cfg" <<'CFG'
workflow = {
  name = "landed";
  triggers = ( { name = "raw"; event = "file.landed";
                 when = ( { path = "bucket"; equals = "raw"; } ); debounce = "1s"; },
               { name = "both"; all = ( { event = "a"; }, { run = "small"; states = ["Failed"]; } ); } );
  tasks = ( { id = "a"; command = ["/bin/true"]; } );
};
CFG
db="$host/var/switchyard.db"

# faulted N ARGS...: runs switchyard with the Nth allocation failing; sets
# $rc, $out (stdout), $err (stderr) and $site (where it failed, if it did).
faulted() {
    n=$1
    shift
    rm -f "$host/count"
    (cd "$host" && timeout 30 env LD_PRELOAD="$inject" SY_FAULT_ALLOC="$n" \
        SY_FAULT_ALLOC_SKIP="$skip_objs" SY_FAULT_ALLOC_COUNT="$host/count" \
        "$SWITCHYARD" "$@" >"$host/out" 2>"$host/err")
    rc=$?
    out=$(cat "$host/out")
    err=$(cat "$host/err")
    site=$(sed -n 's/^alloc [0-9]* //p' "$host/count" 2>/dev/null)
}

# total ARGS...: how many allocations the command makes, no fault.
total() {
    faulted 0 "$@"
    [ "$rc" -eq 0 ] || { echo "# $*: exit $rc without a fault: $err"; echo 0; return; }
    sed -n 's/^total //p' "$host/count"
}

# What a failure may say: the host's line, or glibc's own words where it
# reports a failed allocation as something else (pthread_create: EAGAIN;
# dlopen: a file it "cannot open" or "cannot create ... descriptor" for).
memory_said='out of memory\|not enough memory\|memory exhausted\|cannot allocate memory\|Resource temporarily unavailable\|dlopen failed\|cannot load task library'
bad=0
# judge WHAT: one faulted command against the promises; appends to bad.
judge() {
    local why=
    # `check` reports on stdout ("FILE:LINE: error: ..."); the others on stderr.
    # `run` follows a refused store write with what it means (the line the
    # full-disk fault checks, tests/integration/faults.sh), and a plugin
    # dlopen refused is a warning before the error it causes, and serve logs
    # what it does at info: not errors.
    lines=$(printf '%s\n%s\n' "$err" "$(printf '%s\n' "$out" | grep ': error: ')" |
        grep -v 'stopped because the store refused a write' | grep -v ': warning: ' |
        grep -Ev '^[0-9T:.Z-]+ (info|warn|debug) ' | grep -c .)
    local core=
    ls "$host"/core* >/dev/null 2>&1 && core=yes
    rm -f "$host"/core*
    if [ "$rc" -eq 124 ]; then
        why="hung"
    elif [ "$rc" -gt 128 ] && [ "$rc" -ne 134 ]; then
        why="killed by signal $((rc - 128))"
    elif [ -n "$core" ]; then
        why="left a core file"
    elif [ "$rc" -ne 0 ] && [ "$lines" -ne 1 ]; then
        why="exit $rc with $lines error lines"
    elif [ "$rc" -ne 0 ] && ! printf '%s\n%s\n' "$err" "$out" | grep -qi "$memory_said"; then
        why="exit $rc without naming memory"
    fi
    if [ -n "$why" ]; then
        bad=$((bad + 1))
        [ "$bad" -le ${SY_ALLOC_SHOW:-20} ] && echo "# $1 N=$n at ${site:-?}: $why: $(printf '%s' "$err" | head -c 300 | tr '\n' '|') $(printf '%s' "$out" | grep ': error: ' | head -c 200)"
    fi
    return 0
}

integrity() {
    [ -f "$db" ] || { echo ok; return; }
    python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' "$db"
}

# --- check: the configuration, routing, plugins and workflows, every N ----------
rm -rf "$host/var"
"$SWITCHYARD" migrate >/dev/null 2>&1 || { echo "Bail out! migrate failed"; exit 1; }
cp "$db" "$host/base.db"
n_check=$(total check)
echo "# check makes $n_check allocations (not counting libconfig's and libcrypto's own)"
[ "$n_check" -gt 50 ]; ok $? "the allocations of check are counted ($n_check)"
bad=0 failed=0
k=1
while [ "$k" -le "$n_check" ]; do
    faulted "$k" check
    [ "$rc" -ne 0 ] && failed=$((failed + 1))
    judge check
    k=$((k + 1))
done
echo "# check: $n_check points, $failed reported a failure, $((n_check - failed)) absorbed the fault"
[ "$bad" -eq 0 ]; ok $? "check: every one of $n_check allocation failures ends in one clear line or is absorbed ($bad not)"
[ "$failed" -gt 0 ]; ok $? "check: the faults were felt ($failed failed)"

# --- check of the cluster plugins: slurm, kubernetes, lambda, a stride ------------
# One instance each, and a workflow task routed to each (validate), with
# settings that need no running controller, API server or endpoint: check
# judges them and must not reach for the cluster.  Their points are many
# (about 1,800 against thread's 550): a stride of SY_ALLOC_CLUSTER_POINTS
# (default 150) for CI, SY_ALLOC_CLUSTER_POINTS=all for every point (the
# sweep before a release, docs/testing.md).
cluster_plugins=
for p in slurm kubernetes lambda; do
    so="$SY_BUILDDIR/plugins/$p/.libs/$p.so"
    [ -f "$so" ] && install -m 0755 "$so" "$host/plugins/$p.so" &&
        cluster_plugins="$cluster_plugins $p"
done
if [ "$cluster_plugins" != " slurm kubernetes lambda" ]; then
    ok 0 "# SKIP check of the cluster plugins: built here:${cluster_plugins:- none}"
else
    mkdir -p "$host/jobs" "$host/clusters"
    # A controller that knows the partition: check asks about it
    # (`scontrol show partition`, docs/configuration.md), and only that.
    cat >"$host/clusters/scontrol" <<'SH'
#!/bin/sh
echo "$*" >>"${0%/*}/called"
echo "PartitionName=$4 State=UP"
SH
    chmod 0755 "$host/clusters/scontrol"
    cat >"$host/kubeconfig" <<'YAML'
apiVersion: v1
kind: Config
current-context: lab
clusters:
- name: lab
  cluster:
    server: https://127.0.0.1:9
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
users:
- name: runner
  user:
    token: sweep-token
contexts:
- name: lab
  context: { cluster: lab, user: runner, namespace: etl }
YAML
    cat >"$host/clusters.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["clusters"];
executors = {
  default = { plugin = "thread"; workers = 2; };
  hpc = { plugin = "slurm"; bin_dir = "$host/clusters"; working_dir = "$host/jobs";
          partition = "batch"; account = "chem"; max_in_flight = 20; };
  cluster = { plugin = "kubernetes"; kubeconfig = "$host/kubeconfig"; image = "busybox:1";
              node_selector = ["disk=ssd"]; image_pull_secrets = ["reg"]; };
  aws = { plugin = "lambda"; endpoint_url = "http://127.0.0.1:9"; region = "eu-west-1";
          function = "etl-step"; access_key_id = "AKIDSWEEP"; secret_access_key = "sweep"; };
};
routes = { default = "default"; rules = (
  { match = "*::on_slurm::**"; executor = ["hpc"]; },
  { match = "*::on_k8s::**"; executor = ["cluster"]; },
  { match = "*::on_lambda::**"; executor = ["aws"]; } ); };
CFG
    cat >"$host/clusters/on_slurm.cfg" <<'CFG'
workflow = { name = "on_slurm"; tasks = ( { id = "md"; command = ["/bin/true"]; cpus = 2; mem = "1G"; } ); };
CFG
    cat >"$host/clusters/on_k8s.cfg" <<'CFG'
workflow = { name = "on_k8s"; tasks = ( { id = "train"; command = ["python3", "t.py"];
  resources = { cpu = "1"; memory = "1Gi"; }; } ); };
CFG
    cat >"$host/clusters/on_lambda.cfg" <<'CFG'
workflow = { name = "on_lambda"; tasks = ( { id = "score"; function = "scorer"; } ); };
CFG
    SWITCHYARD_CONFIG="$host/clusters.cfg"
    n_cluster=$(total check)
    echo "# check of slurm, kubernetes and lambda makes $n_cluster allocations"
    [ "$n_cluster" -gt "$n_check" ]; ok $? "the allocations of check with the cluster plugins are counted ($n_cluster)"
    [ "$(cat "$host/clusters/called" 2>/dev/null)" = "-o show partition batch" ]
    ok $? "check asks the Slurm controller about the partition, and nothing else ($(cat "$host/clusters/called" 2>/dev/null | tr '\n' '|'))"
    points=${SY_ALLOC_CLUSTER_POINTS:-150}
    if [ "$points" = all ]; then stride=1; else stride=$(( n_cluster / points + 1 )); fi
    bad=0 failed=0 swept=0
    k=$(( seed % stride + 1 ))
    while [ "$k" -le "$n_cluster" ]; do
        faulted "$k" check
        swept=$((swept + 1))
        [ "$rc" -ne 0 ] && failed=$((failed + 1))
        judge check
        k=$((k + stride))
    done
    SWITCHYARD_CONFIG="$host/switchyard.cfg"
    echo "# check (cluster plugins): $swept points (stride $stride), $failed reported a failure"
    [ "$bad" -eq 0 ]; ok $? "check (cluster plugins): every allocation failure ends in one clear line or is absorbed ($bad not)"
    [ "$failed" -gt 0 ]; ok $? "check (cluster plugins): the faults were felt ($failed failed)"
fi

# --- submit: a stride -------------------------------------------------------------
n_submit=$(total submit small)
echo "# submit makes $n_submit allocations"
stride=$(( n_submit / ${SY_ALLOC_SUBMIT_POINTS:-30} + 1 ))
bad=0 failed=0 swept=0 corrupt=0 unresumed=0
k=$(( seed % stride + 1 ))
while [ "$k" -le "$n_submit" ]; do
    rm -rf "$host/var"; mkdir "$host/var"; cp "$host/base.db" "$db"
    # Every other point with a key: the run and its key in one transaction.
    if [ $((swept % 2)) -eq 1 ]; then faulted "$k" submit small --key sweep
    else faulted "$k" submit small; fi
    swept=$((swept + 1))
    [ "$rc" -ne 0 ] && failed=$((failed + 1))
    judge submit
    [ "$(integrity)" = ok ] || { corrupt=$((corrupt + 1)); echo "# submit N=$k: integrity: $(integrity)"; }
    # The run is either wholly recorded (4 tasks, and its key when it had
    # one) or not at all.
    runs=$(python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute("SELECT count(*) FROM runs").fetchone()[0], c.execute("SELECT count(*) FROM tasks").fetchone()[0], c.execute("SELECT count(*) FROM run_keys r JOIN runs ON runs.id = r.run_id").fetchone()[0] == c.execute("SELECT count(*) FROM run_keys").fetchone()[0])' "$db" 2>&1)
    case "$runs" in "0 0 True"|"1 4 True") ;; *) unresumed=$((unresumed + 1)); echo "# submit N=$k: runs, tasks, keys whole: $runs" ;; esac
    k=$((k + stride))
done
echo "# submit: $swept points (stride $stride), $failed reported a failure"
[ "$bad" -eq 0 ]; ok $? "submit: every allocation failure ends in one clear line or is absorbed ($bad not)"
[ "$corrupt" -eq 0 ]; ok $? "submit: the store passes PRAGMA integrity_check after each ($corrupt not)"
[ "$unresumed" -eq 0 ]; ok $? "submit: a run is recorded whole or not at all ($unresumed not)"

# --- audit: the trail read back (a submit recorded in it), a stride ---------------
rm -rf "$host/var"; mkdir "$host/var"; cp "$host/base.db" "$db"
"$SWITCHYARD" submit small >/dev/null 2>&1 || { echo "Bail out! submit failed"; exit 1; }
n_audit=$(total audit --json)
echo "# audit makes $n_audit allocations"
stride=$(( n_audit / ${SY_ALLOC_AUDIT_POINTS:-20} + 1 ))
bad=0 failed=0 swept=0
k=$(( seed % stride + 1 ))
while [ "$k" -le "$n_audit" ]; do
    faulted "$k" audit --json
    swept=$((swept + 1))
    [ "$rc" -ne 0 ] && failed=$((failed + 1))
    judge audit
    k=$((k + stride))
done
echo "# audit: $swept points (stride $stride), $failed reported a failure"
[ "$bad" -eq 0 ]; ok $? "audit: every allocation failure ends in one clear line or is absorbed ($bad not)"
# --- emit: a stride; the event is recorded whole or not at all ---------------------
n_emit=$(total emit file.landed --data '{"bucket": "raw"}' --key k1)
echo "# emit makes $n_emit allocations"
stride=$(( n_emit / ${SY_ALLOC_EMIT_POINTS:-20} + 1 ))
bad=0 failed=0 swept=0 corrupt=0 torn=0
k=$(( seed % stride + 1 ))
while [ "$k" -le "$n_emit" ]; do
    rm -rf "$host/var"; mkdir "$host/var"; cp "$host/base.db" "$db"
    faulted "$k" emit file.landed --data '{"bucket": "raw"}' --key k1
    swept=$((swept + 1))
    [ "$rc" -ne 0 ] && failed=$((failed + 1))
    judge emit
    [ "$(integrity)" = ok ] || { corrupt=$((corrupt + 1)); echo "# emit N=$k: integrity: $(integrity)"; }
    events=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM named_events").fetchone()[0])' "$db" 2>&1)
    case "$rc:$events" in 0:1|*:0) ;; *) torn=$((torn + 1)); echo "# emit N=$k: exit $rc, events: $events" ;; esac
    k=$((k + stride))
done
echo "# emit: $swept points (stride $stride), $failed reported a failure"
[ "$bad" -eq 0 ]; ok $? "emit: every allocation failure ends in one clear line or is absorbed ($bad not)"
[ "$corrupt" -eq 0 ]; ok $? "emit: the store passes PRAGMA integrity_check after each ($corrupt not)"
[ "$torn" -eq 0 ]; ok $? "emit: an acknowledged event is stored, once ($torn not)"

# --- run and serve: a seeded stride, then serve (or run) resumes -------------------
# reset BASE: var/ holds only a copy of BASE's store (a crashed host's call
# record there would change the next N's allocations).
reset() {
    rm -rf "$host/var" "$host/witness"
    mkdir "$host/var"
    cp "$1" "$db"
}

# drive LABEL BASE POINTS ARGS...: the command ARGS on a store copied from
# BASE, at POINTS seeded N, each followed by a clean resume.
drive() {
    label=$1 base=$2 points=$3
    shift 3
    reset "$base"
    n_all=$(total "$@")
    echo "# $label makes about $n_all allocations (its threads make the order vary)"
    stride=$(( n_all / points + 1 ))
    bad=0 failed=0 swept=0 corrupt=0 rerun=0 unfinished=0
    k=$(( seed % stride + 1 ))
    while [ "$k" -le "$n_all" ]; do
        reset "$base"
        CRASHLOOP_ROUND=1 faulted "$k" "$@"
        swept=$((swept + 1))
        [ "$rc" -ne 0 ] && failed=$((failed + 1))
        judge "$label"
        [ "$(integrity)" = ok ] || { corrupt=$((corrupt + 1)); echo "# $label N=$k: integrity: $(integrity)"; }
        done_before=$(python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(" ".join(r[0] for r in c.execute("SELECT task_id FROM tasks WHERE status = ?", ("Completed",))))' "$db" 2>/dev/null)
        has_run=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])' "$db" 2>/dev/null)
        if [ "$has_run" = 1 ]; then
            CRASHLOOP_ROUND=2 timeout 60 "$SWITCHYARD" serve --exit-when-idle >"$host/serve.log" 2>&1
        else
            CRASHLOOP_ROUND=2 timeout 60 "$SWITCHYARD" run small >"$host/serve.log" 2>&1
        fi
        r2=$?
        state=$("$SWITCHYARD" status 1 --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)
        if [ "$r2" -ne 0 ] || [ "$state" != Completed ]; then
            unfinished=$((unfinished + 1))
            echo "# $label N=$k at ${site:-?}: resumed: exit $r2, run ${state:-missing}: $(tail -n 2 "$host/serve.log" | tr '\n' '|')"
        fi
        for t in $done_before; do
            if grep -q "^2 $t " "$host/witness" 2>/dev/null; then
                rerun=$((rerun + 1))
                echo "# $label N=$k: task $t was Completed before the fault and ran again"
            fi
        done
        k=$((k + stride))
    done
    echo "# $label: $swept points (stride $stride), $failed reported a failure"
    [ "$bad" -eq 0 ]; ok $? "$label: every allocation failure ends in one clear line or is absorbed ($bad not)"
    [ "$corrupt" -eq 0 ]; ok $? "$label: the store passes PRAGMA integrity_check after each ($corrupt not)"
    [ "$rerun" -eq 0 ]; ok $? "$label: no task Completed before the fault ran again ($rerun did)"
    [ "$unfinished" -eq 0 ]; ok $? "$label: with the fault cleared, serve (or run) completes the run ($unfinished not)"
    [ "$failed" -gt 0 ]; ok $? "$label: the faults were felt ($failed failed)"
}

drive run "$host/base.db" "${SY_ALLOC_RUN_POINTS:-20}" run small
# serve picks up a submitted run and exits when it is idle.
reset "$host/base.db"
"$SWITCHYARD" submit small >/dev/null 2>&1 || { echo "Bail out! submit failed"; exit 1; }
cp "$db" "$host/submitted.db"
drive serve "$host/submitted.db" "${SY_ALLOC_SERVE_POINTS:-15}" serve --exit-when-idle

done_testing
