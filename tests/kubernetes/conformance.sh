#!/bin/sh
# The kubernetes plugin passes the conformance kit against the loopback
# API server: tasks are real Jobs whose pods run here, long tasks are
# Jobs that cancel() deletes.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
KIT=$SY_BUILDDIR/switchyard-conformance
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-conf-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s
install -m 0755 "$SY_KUBERNETES_PLUGIN" "$dir/kubernetes.so"
cat >"$dir/params.cfg" <<CFG
instance = { kubeconfig = "$KUBECONFIG"; namespace = "conf"; image = "busybox:1.36";
             max_in_flight = 8; };
task = { command = ["sh", "-c", "echo '{\"ok\": true}'"]; };
long_task = { command = ["sleep", "60"]; };
bad_instance = { kubeconfig = "$dir/no-such-kubeconfig"; };
bad_task = { command = "not a list"; };
input = "{\"n\": 1}";
CFG
# The kit's own limits (the loopback server starts a pod in about 50 ms);
# a slow machine sets SWITCHYARD_CONFORMANCE_TIME_SCALE.
out=$("$KIT" "$dir/kubernetes.so" --params "$dir/params.cfg" 2>&1)
rc=$?
printf "%s\n" "$out" | sed "s/^/# /"
rc_is 0 "the kubernetes plugin passes the kit"
hasnt "FAIL " "with no failed check"
has "PASS cancel-running" "a running Job is deleted by cancel()"
has "PASS destroy" "destroy() leaves no plugin thread behind"
n=$(k8s_state 's["processes"]')
[ "$n" = 0 ]; ok $? "no pod process outlives the kit (found $n)"
done_testing
