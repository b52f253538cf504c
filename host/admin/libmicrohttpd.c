/* libmicrohttpd: the table, filled on first use (libmicrohttpd.h). */
#include "admin/libmicrohttpd.h"

SY_LIBRARY_DEFINE(sy_libmicrohttpd, SY_LIBMICROHTTPD_FUNCTIONS, SY_LIBMHD_SONAME, "libmicrohttpd12", sy_libmicrohttpd_load)
