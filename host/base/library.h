/*
 * library.h -- a shared library loaded when a command first needs it, not
 * when the program starts.
 *
 * libpq (a PostgreSQL store), libmicrohttpd with its gnutls (`serve`'s
 * admin API) and libcurl (`--host`) bring about 30 libraries with them
 * (krb5, ldap, gnutls, nghttp2, ...). Linked into `switchyard`, every
 * command loaded all of them: `switchyard --version` took 8.8 ms against
 * 3.0 ms without them, and 0.74 s against 0.60 s under valgrind
 * (docs/testing.md). A command that uses none of them now loads none.
 *
 * Each library has a binding of its own beside its one user
 * (store/postgres/libpq.h, admin/libmicrohttpd.h, cli/libcurl.h): a table
 * of the functions that user calls, typed by the library's own header
 * (so a signature cannot drift), filled once by a load function that the
 * user calls before its first call into the library, and macros that
 * send each call through the table, as OpenGL loaders do (glad's
 * `#define glClear glad_glClear`).
 *
 * Thread-safe: a binding fills its table once, under a lock; the handle
 * stays open for the life of the process (these libraries register
 * thread-local state and atexit handlers that a dlclose would cut off).
 */
#ifndef SY_LIBRARY_H
#define SY_LIBRARY_H

#include <stddef.h>

/* One library and the functions its binding calls.  The binding defines
 * one, static, with the public fields set; sy_library_load does the rest.
 * Any thread. */
typedef struct sy_library {
    const char *soname;        /* public: opened by this name (configure's
                                  SY_SONAME: the headers' library) */
    const char *package;       /* public: the Debian package that has it,
                                  for the error */
    const char *const *names;  /* public: the functions, `count` of them */
    void **const *slots;       /* public: where each one's address goes: a
                                  function pointer of the binding's table,
                                  written through a void ** as dlsym(3)
                                  shows (POSIX requires a function's
                                  address to fit an object pointer) */
    size_t count;              /* public */
    int state;                 /* private: 0 not tried, 1 loaded, -1 failed */
    char error[256];           /* private: why it failed */
} sy_library;

/* Opens the library (RTLD_NOW, so that a symbol missing in it shows here
 * rather than at a later call) and fills every slot, the first time it is
 * called for `l`; later calls answer the same.  0, or -1 with "NAME cannot
 * be loaded (dlerror's words): install the Debian package PACKAGE" or
 * "NAME has no function F: ..." in err.  The handle is never closed. */
int sy_library_load(sy_library *l, char *err, size_t err_len);

/* A binding's parts, from its list LIST(X, t) of X(t, FUNCTION):
 * SY_LIBRARY_SLOT makes the table's members, each typed by the
 * library's own header (`struct TABLE { LIST(SY_LIBRARY_SLOT, TABLE) };`
 * in the binding's header), and SY_LIBRARY_DEFINE, in its one source
 * file, the table, its sy_library and `int LOAD(char *err, size_t
 * err_len)`, which loads it (sy_library_load). */
#define SY_LIBRARY_SLOT(t, name) __typeof__(name) *name;
#define SY_LIBRARY_NAME(t, name) #name,
#define SY_LIBRARY_ADDRESS(t, name) (void **)&t.name,
#define SY_LIBRARY_DEFINE(TABLE, LIST, SONAME, PACKAGE, LOAD)                  \
    struct TABLE TABLE;                                                        \
    static const char *const TABLE##_names[] = {LIST(SY_LIBRARY_NAME, TABLE)}; \
    static void **const TABLE##_slots[] = {LIST(SY_LIBRARY_ADDRESS, TABLE)};   \
    static sy_library TABLE##_library = {                                      \
        .soname = SONAME,                                                      \
        .package = PACKAGE,                                                    \
        .names = TABLE##_names,                                                \
        .slots = TABLE##_slots,                                                \
        .count = sizeof TABLE##_names / sizeof TABLE##_names[0],               \
    };                                                                         \
    int LOAD(char *err, size_t err_len)                                        \
    {                                                                          \
        return sy_library_load(&TABLE##_library, err, err_len);                \
    }

#endif
