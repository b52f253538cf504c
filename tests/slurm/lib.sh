# Sourced by the slurm plugin's tests: a one-node Slurm cluster on
# 127.0.0.1 in a temp dir (munged, slurmctld, slurmd from Debian's munge
# and slurm-wlm), and a scratch host that routes `slm` workflows to it.
#
#   slurm_start      starts the cluster in $sdir (made here), exports
#                    SLURM_CONF; exits 77 with one line when it cannot
#                    start for a reason outside the project (no packages,
#                    not root)
#   slurm_stop       stops the daemons and removes $sdir (an EXIT trap)
#   slurm_jobs FMT   squeue -h -t all -o FMT for every job the cluster
#                    still knows
#
# With SY_SLURM_ACCOUNTING=1 set before slurm_start, the cluster keeps
# accounting: a MariaDB server (mariadb-server, started as root in $sdir,
# on 127.0.0.1) behind slurmdbd, the cluster, account "sy" and user root
# registered, limits enforced; the start skips with one line where
# mariadb-server or slurmdbd are missing.
. "$SY_SRCDIR/tests/integration/lib.sh"

sy_slurm_skip() {
    echo "1..0 # SKIP $*"
    exit 77
}

# A free TCP port on 127.0.0.1.
sy_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_start() {
    for b in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
        command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
        command -v "$b" >/dev/null 2>&1 ||
            sy_slurm_skip "no $b: install munge and slurm-wlm (scripts/test does)"
    done
    [ "$(id -u)" -eq 0 ] || sy_slurm_skip "slurmd must run as root to start jobs (CI runs as root)"
    if [ -n "${SY_SLURM_ACCOUNTING:-}" ]; then
        for b in mariadbd mariadb-install-db mariadb slurmdbd sacct sacctmgr; do
            command -v "$b" >/dev/null 2>&1 ||
                sy_slurm_skip "no $b: install mariadb-server and slurmdbd (scripts/test does)"
        done
    fi
    sdir=$(mktemp -d "${TMPDIR:-/tmp}/sy-slurm-XXXXXX") || exit 1
    chmod 0755 "$sdir"
    mkdir -p "$sdir/munge" "$sdir/state" "$sdir/spool" "$sdir/log" "$sdir/work"
    chmod 0700 "$sdir/munge" "$sdir/state" "$sdir/spool"
    chmod 0777 "$sdir/work"
    # munge: a key made now, a daemon with its own socket, pid and log.
    mungekey --create --keyfile="$sdir/munge/munge.key" --force >/dev/null 2>&1 ||
        dd if=/dev/urandom of="$sdir/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 0400 "$sdir/munge/munge.key"
    munge_sock=$sdir/munge/munge.socket
    munged --force --socket="$munge_sock" --key-file="$sdir/munge/munge.key" \
        --pid-file="$sdir/munge/munged.pid" --log-file="$sdir/log/munged.log" \
        --seed-file="$sdir/munge/munged.seed" >"$sdir/log/munged.out" 2>&1 ||
        { cat "$sdir/log/munged.out" "$sdir/log/munged.log" 2>/dev/null | sed 's/^/# /'
          echo "Bail out! munged did not start"; exit 1; }
    chmod 0755 "$sdir/munge"
    ctld_port=$(sy_free_port)
    slurmd_port=$(sy_free_port)
    while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(sy_free_port); done
    acct_conf="AccountingStorageType=accounting_storage/none"
    if [ -n "${SY_SLURM_ACCOUNTING:-}" ]; then
        db_port=$(sy_free_port)
        dbd_port=$(sy_free_port)
        acct_conf="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
AccountingStorageEnforce=associations,limits
AccountingStoragePass=$munge_sock"
    fi
    mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 / 2 }' /proc/meminfo)
    cat >"$sdir/slurm.conf" <<CONF
ClusterName=sytest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_sock
StateSaveLocation=$sdir/state
SlurmdSpoolDir=$sdir/spool
SlurmctldPidFile=$sdir/slurmctld.pid
SlurmdPidFile=$sdir/slurmd.pid
SlurmctldLogFile=$sdir/log/slurmctld.log
SlurmdLogFile=$sdir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
ReturnToService=2
MinJobAge=${SY_SLURM_MIN_JOB_AGE:-60}
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
$acct_conf
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MaxJobCount=10000
EnforcePartLimits=ALL
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
PartitionName=other Nodes=localhost MaxTime=10 State=UP
PartitionName=low Nodes=localhost MaxTime=INFINITE State=UP PriorityTier=1 OverSubscribe=NO
PartitionName=high Nodes=localhost MaxTime=INFINITE State=UP PriorityTier=10 OverSubscribe=NO
CONF
    SLURM_CONF=$sdir/slurm.conf
    export SLURM_CONF
    [ -z "${SY_SLURM_ACCOUNTING:-}" ] || slurm_accounting_start
    slurmctld -D -i -f "$SLURM_CONF" >"$sdir/log/slurmctld.out" 2>&1 &
    ctld_pid=$!
    slurmd -D -N localhost -f "$SLURM_CONF" >"$sdir/log/slurmd.out" 2>&1 &
    slurmd_pid=$!
    local i=0
    while [ $i -lt 150 ]; do
        if sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
            return 0
        fi
        kill -0 "$ctld_pid" 2>/dev/null && kill -0 "$slurmd_pid" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
    tail -n 20 "$sdir/log/slurmctld.log" "$sdir/log/slurmd.log" "$sdir/log/slurmctld.out" \
        "$sdir/log/slurmd.out" 2>/dev/null | sed 's/^/# /'
    echo "Bail out! the Slurm cluster did not come up"
    exit 1
}

# MariaDB and slurmdbd for the cluster in $sdir (slurm_start calls it
# before slurmctld): the database made now in $sdir/db (mariadb-install-db,
# the test's one slow step), then the cluster, account and user that
# AccountingStorageEnforce=associations asks for.
slurm_accounting_start() {
    mkdir -p "$sdir/db"
    mariadb-install-db --no-defaults --datadir="$sdir/db/data" --user=root \
        --auth-root-authentication-method=normal --skip-test-db \
        >"$sdir/log/db-install.log" 2>&1 ||
        { tail -n 20 "$sdir/log/db-install.log" | sed 's/^/# /'; echo "Bail out! mariadb-install-db failed"; exit 1; }
    mariadbd --no-defaults --datadir="$sdir/db/data" --user=root \
        --socket="$sdir/db/mysql.sock" --bind-address=127.0.0.1 --port="$db_port" \
        --pid-file="$sdir/db/mariadbd.pid" --log-error="$sdir/log/mariadbd.log" \
        --innodb-buffer-pool-size=32M --skip-log-bin >/dev/null 2>&1 &
    db_pid=$!
    local i=0
    while [ $i -lt 300 ] && ! mariadb --no-defaults -S "$sdir/db/mysql.sock" -u root \
            -e "CREATE USER 'slurm'@'127.0.0.1'; GRANT ALL ON *.* TO 'slurm'@'127.0.0.1'" 2>/dev/null; do
        kill -0 "$db_pid" 2>/dev/null || break
        sleep 0.1; i=$((i + 1))
    done
    [ $i -lt 300 ] && kill -0 "$db_pid" 2>/dev/null ||
        { tail -n 20 "$sdir/log/mariadbd.log" | sed 's/^/# /'; echo "Bail out! mariadbd did not start"; exit 1; }
    cat >"$sdir/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$munge_sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StorageLoc=slurm_acct_db
PidFile=$sdir/slurmdbd.pid
LogFile=$sdir/log/slurmdbd.log
DebugLevel=info
CONF
    chmod 0600 "$sdir/slurmdbd.conf"
    slurmdbd -D >"$sdir/log/slurmdbd.out" 2>&1 &
    dbd_pid=$!
    i=0
    while [ $i -lt 300 ] && ! sacctmgr -i add cluster sytest >/dev/null 2>&1; do
        kill -0 "$dbd_pid" 2>/dev/null || break
        sleep 0.1; i=$((i + 1))
    done
    sacctmgr -i add account sy >/dev/null 2>&1 &&
        sacctmgr -i add user root account=sy >/dev/null 2>&1 ||
        { tail -n 20 "$sdir/log/slurmdbd.log" "$sdir/log/slurmdbd.out" 2>/dev/null | sed 's/^/# /'
          echo "Bail out! slurmdbd did not start"; exit 1; }
}

slurm_stop() {
    [ -n "${sdir:-}" ] || return 0
    scancel --quiet -u "$(id -un)" >/dev/null 2>&1
    local i=0 p
    while [ $i -lt 30 ] && [ -n "$(squeue -h -t PD,R,CG -o %i 2>/dev/null)" ]; do
        sleep 0.1; i=$((i + 1))
    done
    for p in ${slurmd_pid:-} ${ctld_pid:-}; do kill "$p" 2>/dev/null; done
    i=0
    while [ $i -lt 30 ] && { kill -0 "${slurmd_pid:-0}" 2>/dev/null || kill -0 "${ctld_pid:-0}" 2>/dev/null; }; do
        sleep 0.1; i=$((i + 1))
    done
    for p in ${slurmd_pid:-} ${ctld_pid:-}; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    for p in ${dbd_pid:-} ${db_pid:-}; do
        kill "$p" 2>/dev/null
        i=0
        while [ $i -lt 50 ] && kill -0 "$p" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null
    done
    # A step daemon left by a job the stop did not wait for: ours have
    # this cluster's SLURM_CONF in their environment.
    for p in $(pgrep -x slurmstepd 2>/dev/null); do
        grep -qs "$sdir" "/proc/$p/environ" && kill -9 "$p" 2>/dev/null
    done
    if [ -f "$sdir/munge/munged.pid" ]; then
        p=$(cat "$sdir/munge/munged.pid")
        kill "$p" 2>/dev/null
        i=0
        while [ $i -lt 20 ] && kill -0 "$p" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    fi
    rm -rf "$sdir"
}

slurm_jobs() { squeue -h -t all -o "$1" 2>/dev/null; }

# make_slurm_host [INSTANCE-SETTINGS]: $dir (made by the test) becomes a
# host with the thread and slurm plugins; `slm::**` goes to the slurm
# instance `hpc` (poll_interval 200ms, jobs' files in $dir/jobs).
make_slurm_host() {
    mkdir -p "$dir/plugins" "$dir/workflows" "$dir/jobs"
    install -m 0755 "$SY_THREAD_PLUGIN" "$dir/plugins/thread.so"
    install -m 0755 "$SY_SLURM_PLUGIN" "$dir/plugins/slurm.so"
    cat >"$dir/switchyard.cfg" <<CFG
store = "sqlite:var/switchyard.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
routes = "routes.cfg";
executors = {
  default = { plugin = "thread"; workers = 2; };
  hpc = { plugin = "slurm"; slurm_conf = "$SLURM_CONF"; working_dir = "$dir/jobs";
          poll_interval = "${slurm_poll:-200ms}"; ${1:-} };
};
CFG
    cat >"$dir/routes.cfg" <<'CFG'
routes = {
  default = "default";
  rules = ( { match = "*::slm::**"; executor = "hpc"; } );
};
CFG
    host=$dir
    SWITCHYARD_CONFIG="$dir/switchyard.cfg"
    export SWITCHYARD_CONFIG
}

# A test's start: skips under valgrind (the tests are driven by the
# cluster's timing), starts the cluster, makes $dir.
slurm_test_begin() {
    if [ -n "${SY_WRAP:-}" ]; then
        echo "1..0 # SKIP the slurm tests follow a real cluster's timing; they run in the sanitizer pass"
        exit 0
    fi
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-slurm-host-XXXXXX")
    chmod 0755 "$dir"
    trap 'slurm_stop; rm -rf "$dir"' EXIT
    slurm_start
}

# run_jobs RUN STATES: the jobs of run RUN in STATES (squeue -t), one a
# line as "NAME STATE".
run_jobs() { squeue -h -t "$2" -o '%j %T' 2>/dev/null | grep "^sy-$1-"; }

# wait_jobs RUN STATES N: waits (up to 20 s) until N jobs of RUN are in
# STATES.
wait_jobs() {
    local i=0
    while [ $i -lt 200 ]; do
        [ "$(run_jobs "$1" "$2" | wc -l)" -ge "$3" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# serve_bg WORKFLOW: submits a run of WORKFLOW ($id) and starts `serve
# --exit-when-idle` on it in the background ($pid).
serve_bg() {
    run submit "$1"
    id=$(run_id)
    "$SWITCHYARD" serve --exit-when-idle >"$dir/serve.log" 2>&1 &
    pid=$!
}

# serve_end: waits (up to 300 polls) until run $id is no longer Running,
# then stops the `serve` serve_bg started.  A status that could not be
# read (the store busy under load) is no answer: the poll goes on.
serve_end() {
    local state
    for _ in $(seq 1 300); do
        state=$(jget "$id" 'r["status"]')
        [ -n "$state" ] && [ "$state" != Running ] && break
        sleep 0.1
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# wrap_commands: $dir/bin holds wrappers of sbatch, squeue, scancel, sacct and
# scontrol that log each call ("EPOCH-MS PROG ARGS") to $dir/calls.log;
# point the instance at it with bin_dir.
wrap_commands() {
    mkdir -p "$dir/bin"
    for p in sbatch squeue scancel scontrol sacct; do
        real=$(command -v "$p")
        cat >"$dir/bin/$p" <<SH
#!/bin/sh
echo "\$(date +%s%3N) $p \$*" >>"$dir/calls.log"
exec "$real" "\$@"
SH
        chmod 0755 "$dir/bin/$p"
    done
}
