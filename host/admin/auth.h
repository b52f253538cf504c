/*
 * admin/auth.h -- who may do what: the bearer token read from
 * admin.token_file, compared in constant time, and whether the listener
 * is local (reads open).  No function here logs or returns the token.
 * Pure but for reading the file; any thread.
 */
#ifndef SY_ADMIN_AUTH_H
#define SY_ADMIN_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/* Reads the token from `path`: a regular file of this user's, no access
 * for group or others (0600 or 0400), holding 16 to 4096 printable bytes
 * (surrounding white space dropped).  *token malloc'd; SY_OK, or an error
 * with one line in err naming the file (never its content). */
int sy_admin_token_load(const char *path, char **token, char *err, size_t err_len);

/* Whether an Authorization header value is "Bearer TOKEN" with `token`:
 * compared as SHA-256 digests with CRYPTO_memcmp, so neither the time
 * taken nor an early exit tells how much of it matched, or its length. */
bool sy_admin_bearer_ok(const char *header, const char *token);

/* Whether a listen address ("HOST:PORT", "unix:PATH") is reachable from
 * this machine only: a Unix socket, 127.0.0.0/8, ::1, localhost. */
bool sy_admin_listen_local(const char *listen);

#endif
