/*
 * admin/libmicrohttpd.h -- libmicrohttpd, and the one gnutls call of
 * admin/tls.c, loaded when `serve` first starts the admin API rather than
 * linked (base/library.h says why).  The gnutls function is looked up
 * through libmicrohttpd: the gnutls it was built with, whose sessions
 * admin/tls.c is given.
 *
 * Include this instead of <microhttpd.h>: every call below goes through
 * sy_libmicrohttpd, which sy_libmicrohttpd_load fills.  sy_admin_start
 * (server.c) loads it before the first call, so the admin API's files
 * call libmicrohttpd as usual.  A function the admin API starts to call
 * must be added to the list and to the macros: one missing from the list
 * fails to compile (no member), one missing from the macros fails to link
 * (the library is not linked).
 */
#ifndef SY_ADMIN_LIBMICROHTTPD_H
#define SY_ADMIN_LIBMICROHTTPD_H

#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <stddef.h>

#include "base/library.h"

/* The functions the admin API calls, in alphabetical order. */
#define SY_LIBMICROHTTPD_FUNCTIONS(X, t) \
    X(t, MHD_add_response_header) \
    X(t, MHD_create_response_from_buffer) \
    X(t, MHD_create_response_from_callback) \
    X(t, MHD_destroy_response) \
    X(t, MHD_get_connection_info) \
    X(t, MHD_get_daemon_info) \
    X(t, MHD_get_timeout) \
    X(t, MHD_lookup_connection_value) \
    X(t, MHD_queue_response) \
    X(t, MHD_resume_connection) \
    X(t, MHD_run) \
    X(t, MHD_start_daemon) \
    X(t, MHD_stop_daemon) \
    X(t, MHD_suspend_connection) \
    X(t, gnutls_certificate_verify_peers2) \

/* Each function's address, typed by the library's header.  Written once
 * by sy_libmicrohttpd_load, read by any thread after it. */
struct sy_libmicrohttpd {
    SY_LIBMICROHTTPD_FUNCTIONS(SY_LIBRARY_SLOT, sy_libmicrohttpd)
};
extern struct sy_libmicrohttpd sy_libmicrohttpd;

/* Loads the library and fills sy_libmicrohttpd, once per process (any
 * thread).  0, or -1 with "libmicrohttpd.so.12 cannot be loaded (...):
 * install the Debian package libmicrohttpd12" (or the function it lacks)
 * in err, the same on every call. */
int sy_libmicrohttpd_load(char *err, size_t err_len);

#define MHD_add_response_header(...) (sy_libmicrohttpd.MHD_add_response_header(__VA_ARGS__))
#define MHD_create_response_from_buffer(...) (sy_libmicrohttpd.MHD_create_response_from_buffer(__VA_ARGS__))
#define MHD_create_response_from_callback(...) (sy_libmicrohttpd.MHD_create_response_from_callback(__VA_ARGS__))
#define MHD_destroy_response(...) (sy_libmicrohttpd.MHD_destroy_response(__VA_ARGS__))
#define MHD_get_connection_info(...) (sy_libmicrohttpd.MHD_get_connection_info(__VA_ARGS__))
#define MHD_get_daemon_info(...) (sy_libmicrohttpd.MHD_get_daemon_info(__VA_ARGS__))
#define MHD_get_timeout(...) (sy_libmicrohttpd.MHD_get_timeout(__VA_ARGS__))
#define MHD_lookup_connection_value(...) (sy_libmicrohttpd.MHD_lookup_connection_value(__VA_ARGS__))
#define MHD_queue_response(...) (sy_libmicrohttpd.MHD_queue_response(__VA_ARGS__))
#define MHD_resume_connection(...) (sy_libmicrohttpd.MHD_resume_connection(__VA_ARGS__))
#define MHD_run(...) (sy_libmicrohttpd.MHD_run(__VA_ARGS__))
#define MHD_start_daemon(...) (sy_libmicrohttpd.MHD_start_daemon(__VA_ARGS__))
#define MHD_stop_daemon(...) (sy_libmicrohttpd.MHD_stop_daemon(__VA_ARGS__))
#define MHD_suspend_connection(...) (sy_libmicrohttpd.MHD_suspend_connection(__VA_ARGS__))
#define gnutls_certificate_verify_peers2(...) (sy_libmicrohttpd.gnutls_certificate_verify_peers2(__VA_ARGS__))

#endif
