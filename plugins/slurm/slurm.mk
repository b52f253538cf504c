# plugins/slurm/slurm.mk -- the `slurm` executor (tasks as Slurm batch
# jobs, through the sbatch/squeue/scancel/scontrol commands) and its
# tests.  Needs nothing but the SDK, so it is always built; its tests
# start a one-node cluster from Debian's slurm-wlm and munge, and skip
# (77) with one line where those are missing.

executors_LTLIBRARIES += plugins/slurm/slurm.la
plugins_slurm_slurm_la_SOURCES = \
	plugins/slurm/slurm.c plugins/slurm/slurm.h \
	plugins/slurm/settings.c plugins/slurm/loop.c plugins/slurm/submit.c \
	plugins/slurm/state.c plugins/slurm/accounting.c plugins/slurm/parse.c \
	plugins/slurm/parse.h
# resume() is an ABI 1.4 descriptor field (slurm.c defines the minor).
plugins_slurm_slurm_la_CPPFLAGS = $(SDK_CPPFLAGS)
plugins_slurm_slurm_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
plugins_slurm_slurm_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_slurm_slurm_la_LIBADD = $(SDK_LIB)

# --- tests ----------------------------------------------------------------------
slurm_tests = tests/slurm/run.sh tests/slurm/cancel.sh tests/slurm/resume.sh tests/slurm/poll.sh \
	tests/slurm/example.sh tests/slurm/defer.sh tests/slurm/backoff.sh tests/slurm/missing.sh
# The longest start with the suite's longest (tests/Makefile.inc).
slurm_first_tests = tests/slurm/conformance.sh tests/slurm/accounting.sh
plugin_scripts_first += $(slurm_first_tests)
TESTS += $(slurm_tests)
dist_check_SCRIPTS += $(slurm_first_tests) $(slurm_tests) tests/slurm/lib.sh
AM_TESTS_ENVIRONMENT += \
	SY_SLURM_PLUGIN='$(abs_top_builddir)/plugins/slurm/.libs/slurm.so'; \
	export SY_SLURM_PLUGIN;

EXTRA_DIST += plugins/slurm/slurm.mk \
	examples/slurm/README.md examples/slurm/switchyard.cfg \
	examples/slurm/routes.cfg examples/slurm/workflows/train.cfg

# --- the benchmark (`make bench-slurm`, never part of `make check`) ----------------
EXTRA_DIST += bench/slurm_run
bench-slurm: all
	SY_SRCDIR=$(abs_top_srcdir) SWITCHYARD=$(abs_top_builddir)/switchyard \
	  SY_SLURM_PLUGIN=$(abs_top_builddir)/plugins/slurm/.libs/slurm.so \
	  SY_THREAD_PLUGIN=$(abs_top_builddir)/plugins/thread/.libs/thread.so \
	  $(SHELL) $(top_srcdir)/bench/slurm_run
