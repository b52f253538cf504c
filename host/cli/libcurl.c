/* libcurl: the table, filled on first use (libcurl.h). */
#include "cli/libcurl.h"

SY_LIBRARY_DEFINE(sy_libcurl, SY_LIBCURL_FUNCTIONS, SY_LIBCURL_SONAME, "libcurl4", sy_libcurl_load)
