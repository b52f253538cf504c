# tests/kubernetes/kubernetes_server.mk -- the loopback Kubernetes API server
# (tests/kubernetes/server.py and its apiserver/ package) and the tests that
# prove it speaks the API: kubectl against it, and its faults over HTTP.
# Included from the top Makefile.am; the kubernetes plugin's own fragment
# adds its tests beside these and sources tests/kubernetes/lib.sh.

kubernetes_server_files = tests/kubernetes/lib.sh tests/kubernetes/server.py \
	tests/kubernetes/faults.py tests/kubernetes/apiserver/__init__.py \
	tests/kubernetes/apiserver/store.py tests/kubernetes/apiserver/jobs.py \
	tests/kubernetes/apiserver/controller.py tests/kubernetes/apiserver/handler.py \
	tests/kubernetes/apiserver/discovery.py tests/kubernetes/apiserver/tables.py
kubernetes_server_tests = tests/kubernetes/kubectl.sh tests/kubernetes/server_faults.sh
TESTS += $(kubernetes_server_tests)
dist_check_SCRIPTS += $(kubernetes_server_tests) $(kubernetes_server_files)
EXTRA_DIST += tests/kubernetes/kubernetes_server.mk
