# The durable store (issue 3): store.c picks the implementation from the
# URL; store_sqlite.c is the embedded SQLite store.
libsyhost_la_SOURCES += host/store.h host/store_impl.h host/store.c \
	host/store_sqlite.c host/store_ckpt.h host/store_ckpt.c

check_PROGRAMS += tests/test_store
TESTS += tests/test_store
tests_test_store_SOURCES = tests/test_store.c tests/helpers.c tests/helpers.h
tests_test_store_CFLAGS = $(UNIT_CFLAGS)
# The test also opens files with SQLite directly (schema version checks).
tests_test_store_LDADD = $(UNIT_LDADD) $(SQLITE_LIBS)

check_PROGRAMS += tests/test_ckpt
TESTS += tests/test_ckpt
tests_test_ckpt_SOURCES = tests/test_ckpt.c
tests_test_ckpt_CFLAGS = $(UNIT_CFLAGS)
tests_test_ckpt_LDADD = $(UNIT_LDADD) $(SQLITE_LIBS)
