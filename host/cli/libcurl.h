/*
 * cli/libcurl.h -- libcurl, loaded when `--host` first sends a request
 * rather than linked (base/library.h says why).
 *
 * Include this instead of <curl/curl.h>: every call below goes through
 * sy_libcurl, which sy_libcurl_load fills; cli/remote.c loads it before
 * the first call.  A function `--host` starts to call must be added to
 * the list and to the macros: one missing from the list fails to compile
 * (no member), one missing from the macros fails to link (libcurl is not
 * linked).
 */
#ifndef SY_CLI_LIBCURL_H
#define SY_CLI_LIBCURL_H

#include <curl/curl.h>
#include <stddef.h>

#include "base/library.h"

/* <curl/curl.h> makes these two macros (type checks with GCC); the
 * calls go through the table instead. */
#undef curl_easy_setopt
#undef curl_easy_getinfo

/* The functions `--host` calls, in alphabetical order. */
#define SY_LIBCURL_FUNCTIONS(X, t) \
    X(t, curl_easy_cleanup) \
    X(t, curl_easy_getinfo) \
    X(t, curl_easy_init) \
    X(t, curl_easy_perform) \
    X(t, curl_easy_setopt) \
    X(t, curl_easy_strerror) \
    X(t, curl_slist_append) \
    X(t, curl_slist_free_all) \

/* Each function's address, typed by the library's header.  Written once
 * by sy_libcurl_load, read by any thread after it. */
struct sy_libcurl {
    SY_LIBCURL_FUNCTIONS(SY_LIBRARY_SLOT, sy_libcurl)
};
extern struct sy_libcurl sy_libcurl;

/* Loads the library and fills sy_libcurl, once per process (any thread).
 * 0, or -1 with "libcurl.so.4 cannot be loaded (...): install the Debian
 * package libcurl4" (or the function it lacks) in err, the same on
 * every call. */
int sy_libcurl_load(char *err, size_t err_len);

#define curl_easy_cleanup(...) (sy_libcurl.curl_easy_cleanup(__VA_ARGS__))
#define curl_easy_getinfo(...) (sy_libcurl.curl_easy_getinfo(__VA_ARGS__))
#define curl_easy_init(...) (sy_libcurl.curl_easy_init(__VA_ARGS__))
#define curl_easy_perform(...) (sy_libcurl.curl_easy_perform(__VA_ARGS__))
#define curl_easy_setopt(...) (sy_libcurl.curl_easy_setopt(__VA_ARGS__))
#define curl_easy_strerror(...) (sy_libcurl.curl_easy_strerror(__VA_ARGS__))
#define curl_slist_append(...) (sy_libcurl.curl_slist_append(__VA_ARGS__))
#define curl_slist_free_all(...) (sy_libcurl.curl_slist_free_all(__VA_ARGS__))

#endif
