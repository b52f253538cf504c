# sdk/sdk.mk -- included from the top Makefile.am: what an executor author
# gets (headers, the plugin directory, switchyard-conformance), and the
# tests that keep it honest.

# --- headers: installed next to executor.h ----------------------------------------
switchyardinclude_HEADERS += sdk/switchyard/sdk.h sdk/switchyard/spawn.h

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
	sdk/conformance/check_lifecycle.c
switchyard_conformance_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS)
switchyard_conformance_LDADD = libsyhost.la -lpthread $(DEP_LIBS)

# --- plugins the kit is tested against ------------------------------------------------
# Each broken plugin breaks exactly one rule; tests/conformance.sh asserts
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
tests_plugins_broken_capacity_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sdk
tests_plugins_broken_capacity_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_capacity_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
tests_plugins_broken_badparams_la_SOURCES = tests/plugins/broken_badparams.c
tests_plugins_broken_badparams_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_plugins_broken_badparams_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

# Built against the frozen 1.0 header only: tests/abi comes first and api/
# not at all, so this plugin sees the ABI as it was released.
tests_abi_plugin_1_0_la_SOURCES = tests/abi/plugin_1_0.c tests/abi/executor-1.0.h
tests_abi_plugin_1_0_la_CPPFLAGS = -I$(top_srcdir)/tests/abi -D_GNU_SOURCE
tests_abi_plugin_1_0_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_abi_plugin_1_0_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

# The template, built in tree exactly as an author builds it out of tree.
sdk_template_template_la_SOURCES = sdk/template/template.c
sdk_template_template_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sdk
sdk_template_template_la_CFLAGS = $(PLUGIN_CFLAGS)
sdk_template_template_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

# --- tests ----------------------------------------------------------------------------
# webhook.sh builds examples/webhook-executor against the SDK installed into
# $SY_SDK_PREFIX (set by the test environment); without it, it skips.
sdk_tests = tests/conformance.sh tests/webhook.sh
TESTS += $(sdk_tests)
dist_check_SCRIPTS += $(sdk_tests)

EXTRA_DIST += tests/webhook_server.py sdk/README.md sdk/sdk.mk \
	sdk/template/Makefile sdk/template/README.md sdk/template/conformance.cfg \
	examples/webhook-executor/webhook.c examples/webhook-executor/Makefile \
	examples/webhook-executor/README.md examples/webhook-executor/routes.cfg \
	examples/webhook-executor/switchyard.cfg

# --- switchyard/spawn.h, on both of its paths -------------------------------------
check_PROGRAMS += tests/test_spawn tests/test_spawn_posix
TESTS += tests/test_spawn tests/test_spawn_posix
tests_test_spawn_SOURCES = tests/test_spawn.c
tests_test_spawn_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sdk
tests_test_spawn_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -pthread
tests_test_spawn_LDADD = $(CMOCKA_LIBS) -lpthread
tests_test_spawn_posix_SOURCES = tests/test_spawn.c
tests_test_spawn_posix_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sdk -DSY_SPAWN_NO_CLONE
tests_test_spawn_posix_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -pthread
tests_test_spawn_posix_LDADD = $(CMOCKA_LIBS) -lpthread
