# host/host.mk -- included from the top Makefile.am: the host library, one
# group of sources per layer, and the `switchyard` program.  Dependencies
# point one way, down this file (admin sits between cli and service, after
# it): cli -> admin -> service -> engine -> workflow /
# executor / store -> config -> base.

# Below every layer sits the SDK (libswitchyard-sdk.a, sdk/sdk.mk): what
# the host shares with plugins and the conformance kit (durations, the JSON
# parameter getters, libconfig settings as JSON and their checks against a
# plugin's declarations, and loading a plugin) is written once, there.
# Its symbols are hidden, which only keeps them out of a dynamic symbol
# table: linked statically into the program, they resolve as usual.
# AM_CPPFLAGS (Makefile.am) has -I$(top_srcdir)/sdk for its headers.
#
# Whatever links the host links HOST_LDADD.  The SDK archive is named
# there rather than in libsyhost_la_LIBADD: libtool does not carry a plain
# static archive through a convenience library (it warns, and leaves it
# out of both the archive and dependency_libs).  DEP_LIBS follows it again
# for the libraries the SDK itself needs (jansson, libconfig).
noinst_LTLIBRARIES += libsyhost.la
libsyhost_la_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS)
libsyhost_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSY_PLUGIN_WORKER='"$(pkglibexecdir)/switchyard-plugin-worker"' \
	-DSY_DASHBOARD_DIR='"$(pkgdatadir)/dashboard"'
libsyhost_la_LIBADD = $(DEP_LIBS)
HOST_LDADD = libsyhost.la $(SDK_LIB) $(DEP_LIBS)

# base: errors and diagnostics, logging, small utilities.
libsyhost_la_SOURCES = \
	host/base/util.c host/base/util.h \
	host/base/library.c host/base/library.h \
	host/base/clock.c host/base/clock.h \
	host/base/tz.c host/base/tz.h \
	host/base/diagnostics.c host/base/diagnostics.h \
	host/base/log.c host/base/log.h \
	host/base/metrics.c host/base/metrics.h \
	host/base/log_line.c host/base/log_line.h \
	host/base/sdnotify.c host/base/sdnotify.h

# config: config files, the integer check, globs, routes, checking settings
# against a plugin's declarations.
libsyhost_la_SOURCES += \
	host/config/config.c host/config/config.h host/config/flow.c host/config/flow.h \
	host/config/integers.c host/config/integers.h \
	host/config/glob.c host/config/glob.h \
	host/config/routes.c host/config/routes.h \
	host/config/size.c host/config/size.h \
	host/config/params.c host/config/params.h \
	host/config/admin.c host/config/admin.h

# workflow: the model and its parsing, the graph, the canonical definition,
# `when` conditions, retry delays, trigger rules, states, the JSON context
# (the files and their order listed in workflow/internal.h).
libsyhost_la_SOURCES += \
	host/workflow/workflow.c host/workflow/workflow.h host/workflow/internal.h \
	host/workflow/parse_task.c host/workflow/model.c \
	host/workflow/start_trigger.c host/workflow/start_trigger.h \
	host/workflow/start_trigger_read.c \
	host/workflow/cache_write.c host/workflow/cache_read.c host/workflow/cache_file.c \
	host/workflow/names.c host/workflow/cron.c host/workflow/cron_next.c \
	host/workflow/cron.h host/workflow/settings.c \
	host/workflow/tick.c host/workflow/tick.h \
	host/workflow/graph.c \
	host/workflow/definition_write.c host/workflow/definition_read.c \
	host/workflow/condition.c host/workflow/map.c host/workflow/flow.c host/workflow/rate.c host/workflow/key_template.c host/workflow/task_cache.c host/workflow/retry.c \
	host/workflow/trigger.c host/workflow/trigger.h \
	host/workflow/state.c host/workflow/state.h \
	host/workflow/context.c host/workflow/context.h \
	host/workflow/context_tree.c host/workflow/context_tree.h

# executor: the plugin registry, the host API lent to plugins, instances (a
# configured use of a plugin, or of a descriptor in memory).
libsyhost_la_SOURCES += \
	host/executor/plugin.c host/executor/plugin.h \
	host/executor/directory.c host/executor/directory.h \
	host/executor/host_api.c host/executor/host_api.h \
	host/executor/emit.c host/executor/emit.h \
	host/executor/call_record.c host/executor/call_record.h \
	host/executor/watchdog.c host/executor/watchdog.h \
	host/executor/wire.c host/executor/wire.h
libsyhost_la_SOURCES += \
	host/executor/instance.c host/executor/instance.h \
	host/executor/isolated.c host/executor/isolated.h \
	host/executor/isolated_state.c host/executor/isolated_state.h

# store: the interface, what implementations share, and the embedded
# SQLite store (its files listed in store/sqlite/internal.h).
libsyhost_la_SOURCES += \
	host/store/store.c host/store/store.h \
	host/store/driver.c host/store/driver.h host/store/record.c \
	host/store/sqlite/sqlite.c host/store/sqlite/internal.h \
	host/store/sqlite/step.c host/store/sqlite/statements.c \
	host/store/sqlite/schema.c host/store/sqlite/runs.c \
	host/store/sqlite/ownership.c host/store/sqlite/tasks.c \
	host/store/sqlite/processes.c \
	host/store/sqlite/schedule.c \
	host/store/sqlite/logs.c \
	host/store/sqlite/elements.c host/store/elements.c \
	host/store/sqlite/audit.c host/store/audit.c host/store/audit.h \
	host/store/task_writes.c \
	host/store/keyed.c host/store/keyed.h host/store/sqlite/keyed.c \
	host/store/cache.h host/store/sqlite/cache.c \
	host/store/slots.c host/store/slots.h host/store/sqlite/slots.c host/store/sqlite/holds.c \
	host/store/sqlite/text.c host/store/sqlite/counts.c \
	host/store/rates.c host/store/rates.h host/store/sqlite/rates.c \
	host/store/preempt.c host/store/preempt.h host/store/sqlite/preempt.c \
	host/store/named_events.c host/store/named_events.h host/store/named_driver.h \
	host/store/sqlite/named_events.c host/store/sqlite/settlements.c \
	host/store/waiters.c host/store/waiters.h host/store/sqlite/waiters.c \
	host/store/checkpoint.c host/store/checkpoint.h

# The PostgreSQL store (its files listed in store/postgres/internal.h),
# built when libpq is found.
if HAVE_LIBPQ
libsyhost_la_SOURCES += \
	host/store/postgres/postgres.c host/store/postgres/internal.h \
	host/store/postgres/libpq.c host/store/postgres/libpq.h \
	host/store/postgres/dial.c \
	host/store/postgres/journal.c host/store/postgres/conn.c \
	host/store/postgres/schema.c \
	host/store/postgres/runs.c host/store/postgres/ownership.c \
	host/store/postgres/listen.c \
	host/store/postgres/tasks.c host/store/postgres/processes.c \
	host/store/postgres/schedule.c host/store/postgres/logs.c host/store/postgres/audit.c \
	host/store/postgres/elements.c host/store/postgres/batch.c \
	host/store/postgres/map_sql.c host/store/postgres/slot_sql.c host/store/postgres/keyed.c \
	host/store/postgres/cache.c \
	host/store/postgres/slots.c host/store/postgres/holds.c host/store/postgres/grants.c \
	host/store/postgres/key_table.c host/store/postgres/key_table.h host/store/postgres/holds.h \
	host/store/postgres/unwritten.c host/store/postgres/unwritten.h \
	host/store/postgres/named_events.c \
	host/store/postgres/settlements.c host/store/postgres/waiters.c \
	host/store/postgres/rates.c host/store/postgres/preempt.c
endif

# engine: lifecycle and the loop turn, the turn's batch, attempts, dispatch,
# completions, runs (transitions, triggers), loading and recovery, leases and
# serving, fenced writes and refusals, a lapsed lease, input contexts, timers
# on the engine's clock, wake-ups.
libsyhost_la_SOURCES += \
	host/engine/engine.c host/engine/engine.h host/engine/internal.h \
	host/engine/batch.c host/engine/batch.h \
	host/engine/observe.c host/engine/observe.h \
	host/engine/attempt.c host/engine/attempt.h \
	host/engine/resume.c host/engine/resume.h \
	host/engine/process.c host/engine/process.h \
	host/engine/orphans.c host/engine/orphans.h \
	host/engine/attempt_log.c host/engine/attempt_log.h \
	host/engine/dispatch.c host/engine/dispatch.h host/engine/cache.c host/engine/cache.h \
	host/engine/cache_put.c host/engine/cache_put.h host/engine/priority.c host/engine/priority.h \
	host/engine/fair.c host/engine/fair.h host/engine/limits.c host/engine/limits.h \
	host/engine/ledger.c host/engine/ledger.h host/engine/key_index.c host/engine/key_index.h \
	host/engine/claims.c host/engine/claims.h \
	host/engine/waiting.c host/engine/waiting.h \
	host/engine/waiters.c host/engine/waiters.h host/engine/grant.c host/engine/grant.h \
	host/engine/rates.c host/engine/rates.h host/engine/preempt.c host/engine/preempt.h \
	host/engine/completion.c host/engine/completion.h \
	host/engine/run.c host/engine/run.h \
	host/engine/load.c host/engine/load.h host/engine/map.c host/engine/map.h \
	host/engine/serve.c host/engine/serve.h \
	host/engine/schedule.c host/engine/schedule.h \
	host/engine/start_triggers.c host/engine/start_triggers.h \
	host/engine/named_events.c host/engine/named_events.h \
	host/engine/listen.c host/engine/listen.h \
	host/engine/fenced.c host/engine/fenced.h \
	host/engine/lease.c host/engine/lease.h \
	host/engine/input.c host/engine/input.h \
	host/engine/timer.c host/engine/timer.h \
	host/engine/shutdown.c host/engine/shutdown.h \
	host/engine/reload.c host/engine/reload.h \
	host/engine/route.c host/engine/route.h \
	host/engine/wake.c host/engine/wake.h \
	host/engine/metrics.c host/engine/metrics.h

# service: what the CLI and the admin API call.
libsyhost_la_SOURCES += \
	host/service/setup.c host/service/setup.h \
	host/service/signals.c host/service/signals.h \
	host/service/supervise.c host/service/supervise.h \
	host/service/runs.c host/service/runs.h host/service/run_maps.c \
	host/service/run_waiting.c \
	host/service/run_graph.c host/service/limits.c host/service/limits.h \
	host/service/limits_waiters.c host/service/limits_waiters.h \
	host/service/schedules.c host/service/schedules.h \
	host/service/backfill.c host/service/backfill.h \
	host/service/named_events.c host/service/named_events.h \
	host/service/events_keep.c host/service/events_keep.h \
	host/service/triggers.c host/service/triggers.h \
	host/service/service.c host/service/service.h \
	host/service/reload.c host/service/cancel.c \
	host/service/audit.c host/service/audit.h \
	host/service/retry.c host/service/retry.h \
	host/service/logs.c host/service/logs.h \
	host/service/inspect.c host/service/inspect.h \
	host/service/route_explain.c host/service/route_explain.h \
	host/service/metrics.c host/service/metrics_file.c host/service/metrics.h

# admin: the HTTP API `serve` answers on the engine's loop (libmicrohttpd):
# the server on the loop and its io over libmicrohttpd, a request's way
# through (request.c: what the fuzz target drives), the route table and
# matching, the token, replies and streams, one file per group of endpoints.
libsyhost_la_SOURCES += \
	host/admin/admin.h host/admin/internal.h host/admin/api.h \
	host/admin/server.c host/admin/router.c host/admin/router.h \
	host/admin/routes.c host/admin/auth.c host/admin/auth.h \
	host/admin/reply.c host/admin/stream.c \
	host/admin/request.c host/admin/mhd.c host/admin/libmicrohttpd.c host/admin/libmicrohttpd.h host/admin/deadline.c host/admin/tokens.c host/admin/tokens.h host/admin/tls.c \
	host/admin/parse.c host/admin/parse.h \
	host/admin/api_runs.c host/admin/api_config.c host/admin/api_host.c \
	host/admin/api_logs.c host/admin/api_events.c \
	host/admin/api_metrics.c host/admin/api_named_events.c \
	host/admin/named_feed.c host/admin/named_feed.h
libsyhost_la_SOURCES += host/admin/api_attempts.c host/admin/static.c host/admin/audit.c host/admin/api_token.c

bin_PROGRAMS += switchyard
switchyard_SOURCES = host/main.c \
	host/cli/cli.h host/cli/common.c host/cli/common.h \
	host/cli/usage.c host/cli/commands.c host/cli/workflows.c host/cli/limits.c host/cli/drain.c host/cli/schedules.c host/cli/backfill.c host/cli/check.c host/cli/route.c host/cli/plugins.c host/cli/plugins_remote.c host/cli/plugins_remote.h \
	host/cli/run.c host/cli/status.c host/cli/graph.c host/cli/serve.c \
	host/cli/retry.c host/cli/logs.c host/cli/emit.c host/cli/triggers.c host/cli/remote.c \
	host/cli/remote.h host/cli/token.c host/cli/audit.c
# libcurl (when found) for --host, opened when a command first sends a
# request (cli/libcurl.h); without it --host says so.
if HAVE_LIBCURL
switchyard_SOURCES += host/cli/libcurl.c host/cli/libcurl.h
endif
switchyard_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS) $(LIBCURL_CFLAGS)
# mimalloc first: its malloc then serves the whole process (libconfig,
# SQLite, the plugins) ahead of the C library's.
switchyard_LDADD = $(MIMALLOC_LIBS) $(HOST_LDADD)
if MIMALLOC
switchyard_CFLAGS += -DSY_MIMALLOC
endif
EXTRA_DIST += host/host.mk

# The worker of an isolated instance (isolate_plugin = true; executor/isolated.h):
# one plugin in a process of its own.  It needs the wire format and the
# SDK's loader and parameter getters, not the host.
pkglibexec_PROGRAMS += switchyard-plugin-worker
switchyard_plugin_worker_SOURCES = host/executor/plugin_worker.c \
	host/executor/wire.c host/executor/wire.h
switchyard_plugin_worker_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) -pthread
switchyard_plugin_worker_LDADD = $(SDK_LIB) $(DEP_LIBS) -ldl
switchyard_plugin_worker_LDFLAGS = $(AM_LDFLAGS) -pthread
