#!/bin/sh
# examples/kubernetes runs as its README says, against the loopback API
# server instead of a cluster: check passes without a request to the
# server, the etl namespace routes to
# the cluster, and the run passes the Jobs' outputs on.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-ex-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s
host=$dir/example
cp -R "$SY_SRCDIR/examples/kubernetes" "$host"
mkdir -p "$host/plugins"
install -m 0755 "$SY_THREAD_PLUGIN" "$host/plugins/thread.so"
install -m 0755 "$SY_KUBERNETES_PLUGIN" "$host/plugins/kubernetes.so"
cd "$host" || exit 1
SWITCHYARD_CONFIG=$host/switchyard.cfg
export SWITCHYARD_CONFIG
run check
rc_is 0 "the example's configuration passes check"
# check judges the settings and must not reach for the cluster: the
# watches begin with the first attempt, not with the instance.
n=$(k8s_requests 'True')
[ "$n" = 0 ]; ok $? "check sent the API server no request ($n)"
# Nor does a host with no work for the instance hold streams open.
run serve --exit-when-idle
rc_is 0 "serve with nothing to do exits"
n=$(k8s_requests 'True')
[ "$n" = 0 ]; ok $? "serve with no attempt for the instance sent the API server no request ($n)"
run route public::etl::nightly::report
has "cluster" "the etl namespace routes to the kubernetes instance"
run run etl::nightly --context '{"day": "2026-11-28"}'
rc_is 0 "the example's workflow completes"
id=$(run_id)
is '{"summary": "2026-11-28: 1200 rows in 3 files"}' "$id" 't["report"]["output"]' "the last Job got both outputs in SWITCHYARD_INPUT"
n=$(k8s_requests 'q["method"] == "POST" and q["path"] == "/apis/batch/v1/namespaces/switchyard/jobs"')
[ "$n" = 3 ]; ok $? "three Jobs were created in the namespace switchyard ($n)"
done_testing
