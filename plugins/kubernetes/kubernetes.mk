# plugins/kubernetes/kubernetes.mk -- the `kubernetes` executor (tasks as
# batch/v1 Jobs) and its tests.  Included from the top Makefile.am when
# libcurl and libyaml were found (HAVE_KUBERNETES); libcrypto is required
# by configure anyway.

executors_LTLIBRARIES += plugins/kubernetes/kubernetes.la
plugins_kubernetes_kubernetes_la_SOURCES = \
	plugins/kubernetes/kubernetes.c plugins/kubernetes/kubernetes.h \
	plugins/kubernetes/settings.c plugins/kubernetes/kubeconfig.c \
	plugins/kubernetes/loop.c plugins/kubernetes/job.c \
	plugins/kubernetes/watch.c plugins/kubernetes/event.c \
	plugins/kubernetes/follow.c \
	plugins/kubernetes/judge.c plugins/kubernetes/logs.c \
	plugins/kubernetes/stats.c plugins/kubernetes/exec_auth.c \
	plugins/kubernetes/exec_refresh.c
# resume() is an ABI 1.4 descriptor field (DEFERRED, 1.1, comes with it).
plugins_kubernetes_kubernetes_la_CPPFLAGS = $(SDK_CPPFLAGS) -DSY_EXECUTOR_MIN_MINOR=4
plugins_kubernetes_kubernetes_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread \
	$(LIBCURL_CFLAGS) $(LIBYAML_CFLAGS) $(LIBUV_CFLAGS) $(JANSSON_CFLAGS) \
	$(LIBCRYPTO_CFLAGS)
plugins_kubernetes_kubernetes_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_kubernetes_kubernetes_la_LIBADD = $(SDK_HTTP_LIB) $(SDK_LIB) $(LIBCURL_LIBS) \
	$(LIBYAML_LIBS) $(LIBUV_LIBS) $(JANSSON_LIBS) $(LIBCRYPTO_LIBS)

EXTRA_DIST += plugins/kubernetes/kubernetes.mk examples/kubernetes/README.md \
	examples/kubernetes/switchyard.cfg examples/kubernetes/routes.cfg \
	examples/kubernetes/workflows/nightly.cfg

# The pure parts (names, labels, kubeconfig files) with no server: these
# also run under valgrind, where the scripts below skip.
check_PROGRAMS += tests/kubernetes/test_names
TESTS += tests/kubernetes/test_names
tests_kubernetes_test_names_SOURCES = tests/kubernetes/test_names.c \
	plugins/kubernetes/job.c plugins/kubernetes/kubeconfig.c \
	plugins/kubernetes/exec_auth.c
tests_kubernetes_test_names_CPPFLAGS = $(SDK_CPPFLAGS)
tests_kubernetes_test_names_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(LIBCURL_CFLAGS) $(LIBYAML_CFLAGS) $(LIBUV_CFLAGS) $(JANSSON_CFLAGS) \
	$(LIBCRYPTO_CFLAGS)
tests_kubernetes_test_names_LDADD = $(SDK_LIB) $(CMOCKA_LIBS) $(LIBYAML_LIBS) \
	$(JANSSON_LIBS) $(LIBCRYPTO_LIBS)

# The end-to-end tests: `switchyard` (run, serve, the conformance kit)
# against the loopback API server of tests/kubernetes/ (lib.sh).
# The longest start with the suite's longest (tests/Makefile.inc).
plugin_scripts_first += tests/kubernetes/watch.sh
dist_check_SCRIPTS += tests/kubernetes/watch.sh
kubernetes_tests = tests/kubernetes/jobs.sh tests/kubernetes/restart.sh \
	tests/kubernetes/kubeconfig.sh tests/kubernetes/manifest.sh tests/kubernetes/example.sh \
	tests/kubernetes/conformance.sh tests/kubernetes/exec_auth.sh
TESTS += $(kubernetes_tests)
dist_check_SCRIPTS += $(kubernetes_tests) tests/kubernetes/host.sh
AM_TESTS_ENVIRONMENT += \
	SY_KUBERNETES_PLUGIN='$(abs_top_builddir)/plugins/kubernetes/.libs/kubernetes.so'; \
	export SY_KUBERNETES_PLUGIN;

# --- the benchmark (`make bench-kubernetes`, never part of `make check`) -------
EXTRA_DIST += bench/kubernetes bench/kubernetes_measure.py
bench-kubernetes: all
	SY_SRCDIR=$(abs_top_srcdir) SWITCHYARD=$(abs_top_builddir)/switchyard \
	  SY_THREAD_PLUGIN=$(abs_top_builddir)/plugins/thread/.libs/thread.so \
	  SY_KUBERNETES_PLUGIN=$(abs_top_builddir)/plugins/kubernetes/.libs/kubernetes.so \
	  $(SHELL) $(top_srcdir)/bench/kubernetes
