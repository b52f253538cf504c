# plugins/lambda/lambda.mk -- the `lambda` executor (AWS Lambda Invoke) and
# its tests.  Included from the top Makefile.am when libcurl was found
# (HAVE_LIBCURL); libcrypto is required by configure anyway.

executors_LTLIBRARIES += plugins/lambda/lambda.la
plugins_lambda_lambda_la_SOURCES = \
	plugins/lambda/lambda.c plugins/lambda/lambda.h \
	plugins/lambda/settings.c plugins/lambda/creds.c \
	plugins/lambda/metadata.c plugins/lambda/loop.c \
	plugins/lambda/request.c plugins/lambda/response.c \
	plugins/lambda/stats.c plugins/lambda/sigv4.c plugins/lambda/sigv4.h
# DEFERRED (429 throttling) is an ABI 1.1 outcome: the plugin needs 1.1.
plugins_lambda_lambda_la_CPPFLAGS = $(SDK_CPPFLAGS) -DSY_EXECUTOR_MIN_MINOR=1
plugins_lambda_lambda_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread \
	$(LIBCURL_CFLAGS) $(LIBUV_CFLAGS) $(JANSSON_CFLAGS) $(LIBCRYPTO_CFLAGS)
plugins_lambda_lambda_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_lambda_lambda_la_LIBADD = $(SDK_HTTP_LIB) $(SDK_LIB) $(LIBCURL_LIBS) $(LIBUV_LIBS) \
	$(JANSSON_LIBS) $(LIBCRYPTO_LIBS) -lm

# --- tests ----------------------------------------------------------------------
check_PROGRAMS += tests/plugins/test_sigv4
TESTS += tests/plugins/test_sigv4
tests_plugins_test_sigv4_SOURCES = tests/plugins/test_sigv4.c \
	plugins/lambda/sigv4.c plugins/lambda/sigv4.h
tests_plugins_test_sigv4_CPPFLAGS = $(SDK_CPPFLAGS)
tests_plugins_test_sigv4_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBCRYPTO_CFLAGS)
tests_plugins_test_sigv4_LDADD = $(SDK_LIB) $(CMOCKA_LIBS) $(LIBCRYPTO_LIBS)

# The plugin through its ABI, with the SDK's test host and the endpoint.
check_PROGRAMS += tests/lambda/test_lambda
TESTS += tests/lambda/test_lambda
tests_lambda_test_lambda_SOURCES = tests/lambda/test_lambda.c
tests_lambda_test_lambda_CPPFLAGS = $(SDK_CPPFLAGS)
tests_lambda_test_lambda_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS)
tests_lambda_test_lambda_LDFLAGS = -pthread
tests_lambda_test_lambda_LDADD = $(SDK_LIB) $(CMOCKA_LIBS) $(JANSSON_LIBS) -ldl

# The end-to-end tests: a loopback Lambda endpoint (tests/lambda/server.py)
# and `switchyard run`, or the conformance kit.
lambda_tests = tests/lambda/invoke.sh tests/lambda/creds.sh tests/lambda/conformance.sh \
	tests/lambda/example.sh
# The longest start with the suite's longest (tests/Makefile.inc).
lambda_first_tests = tests/lambda/http2.sh tests/lambda/backpressure.sh
plugin_scripts_first += $(lambda_first_tests)
TESTS += $(lambda_tests)
dist_check_SCRIPTS += $(lambda_first_tests) $(lambda_tests) tests/lambda/lib.sh tests/lambda/server.py
AM_TESTS_ENVIRONMENT += \
	SY_LAMBDA_PLUGIN='$(abs_top_builddir)/plugins/lambda/.libs/lambda.so'; \
	export SY_LAMBDA_PLUGIN;

EXTRA_DIST += plugins/lambda/lambda.mk tests/data/aws4_testsuite \
	examples/lambda/README.md examples/lambda/switchyard.cfg \
	examples/lambda/routes.cfg examples/lambda/workflows/nightly.cfg

# --- the benchmark (`make bench-lambda`, never part of `make check`) ----------------
check_PROGRAMS += bench/lambda_bench
bench_lambda_bench_SOURCES = bench/lambda_bench.c
bench_lambda_bench_CPPFLAGS = $(SDK_CPPFLAGS)
bench_lambda_bench_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
bench_lambda_bench_LDFLAGS = -pthread
bench_lambda_bench_LDADD = $(SDK_LIB) $(JANSSON_LIBS) -ldl
EXTRA_DIST += bench/lambda_run bench/lambda_server.py bench/lambda_threads.py

bench-lambda: all bench/lambda_bench$(EXEEXT)
	SY_LAMBDA_PLUGIN=$(abs_top_builddir)/plugins/lambda/.libs/lambda.so \
	  SY_LAMBDA_BENCH=$(abs_top_builddir)/bench/lambda_bench$(EXEEXT) \
	  SY_SRCDIR=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/bench/lambda_run
