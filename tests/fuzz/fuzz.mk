# The fuzz targets (tests/fuzz/fuzz.h).  Included from tests/Makefile.inc.
#
# Each target is built twice from the same file: tests/fuzz/replay_NAME
# with replay.c, a check program that `make check` runs over the
# target's corpus (tests/fuzz/replay.sh), and tests/fuzz/fuzz_NAME with
# libFuzzer, built only by `make fuzz` in a tree configured with
# --enable-fuzz (clang).

fuzz_targets = glob glob_diff config routes workflow definition cache context \
	cron duration params sigv4 admin slurm tokens kubernetes slot_counts
fuzz_common = tests/fuzz/fuzz.h tests/fuzz/fuzz_util.c
fuzz_wf = tests/fuzz/wf_check.h tests/fuzz/wf_check.c
FUZZ_CFLAGS_ALL = $(AM_CFLAGS) $(DEP_CFLAGS)
FUZZ_LINK_FLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)

tests_fuzz_replay_glob_SOURCES = tests/fuzz/glob.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_glob_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_glob_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_glob_SOURCES = tests/fuzz/glob.c $(fuzz_common)
tests_fuzz_fuzz_glob_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_glob_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_glob_LDADD = $(HOST_LDADD)
tests_fuzz_replay_glob_diff_SOURCES = tests/fuzz/glob_diff.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_glob_diff_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_glob_diff_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_glob_diff_SOURCES = tests/fuzz/glob_diff.c $(fuzz_common)
tests_fuzz_fuzz_glob_diff_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_glob_diff_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_glob_diff_LDADD = $(HOST_LDADD)
tests_fuzz_replay_config_SOURCES = tests/fuzz/config.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_config_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_config_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_config_SOURCES = tests/fuzz/config.c $(fuzz_common)
tests_fuzz_fuzz_config_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_config_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_config_LDADD = $(HOST_LDADD)
tests_fuzz_replay_routes_SOURCES = tests/fuzz/routes.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_routes_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_routes_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_routes_SOURCES = tests/fuzz/routes.c $(fuzz_common)
tests_fuzz_fuzz_routes_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_routes_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_routes_LDADD = $(HOST_LDADD)
tests_fuzz_replay_workflow_SOURCES = tests/fuzz/workflow.c tests/fuzz/replay.c $(fuzz_common) $(fuzz_wf)
tests_fuzz_replay_workflow_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_workflow_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_workflow_SOURCES = tests/fuzz/workflow.c $(fuzz_common) $(fuzz_wf)
tests_fuzz_fuzz_workflow_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_workflow_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_workflow_LDADD = $(HOST_LDADD)
tests_fuzz_replay_definition_SOURCES = tests/fuzz/definition.c tests/fuzz/replay.c $(fuzz_common) $(fuzz_wf)
tests_fuzz_replay_definition_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_definition_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_definition_SOURCES = tests/fuzz/definition.c $(fuzz_common) $(fuzz_wf)
tests_fuzz_fuzz_definition_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_definition_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_definition_LDADD = $(HOST_LDADD)
tests_fuzz_replay_cache_SOURCES = tests/fuzz/cache.c tests/fuzz/replay.c $(fuzz_common) $(fuzz_wf)
tests_fuzz_replay_cache_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_cache_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_cache_SOURCES = tests/fuzz/cache.c $(fuzz_common) $(fuzz_wf)
tests_fuzz_fuzz_cache_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_cache_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_cache_LDADD = $(HOST_LDADD)
tests_fuzz_replay_context_SOURCES = tests/fuzz/context.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_context_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_context_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_context_SOURCES = tests/fuzz/context.c $(fuzz_common)
tests_fuzz_fuzz_context_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_context_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_context_LDADD = $(HOST_LDADD)
tests_fuzz_replay_cron_SOURCES = tests/fuzz/cron.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_cron_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_cron_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_cron_SOURCES = tests/fuzz/cron.c $(fuzz_common)
tests_fuzz_fuzz_cron_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_cron_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_cron_LDADD = $(HOST_LDADD)
tests_fuzz_replay_slot_counts_SOURCES = tests/fuzz/slot_counts.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_slot_counts_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_slot_counts_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_slot_counts_SOURCES = tests/fuzz/slot_counts.c $(fuzz_common)
tests_fuzz_fuzz_slot_counts_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_slot_counts_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_slot_counts_LDADD = $(HOST_LDADD)
tests_fuzz_replay_duration_SOURCES = tests/fuzz/duration.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_duration_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_duration_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_duration_SOURCES = tests/fuzz/duration.c $(fuzz_common)
tests_fuzz_fuzz_duration_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_duration_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_duration_LDADD = $(HOST_LDADD)
tests_fuzz_replay_params_SOURCES = tests/fuzz/params.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_params_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_params_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_params_SOURCES = tests/fuzz/params.c $(fuzz_common)
tests_fuzz_fuzz_params_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_params_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_params_LDADD = $(HOST_LDADD)
tests_fuzz_replay_admin_SOURCES = tests/fuzz/admin.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_admin_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_admin_LDADD = $(HOST_LDADD)
# The host it fuzzes loads the thread plugin (tests/fuzz/admin.c).
EXTRA_tests_fuzz_replay_admin_DEPENDENCIES = plugins/thread/thread.la
EXTRA_tests_fuzz_fuzz_admin_DEPENDENCIES = plugins/thread/thread.la
tests_fuzz_fuzz_admin_SOURCES = tests/fuzz/admin.c $(fuzz_common)
tests_fuzz_fuzz_admin_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_admin_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_admin_LDADD = $(HOST_LDADD)
tests_fuzz_replay_tokens_SOURCES = tests/fuzz/tokens.c tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_tokens_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_tokens_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_tokens_SOURCES = tests/fuzz/tokens.c $(fuzz_common)
tests_fuzz_fuzz_tokens_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_tokens_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_tokens_LDADD = $(HOST_LDADD)

# The lambda plugin's signer, compiled in: it is plugin code, not the host's.
fuzz_sigv4 = tests/fuzz/sigv4.c plugins/lambda/sigv4.c plugins/lambda/sigv4.h
tests_fuzz_replay_sigv4_SOURCES = $(fuzz_sigv4) tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_sigv4_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/lambda
tests_fuzz_replay_sigv4_CFLAGS = $(FUZZ_CFLAGS_ALL) $(LIBCRYPTO_CFLAGS)
tests_fuzz_replay_sigv4_LDADD = $(HOST_LDADD) $(LIBCRYPTO_LIBS)
tests_fuzz_fuzz_sigv4_SOURCES = $(fuzz_sigv4) $(fuzz_common)
tests_fuzz_fuzz_sigv4_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/lambda
tests_fuzz_fuzz_sigv4_CFLAGS = $(FUZZ_CFLAGS_ALL) $(LIBCRYPTO_CFLAGS)
tests_fuzz_fuzz_sigv4_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_sigv4_LDADD = $(HOST_LDADD) $(LIBCRYPTO_LIBS)

# The slurm plugin's readers of the commands' output, compiled in.
fuzz_slurm = tests/fuzz/slurm.c plugins/slurm/parse.c plugins/slurm/parse.h
tests_fuzz_replay_slurm_SOURCES = $(fuzz_slurm) tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_slurm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/slurm
tests_fuzz_replay_slurm_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_replay_slurm_LDADD = $(HOST_LDADD)
tests_fuzz_fuzz_slurm_SOURCES = $(fuzz_slurm) $(fuzz_common)
tests_fuzz_fuzz_slurm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/slurm
tests_fuzz_fuzz_slurm_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_slurm_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_slurm_LDADD = $(HOST_LDADD)

# The kubernetes plugin's readers of the API server's watch lines, the
# exec credential plugin's output and kubeconfig files, compiled in: only
# where the plugin is built (libyaml, libcurl); replay.sh skips it elsewhere.
fuzz_kubernetes = tests/fuzz/kubernetes.c plugins/kubernetes/event.c \
	plugins/kubernetes/exec_auth.c plugins/kubernetes/kubeconfig.c \
	plugins/kubernetes/kubernetes.h
fuzz_kubernetes_cflags = $(FUZZ_CFLAGS_ALL) $(LIBCURL_CFLAGS) $(LIBYAML_CFLAGS) \
	$(LIBUV_CFLAGS) $(JANSSON_CFLAGS) $(LIBCRYPTO_CFLAGS)
fuzz_kubernetes_libs = $(HOST_LDADD) $(LIBYAML_LIBS) $(JANSSON_LIBS) $(LIBCRYPTO_LIBS)
tests_fuzz_replay_kubernetes_SOURCES = $(fuzz_kubernetes) tests/fuzz/replay.c $(fuzz_common)
tests_fuzz_replay_kubernetes_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/kubernetes
tests_fuzz_replay_kubernetes_CFLAGS = $(fuzz_kubernetes_cflags)
tests_fuzz_replay_kubernetes_LDADD = $(fuzz_kubernetes_libs)
tests_fuzz_fuzz_kubernetes_SOURCES = $(fuzz_kubernetes) $(fuzz_common)
tests_fuzz_fuzz_kubernetes_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/kubernetes
tests_fuzz_fuzz_kubernetes_CFLAGS = $(fuzz_kubernetes_cflags)
tests_fuzz_fuzz_kubernetes_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_kubernetes_LDADD = $(fuzz_kubernetes_libs)

check_PROGRAMS += tests/fuzz/replay_glob tests/fuzz/replay_glob_diff \
	tests/fuzz/replay_config tests/fuzz/replay_routes \
	tests/fuzz/replay_workflow tests/fuzz/replay_definition tests/fuzz/replay_cache \
	tests/fuzz/replay_context tests/fuzz/replay_cron \
	tests/fuzz/replay_duration tests/fuzz/replay_params \
	tests/fuzz/replay_sigv4 tests/fuzz/replay_admin tests/fuzz/replay_slurm tests/fuzz/replay_tokens \
	tests/fuzz/replay_slot_counts
fuzz_programs = tests/fuzz/fuzz_glob tests/fuzz/fuzz_glob_diff \
	tests/fuzz/fuzz_config tests/fuzz/fuzz_routes \
	tests/fuzz/fuzz_workflow tests/fuzz/fuzz_definition tests/fuzz/fuzz_cache \
	tests/fuzz/fuzz_context tests/fuzz/fuzz_cron \
	tests/fuzz/fuzz_duration tests/fuzz/fuzz_params tests/fuzz/fuzz_sigv4 \
	tests/fuzz/fuzz_admin tests/fuzz/fuzz_slurm tests/fuzz/fuzz_tokens \
	tests/fuzz/fuzz_slot_counts
if HAVE_KUBERNETES
check_PROGRAMS += tests/fuzz/replay_kubernetes
fuzz_programs += tests/fuzz/fuzz_kubernetes
endif
EXTRA_PROGRAMS = $(fuzz_programs)
CLEANFILES += $(fuzz_programs)

# Every corpus file, seeds and kept crashes alike, through its target.
TESTS += tests/fuzz/replay.sh
dist_check_SCRIPTS += tests/fuzz/replay.sh
EXTRA_DIST += tests/fuzz/corpus tests/fuzz/lsan.supp scripts/fuzz \
	tests/fuzz/glob.dict tests/fuzz/glob_diff.dict tests/fuzz/config.dict \
	tests/fuzz/routes.dict tests/fuzz/workflow.dict tests/fuzz/definition.dict tests/fuzz/cache.dict \
	tests/fuzz/context.dict tests/fuzz/cron.dict tests/fuzz/duration.dict \
	tests/fuzz/params.dict tests/fuzz/sigv4.dict tests/fuzz/admin.dict \
	tests/fuzz/slurm.dict tests/fuzz/tokens.dict tests/fuzz/kubernetes.dict \
	tests/fuzz/slot_counts.dict

if FUZZ
fuzz: $(fuzz_programs)
else
fuzz:
	@echo "make fuzz needs a tree configured with --enable-fuzz and clang:" >&2
	@echo "  ./configure CC=clang-14 --enable-fuzz   (or run scripts/fuzz)" >&2
	@exit 1
endif
.PHONY: fuzz
