#!/bin/sh
# The loopback Kubernetes API server's faults, deadlines and deletion
# policies, asserted over HTTP by tests/kubernetes/faults.py (which speaks
# TAP).  Nothing of switchyard runs here, so the valgrind pass skips it.
. "$SY_SRCDIR/tests/kubernetes/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP no switchyard program runs here; the sanitizer pass runs it"
    exit 0
fi
if ! command -v openssl >/dev/null 2>&1; then
    [ -n "${CI:-}" ] && { echo "Bail out! openssl is missing"; exit 1; }
    echo "1..0 # SKIP openssl is not installed"
    exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s --bookmark-interval 0.2 --grace 0.5
python3 "$SY_SRCDIR/tests/kubernetes/faults.py" "$k8s_srv"
rc=$?
stop_k8s
[ -s "$dir/k8s-server.err" ] && { echo "# the server's stderr:"; sed 's/^/#   /' "$dir/k8s-server.err"; }
exit $rc
