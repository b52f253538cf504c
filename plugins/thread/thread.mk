# plugins/thread/thread.mk -- the `thread` executor: the plugin, its task
# runner, the task-function ABI header, and their tests.  Included from the
# top Makefile.am (paths are relative to the top directory).

# --- the task-function ABI ------------------------------------------------------
switchyardinclude_HEADERS += api/switchyard/task.h

# --- the plugin ---------------------------------------------------------------
executorsdir = $(pkglibdir)/executors
executors_LTLIBRARIES += plugins/thread/thread.la
plugins_thread_thread_la_SOURCES = \
	plugins/thread/thread.c plugins/thread/thread.h \
	plugins/thread/spec.c plugins/thread/job.c \
	plugins/thread/pool.c plugins/thread/pool.h \
	plugins/thread/fn.c plugins/thread/isolate.c plugins/thread/cmd.c \
	plugins/thread/taskapi.c plugins/thread/taskapi.h \
	plugins/thread/runner.h
plugins_thread_thread_la_CPPFLAGS = $(SDK_CPPFLAGS) \
	-DSY_TASK_RUNNER='"$(pkglibexecdir)/switchyard-task-runner"'
plugins_thread_thread_la_CFLAGS = $(PLUGIN_CFLAGS) -pthread
plugins_thread_thread_la_LDFLAGS = $(PLUGIN_LDFLAGS) -pthread
plugins_thread_thread_la_LIBADD = $(SDK_LIB)

# --- the runner of isolated functions (isolate = true) ----------------------------
pkglibexec_PROGRAMS += switchyard-task-runner
switchyard_task_runner_SOURCES = plugins/thread/runner.c \
	plugins/thread/runner.h plugins/thread/taskapi.c plugins/thread/taskapi.h
switchyard_task_runner_CPPFLAGS = $(SDK_CPPFLAGS)
switchyard_task_runner_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
switchyard_task_runner_LDADD = $(SDK_LIB) $(JANSSON_LIBS)

# --- tests ----------------------------------------------------------------------
# The environment test_thread needs (for AM_TESTS_ENVIRONMENT):
#   SY_THREAD_PLUGIN='$(abs_top_builddir)/plugins/thread/.libs/thread.so'
#   SY_TASKLIB='$(abs_top_builddir)/tests/tasklib/.libs/tasks.so'
#   SWITCHYARD_TASK_RUNNER='$(abs_top_builddir)/switchyard-task-runner'
# (and SY_SRCDIR, already exported, for tests/bin/tree.sh).
check_LTLIBRARIES += tests/tasklib/tasks.la
tests_tasklib_tasks_la_SOURCES = tests/tasklib/tasks.c
tests_tasklib_tasks_la_CFLAGS = $(PLUGIN_CFLAGS)
tests_tasklib_tasks_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)

check_PROGRAMS += tests/plugins/test_thread
TESTS += tests/plugins/test_thread
tests_plugins_test_thread_SOURCES = tests/plugins/test_thread.c
tests_plugins_test_thread_CFLAGS = $(UNIT_CFLAGS) -pthread
tests_plugins_test_thread_LDFLAGS = -pthread
tests_plugins_test_thread_LDADD = $(UNIT_LDADD)
check_PROGRAMS += tests/plugins/test_thread_record
TESTS += tests/plugins/test_thread_record
tests_plugins_test_thread_record_SOURCES = tests/plugins/test_thread_record.c
tests_plugins_test_thread_record_CPPFLAGS = $(SDK_CPPFLAGS)
tests_plugins_test_thread_record_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(JANSSON_CFLAGS) -pthread
tests_plugins_test_thread_record_LDFLAGS = -pthread
tests_plugins_test_thread_record_LDADD = $(SDK_LIB) $(JANSSON_LIBS) $(CMOCKA_LIBS) -ldl
EXTRA_DIST += tests/bin/tree.sh plugins/thread/thread.mk
