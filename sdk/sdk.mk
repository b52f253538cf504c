# sdk/sdk.mk -- included from the top Makefile.am: what an executor author
# gets (headers, the plugin directory, switchyard-conformance), and the
# tests that keep it honest.

# --- headers: installed next to executor.h ----------------------------------------
switchyardinclude_HEADERS += sdk/switchyard/sdk.h sdk/switchyard/spawn.h \
	sdk/switchyard/json_params.h sdk/switchyard/config_json.h \
	sdk/switchyard/testhost.h sdk/switchyard/loader.h \
	sdk/switchyard/process.h sdk/switchyard/limits.h

# --- the library: libswitchyard-sdk.a --------------------------------------------
# Static and position-independent, every symbol hidden: linked into a plugin
# it exports nothing, so the plugin still exports only sy_executor_entry.
# What plugins, the task runner and the conformance kit compile with: the
# ABI headers and the SDK, nothing of the host.
SDK_CPPFLAGS = -I$(top_srcdir)/api -I$(top_srcdir)/sdk -D_GNU_SOURCE
SDK_LIB = libswitchyard-sdk.a
lib_LIBRARIES = libswitchyard-sdk.a
# The spawn code alone, for tests/sdk/test_spawn_posix to build once more.
sdk_spawn_sources = sdk/spawn_internal.h sdk/spawn_start.c sdk/spawn_io.c \
	sdk/spawn_run.c sdk/process.c
libswitchyard_sdk_a_SOURCES = \
	sdk/message.c sdk/duration.c sdk/param_read.c sdk/result.c \
	sdk/inflight.c sdk/counters.c $(sdk_spawn_sources) \
	sdk/json_params.c sdk/config_json.c sdk/config_include.c sdk/testhost.c \
	sdk/loader.c sdk/loader_internal.h sdk/descriptor.c sdk/file_check.c
libswitchyard_sdk_a_CPPFLAGS = $(SDK_CPPFLAGS)
libswitchyard_sdk_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden -pthread \
	$(JANSSON_CFLAGS) $(LIBCONFIG_CFLAGS)

# --- the optional HTTP part: libswitchyard-sdk-http.a ----------------------------
# libcurl's multi interface on a libuv loop of its own thread
# (switchyard/http.h), for the plugins whose tasks are HTTP requests.  A
# library, header and pkg-config module of its own, so a plugin that makes
# no request (thread, gpu, an author's) links neither libcurl nor libuv.
SDK_HTTP_LIB = libswitchyard-sdk-http.a
if HAVE_LIBCURL
switchyardinclude_HEADERS += sdk/switchyard/http.h
lib_LIBRARIES += libswitchyard-sdk-http.a
pkgconfig_DATA += sdk/switchyard-sdk-http.pc
endif
libswitchyard_sdk_http_a_SOURCES = sdk/http_loop.c
libswitchyard_sdk_http_a_CPPFLAGS = $(SDK_CPPFLAGS)
libswitchyard_sdk_http_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden -pthread \
	$(LIBCURL_CFLAGS) $(LIBUV_CFLAGS)
EXTRA_DIST += sdk/switchyard-sdk-http.pc.in sdk/switchyard/http.h

# --- the plugin directory the host searches by default ----------------------------
install-data-local: install-sdk-plugindir
install-sdk-plugindir:
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)/executors'
uninstall-local: uninstall-sdk-plugindir
uninstall-sdk-plugindir:
	-rmdir '$(DESTDIR)$(pkglibdir)/executors' 2>/dev/null
.PHONY: install-sdk-plugindir uninstall-sdk-plugindir

# --- the conformance kit ------------------------------------------------------------
bin_PROGRAMS += switchyard-conformance
switchyard_conformance_SOURCES = \
	sdk/conformance/kit.h sdk/conformance/checks.h \
	sdk/conformance/main.c sdk/conformance/inputs.c \
	sdk/conformance/harness.c sdk/conformance/driver.c \
	sdk/conformance/checks.c sdk/conformance/check_load.c \
	sdk/conformance/check_create.c sdk/conformance/check_complete.c \
	sdk/conformance/check_capacity.c sdk/conformance/check_cancel.c \
	sdk/conformance/check_lifecycle.c sdk/conformance/check_late.c \
	sdk/conformance/check_resume.c \
	sdk/conformance/check_leaks.c sdk/conformance/check_data.c
switchyard_conformance_CPPFLAGS = $(SDK_CPPFLAGS)
switchyard_conformance_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) \
	$(LIBCONFIG_CFLAGS) -pthread
switchyard_conformance_LDADD = $(SDK_LIB) $(LIBCONFIG_LIBS) $(JANSSON_LIBS) \
	-lpthread

# --- plugins the kit is tested against ------------------------------------------------
# Each broken plugin breaks exactly one rule; tests/sdk/conformance.sh asserts
# the kit fails it for that rule.
check_LTLIBRARIES += tests/plugins/broken_twice.la \
	tests/plugins/broken_never.la tests/plugins/broken_blocks.la \
	tests/plugins/broken_capacity.la tests/plugins/broken_badparams.la \
	tests/abi/plugin_1_0.la sdk/template/template.la
tests_plugins_broken_twice_la_SOURCES = tests/plugins/broken_twice.c
tests_plugins_broken_twice_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_twice_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_never_la_SOURCES = tests/plugins/broken_never.c
tests_plugins_broken_never_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_never_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_blocks_la_SOURCES = tests/plugins/broken_blocks.c
tests_plugins_broken_blocks_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_blocks_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_capacity_la_SOURCES = tests/plugins/broken_capacity.c
tests_plugins_broken_capacity_la_CPPFLAGS = $(SDK_CPPFLAGS)
tests_plugins_broken_capacity_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_capacity_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_capacity_la_LIBADD = $(SDK_LIB)
tests_plugins_broken_badparams_la_SOURCES = tests/plugins/broken_badparams.c
tests_plugins_broken_badparams_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_badparams_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

# tests/plugins/promise.c, built once per promise it breaks (and once to
# defer, breaking none): -DBREAK_... picks the promise.
check_LTLIBRARIES += tests/plugins/broken_late.la \
	tests/plugins/broken_cancel_late.la \
	tests/plugins/broken_after_destroy.la \
	tests/plugins/broken_destroy_thread.la \
	tests/plugins/broken_cancel_blocks.la \
	tests/plugins/broken_fds.la \
	tests/plugins/broken_threads.la \
	tests/plugins/broken_memory.la \
	tests/plugins/broken_oversize.la \
	tests/plugins/broken_result_size.la \
	tests/plugins/broken_result_size_zero.la \
	tests/plugins/broken_defer_negative.la \
	tests/plugins/broken_spec_size.la \
	tests/plugins/broken_input.la \
	tests/plugins/broken_shared_result.la \
	tests/plugins/deferring.la tests/plugins/resuming.la \
	tests/plugins/broken_resume.la \
	tests/plugins/broken_slow_submit.la tests/plugins/broken_slow_cancel.la \
	tests/plugins/broken_long_error.la tests/plugins/broken_oversize_100.la
tests_plugins_broken_late_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_late_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_LATE -DPROMISE_NAME='"broken_late"'
tests_plugins_broken_late_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_late_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_cancel_late_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_cancel_late_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_CANCEL_LATE -DPROMISE_NAME='"broken_cancel_late"'
tests_plugins_broken_cancel_late_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_cancel_late_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_after_destroy_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_after_destroy_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_AFTER_DESTROY -DPROMISE_NAME='"broken_after_destroy"'
tests_plugins_broken_after_destroy_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_after_destroy_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_destroy_thread_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_destroy_thread_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_DESTROY_THREAD -DPROMISE_NAME='"broken_destroy_thread"'
tests_plugins_broken_destroy_thread_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_destroy_thread_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_cancel_blocks_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_cancel_blocks_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_CANCEL_BLOCKS -DPROMISE_NAME='"broken_cancel_blocks"'
tests_plugins_broken_cancel_blocks_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_cancel_blocks_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_fds_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_fds_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_FDS -DPROMISE_NAME='"broken_fds"'
tests_plugins_broken_fds_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_fds_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_threads_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_threads_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_THREADS -DPROMISE_NAME='"broken_threads"'
tests_plugins_broken_threads_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_threads_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_memory_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_memory_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_MEMORY -DPROMISE_NAME='"broken_memory"'
tests_plugins_broken_memory_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_memory_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_oversize_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_oversize_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_OVERSIZE -DPROMISE_NAME='"broken_oversize"'
tests_plugins_broken_oversize_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_oversize_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_result_size_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_result_size_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_RESULT_SIZE -DPROMISE_NAME='"broken_result_size"'
tests_plugins_broken_result_size_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_result_size_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_result_size_zero_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_result_size_zero_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_RESULT_SIZE_ZERO -DPROMISE_NAME='"broken_result_size_zero"'
tests_plugins_broken_result_size_zero_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_result_size_zero_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_defer_negative_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_defer_negative_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_DEFER_NEGATIVE -DPROMISE_NAME='"broken_defer_negative"'
tests_plugins_broken_defer_negative_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_defer_negative_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_slow_submit_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_slow_submit_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_SLOW_SUBMIT -DPROMISE_NAME='"broken_slow_submit"'
tests_plugins_broken_slow_submit_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_slow_submit_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_slow_cancel_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_slow_cancel_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_SLOW_CANCEL -DPROMISE_NAME='"broken_slow_cancel"'
tests_plugins_broken_slow_cancel_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_slow_cancel_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_long_error_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_long_error_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_LONG_ERROR -DPROMISE_NAME='"broken_long_error"'
tests_plugins_broken_long_error_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_long_error_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_oversize_100_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_oversize_100_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_OVERSIZE -DOVERSIZE_MIB=100 -DPROMISE_NAME='"broken_oversize_100"'
tests_plugins_broken_oversize_100_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_oversize_100_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_spec_size_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_spec_size_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_SPEC_SIZE -DPROMISE_NAME='"broken_spec_size"'
tests_plugins_broken_spec_size_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_spec_size_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_input_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_input_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_INPUT -DPROMISE_NAME='"broken_input"'
tests_plugins_broken_input_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_input_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_shared_result_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_shared_result_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_SHARED_RESULT -DPROMISE_NAME='"broken_shared_result"'
tests_plugins_broken_shared_result_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_shared_result_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_deferring_la_SOURCES = tests/plugins/promise.c
tests_plugins_deferring_la_CPPFLAGS = $(SDK_CPPFLAGS) -DKEEP_DEFERRED -DPROMISE_NAME='"deferring"'
tests_plugins_deferring_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_deferring_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_resuming_la_SOURCES = tests/plugins/promise.c
tests_plugins_resuming_la_CPPFLAGS = $(SDK_CPPFLAGS) -DKEEP_RESUME -DPROMISE_NAME='"resuming"'
tests_plugins_resuming_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_resuming_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_resume_la_SOURCES = tests/plugins/promise.c
tests_plugins_broken_resume_la_CPPFLAGS = $(SDK_CPPFLAGS) -DBREAK_RESUME -DPROMISE_NAME='"broken_resume"'
tests_plugins_broken_resume_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
tests_plugins_broken_resume_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

# Built against the frozen 1.0 header only: tests/abi comes first and api/
# not at all, so this plugin sees the ABI as it was released.
tests_abi_plugin_1_0_la_SOURCES = tests/abi/plugin_1_0.c tests/abi/executor-1.0.h
tests_abi_plugin_1_0_la_CPPFLAGS = -I$(top_srcdir)/tests/abi -D_GNU_SOURCE
tests_abi_plugin_1_0_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_abi_plugin_1_0_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

# The template, built in tree exactly as an author builds it out of tree.
sdk_template_template_la_SOURCES = sdk/template/template.c
sdk_template_template_la_CPPFLAGS = $(SDK_CPPFLAGS)
sdk_template_template_la_CFLAGS = $(PLUGIN_CFLAGS)
sdk_template_template_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
sdk_template_template_la_LIBADD = $(SDK_LIB)

# --- tests ----------------------------------------------------------------------------
# webhook.sh builds examples/webhook-executor against the SDK installed into
# $SY_SDK_PREFIX (set by the test environment); without it, it skips.
sdk_tests = tests/sdk/webhook.sh
# The longest start with the suite's longest (tests/Makefile.inc).
plugin_scripts_first += tests/sdk/conformance.sh
TESTS += $(sdk_tests)
dist_check_SCRIPTS += tests/sdk/conformance.sh $(sdk_tests)

EXTRA_DIST += tests/sdk/webhook_server.py sdk/README.md sdk/sdk.mk \
	sdk/template/Makefile sdk/template/README.md sdk/template/conformance.cfg \
	examples/webhook-executor/webhook.c examples/webhook-executor/Makefile \
	examples/webhook-executor/README.md examples/webhook-executor/routes.cfg \
	examples/webhook-executor/switchyard.cfg

# --- the library's shared parts: JSON parameters, the test host, config,
# durations, the descriptor checks ---------------------------------------------------
check_PROGRAMS += tests/sdk/test_sdk
TESTS += tests/sdk/test_sdk
tests_sdk_test_sdk_SOURCES = tests/sdk/test_sdk.c
tests_sdk_test_sdk_CPPFLAGS = $(SDK_CPPFLAGS)
tests_sdk_test_sdk_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS) \
	$(LIBCONFIG_CFLAGS) -pthread
tests_sdk_test_sdk_LDADD = $(SDK_LIB) $(LIBCONFIG_LIBS) $(JANSSON_LIBS) \
	$(CMOCKA_LIBS) -lpthread

# --- switchyard/process.h: /proc/PID/stat, boot and machine ---------------------
check_PROGRAMS += tests/sdk/test_process
TESTS += tests/sdk/test_process
tests_sdk_test_process_SOURCES = tests/sdk/test_process.c
tests_sdk_test_process_CPPFLAGS = $(SDK_CPPFLAGS)
tests_sdk_test_process_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_sdk_test_process_LDADD = $(SDK_LIB) $(CMOCKA_LIBS)

# --- switchyard/spawn.h, on both of its paths -------------------------------------
# test_spawn links the library as plugins do (the clone() path on Linux);
# test_spawn_posix compiles the spawn code once more with
# SY_SPAWN_NO_CLONE (posix_spawn), so both paths meet the same assertions.
check_PROGRAMS += tests/sdk/test_spawn tests/sdk/test_spawn_posix
TESTS += tests/sdk/test_spawn tests/sdk/test_spawn_posix
tests_sdk_test_spawn_SOURCES = tests/sdk/test_spawn.c
tests_sdk_test_spawn_CPPFLAGS = $(SDK_CPPFLAGS)
tests_sdk_test_spawn_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -pthread
tests_sdk_test_spawn_LDADD = $(SDK_LIB) $(CMOCKA_LIBS) -lpthread
tests_sdk_test_spawn_posix_SOURCES = tests/sdk/test_spawn.c $(sdk_spawn_sources)
tests_sdk_test_spawn_posix_CPPFLAGS = $(SDK_CPPFLAGS) -DSY_SPAWN_NO_CLONE
tests_sdk_test_spawn_posix_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -pthread
tests_sdk_test_spawn_posix_LDADD = $(CMOCKA_LIBS) -lpthread

# --- switchyard/http.h: posts, a transfer, a cancel, a loop never started ---------
if HAVE_LIBCURL
check_PROGRAMS += tests/sdk/test_http_loop
TESTS += tests/sdk/test_http_loop
endif
tests_sdk_test_http_loop_SOURCES = tests/sdk/test_http_loop.c
tests_sdk_test_http_loop_CPPFLAGS = $(SDK_CPPFLAGS)
tests_sdk_test_http_loop_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBCURL_CFLAGS) \
	$(LIBUV_CFLAGS) -pthread
tests_sdk_test_http_loop_LDADD = $(SDK_HTTP_LIB) $(SDK_LIB) $(CMOCKA_LIBS) \
	$(LIBCURL_LIBS) $(LIBUV_LIBS) -lpthread
