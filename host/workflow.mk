# Workflows (issue 3): workflow files and their validation, the dependency
# graph, the canonical definition and its SHA-256, `when` conditions, trigger
# rules, retry delays, task and run states, the JSON context.
libsyhost_la_SOURCES += host/workflow.h host/workflow_int.h host/workflow.c \
	host/workflow_graph.c host/workflow_json.c \
	host/cond.c host/retry.c \
	host/trigger.h host/trigger.c \
	host/state.h host/state.c \
	host/context.h host/context.c

workflow_tests = tests/test_workflow tests/test_state tests/test_trigger \
	tests/test_context
check_PROGRAMS += $(workflow_tests)
TESTS += $(workflow_tests)

# Reads tests/data/workflows/ through $SY_TEST_DATA (tests/data is in
# EXTRA_DIST already) and writes scratch files with tests/helpers.c.
tests_test_workflow_SOURCES = tests/test_workflow.c tests/helpers.c tests/helpers.h
tests_test_workflow_CFLAGS = $(UNIT_CFLAGS)
tests_test_workflow_LDADD = $(UNIT_LDADD)
tests_test_state_SOURCES = tests/test_state.c
tests_test_state_CFLAGS = $(UNIT_CFLAGS)
tests_test_state_LDADD = $(UNIT_LDADD)
tests_test_trigger_SOURCES = tests/test_trigger.c
tests_test_trigger_CFLAGS = $(UNIT_CFLAGS)
tests_test_trigger_LDADD = $(UNIT_LDADD)
tests_test_context_SOURCES = tests/test_context.c
tests_test_context_CFLAGS = $(UNIT_CFLAGS)
tests_test_context_LDADD = $(UNIT_LDADD)
