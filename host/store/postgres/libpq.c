/* libpq: the table, filled on first use (libpq.h). */
#include "store/postgres/libpq.h"

SY_LIBRARY_DEFINE(sy_libpq, SY_LIBPQ_FUNCTIONS, SY_LIBPQ_SONAME, "libpq5", sy_libpq_load)
