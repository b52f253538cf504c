# plugins/gpu/gpu.mk -- the `gpu` executor, its operator tool, the fake
# NVML its tests load, and its tests.  Included from the top Makefile.am
# (paths are relative to the top directory).

# --- the plugin ---------------------------------------------------------------
executors_LTLIBRARIES += plugins/gpu/gpu.la
plugins_gpu_gpu_la_SOURCES = \
	plugins/gpu/gpu.c plugins/gpu/gpu.h plugins/gpu/settings.c \
	plugins/gpu/sched.c plugins/gpu/sched.h \
	plugins/gpu/nvml.c plugins/gpu/nvml.h \
	plugins/gpu/loop.c plugins/gpu/job.c plugins/gpu/stats.c
plugins_gpu_gpu_la_CPPFLAGS = $(SDK_CPPFLAGS)
plugins_gpu_gpu_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
plugins_gpu_gpu_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_gpu_gpu_la_LIBADD = $(SDK_LIB) -ldl

# --- the operator's tool: drain and resume devices ------------------------------
bin_SCRIPTS = plugins/gpu/switchyard-gpu
EXTRA_DIST += plugins/gpu/switchyard-gpu plugins/gpu/gpu.mk

# --- tests ----------------------------------------------------------------------
check_LTLIBRARIES += tests/gpu/fakenvml.la
tests_gpu_fakenvml_la_SOURCES = tests/gpu/fake_nvml.c
tests_gpu_fakenvml_la_CFLAGS = $(AM_CFLAGS) -pthread
# nodelete: its driver thread (see fake_nvml.c) outlives dlclose, as the
# real driver's does, so its code must stay mapped.
tests_gpu_fakenvml_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) -pthread -Wl,-z,nodelete

check_PROGRAMS += tests/gpu/test_gpu_sched
TESTS += tests/gpu/test_gpu_sched
tests_gpu_test_gpu_sched_SOURCES = tests/gpu/test_gpu_sched.c \
	plugins/gpu/sched.c plugins/gpu/sched.h
tests_gpu_test_gpu_sched_CPPFLAGS = -I$(top_srcdir)/plugins/gpu -D_GNU_SOURCE
tests_gpu_test_gpu_sched_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_gpu_test_gpu_sched_LDADD = $(CMOCKA_LIBS)

gpu_shell_tests = tests/gpu/gpu.sh tests/gpu/health.sh tests/gpu/metrics.sh tests/gpu/example.sh tests/gpu/conformance.sh tests/gpu/real_gpu.sh
TESTS += $(gpu_shell_tests)
dist_check_SCRIPTS += $(gpu_shell_tests) tests/gpu/lib.sh

# --- the scheduling simulation (make bench-gpu; never part of make check) ------
check_PROGRAMS += bench/gpusim
bench_gpusim_SOURCES = bench/gpusim.c plugins/gpu/sched.c plugins/gpu/sched.h
bench_gpusim_CPPFLAGS = -I$(top_srcdir)/plugins/gpu -D_GNU_SOURCE
bench_gpusim_LDADD = -lm
EXTRA_DIST += bench/gpusim.c docs/gpu.md
bench-gpu: bench/gpusim$(EXEEXT)
	@mkdir -p bench/results
	@out=bench/results/gpusim-`date -u +%Y%m%dT%H%M%SZ`.txt; \
	for load in 0.95 1.05 1.2; do ./bench/gpusim$(EXEEXT) --load $$load; echo; done | tee $$out; \
	echo "written to $$out"
.PHONY: bench-gpu
EXTRA_DIST += examples/gpu/README.md examples/gpu/switchyard.cfg \
	examples/gpu/routes.cfg examples/gpu/workflows/train.cfg \
	examples/gpu/bin/train.sh examples/gpu/bin/infer.sh \
	examples/gpu/fake-devices.txt tests/data/conformance/gpu.cfg

check_PROGRAMS += tests/gpu/test_gpu_plugin
TESTS += tests/gpu/test_gpu_plugin
tests_gpu_test_gpu_plugin_SOURCES = tests/gpu/test_gpu_plugin.c
tests_gpu_test_gpu_plugin_CPPFLAGS = $(SDK_CPPFLAGS)
tests_gpu_test_gpu_plugin_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(JANSSON_CFLAGS) -pthread
tests_gpu_test_gpu_plugin_LDFLAGS = -pthread
tests_gpu_test_gpu_plugin_LDADD = $(SDK_LIB) $(JANSSON_LIBS) $(CMOCKA_LIBS) -ldl
