#!/bin/sh
# switchyard.service: `systemd-analyze verify` finds nothing to say about it
# (a warning fails this test too: verify itself exits 0 on unknown keys and
# bad values), and the unit holds what the host relies on: Type=notify, a
# watchdog, SIGTERM to the host alone with a stop timeout above the
# default shutdown grace, a reload by SIGHUP, and the hardening.
. "$SY_SRCDIR/tests/cli/tap.sh"
unit="$SY_BUILDDIR/systemd/switchyard.service"
[ -f "$unit" ] || unit="$SY_SRCDIR/systemd/switchyard.service.in"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-unit-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# The program it starts must exist for verify: the one just built.
sed -e "s|^ExecStart=[^ ]*|ExecStart=$SWITCHYARD|" -e "s|@sysconfdir@|/etc|g" \
    "$unit" >"$tmp/switchyard.service"
out=$(cat "$tmp/switchyard.service")

key() { sed -n "s/^$1=//p" "$tmp/switchyard.service"; }
secs() { case "$1" in *min) echo $((${1%min} * 60)) ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac; }
[ "$(key Type)" = notify ]; ok $? "Type=notify"
[ "$(key KillMode)" = mixed ]; ok $? "KillMode=mixed: SIGTERM to the host alone, which drains"
grace=$(sed -n 's/.*shutdown_grace_ms = \([0-9]*\);.*/\1/p' "$SY_SRCDIR/host/config/config.c")
[ -n "$grace" ] && [ "$(secs "$(key TimeoutStopSec)")" -gt $((grace / 1000)) ]
ok $? "TimeoutStopSec ($(key TimeoutStopSec)) is above the default shutdown_grace (${grace} ms)"
[ -n "$(key WatchdogSec)" ]; ok $? "WatchdogSec set"
has 'ExecReload=/bin/kill -HUP $MAINPID' "ExecReload sends SIGHUP"
has " serve" "ExecStart runs serve"
for k in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
         StateDirectory=switchyard ReadWritePaths=/var/lib/switchyard Restart=on-failure \
         User=switchyard; do
    has "$k" "$k"
done

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "ok $((tap_n + 1)) # SKIP systemd-analyze not found (Debian: apt-get install systemd)"
    tap_n=$((tap_n + 1))
    done_testing
fi
# Documentation=man:... is checked too: the pages from this tree.
mkdir -p "$tmp/man/man1" "$tmp/man/man5"
cp "$SY_SRCDIR/man/switchyard.1" "$tmp/man/man1/"
cp "$SY_SRCDIR/man/switchyard.cfg.5" "$tmp/man/man5/"
out=$(MANPATH="$tmp/man" systemd-analyze verify "$tmp/switchyard.service" 2>&1)
rc=$?
[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
[ $rc -eq 0 ] && [ -z "$out" ]; ok $? "systemd-analyze verify: no error, no warning"
# The check itself can fail: a key systemd does not know is reported.
sed 's/^KillMode=/KillMod=/' "$tmp/switchyard.service" >"$tmp/bad.service"
bad=$(MANPATH="$tmp/man" systemd-analyze verify "$tmp/bad.service" 2>&1)
case "$bad" in *"Unknown key"*) ok 0 "a misspelt key is caught" ;; *) ok 1 "a misspelt key is caught" ;; esac

# The user it runs as, made by systemd-sysusers from the file installed.
if command -v systemd-sysusers >/dev/null 2>&1; then
    mkdir -p "$tmp/root/etc"
    : >"$tmp/root/etc/passwd"
    : >"$tmp/root/etc/group"
    systemd-sysusers --root="$tmp/root" "$SY_SRCDIR/systemd/sysusers.d/switchyard.conf" \
        >/dev/null 2>&1
    grep -q '^switchyard:x:[0-9]*:[0-9]*:.*:/var/lib/switchyard:' "$tmp/root/etc/passwd"
    ok $? "sysusers.d/switchyard.conf makes the user switchyard, at home in /var/lib/switchyard"
fi
done_testing
