/*
 * admin/tokens.h -- roles, and the tokens that carry them: a file of
 * lines "NAME ROLE SHA256-HEX" (admin.tokens_file), so the host holds
 * digests, never a token in clear.  `switchyard token new` makes one.
 *
 * A role is what a token may do: `read` every GET (logs and streams
 * included), `operate` also submit, cancel and retry, `admin` also
 * reload.  Every route names the role it needs (admin/routes.c).
 *
 * Pure but for the file; any thread.  No function here logs or returns a
 * token once made.
 */
#ifndef SY_ADMIN_TOKENS_H
#define SY_ADMIN_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

/* Ordered: a role may do what every lower one may.  SY_ROLE_UNSET is no
 * role (a route without one is a bug the route test finds). */
typedef enum sy_admin_role {
    SY_ROLE_UNSET = 0,
    SY_ROLE_OPEN,    /* installed files: no token on any listener */
    SY_ROLE_READ,    /* GETs: no token on a loopback or Unix listener */
    SY_ROLE_OPERATE, /* submit, cancel, retry */
    SY_ROLE_ADMIN,   /* reload */
} sy_admin_role;

#define SY_ADMIN_TOKEN_NAME_MAX 64
#define SY_ADMIN_DIGEST_LEN 32

typedef struct sy_admin_token {
    char name[SY_ADMIN_TOKEN_NAME_MAX]; /* [A-Za-z0-9._-], 1 to 63 */
    sy_admin_role role;                 /* read, operate or admin */
    unsigned char digest[SY_ADMIN_DIGEST_LEN]; /* SHA-256 of the token */
} sy_admin_token;

typedef struct sy_admin_tokens {
    sy_admin_token *v; /* owned */
    size_t n;
} sy_admin_tokens;

/* "read", "operate", "admin" ("open", "none" for the others). */
const char *sy_admin_role_name(sy_admin_role r);

/* A role a token may have from its name; false for any other word. */
bool sy_admin_role_parse(const char *s, sy_admin_role *out);

/* Reads `path`: a regular file of this user's without access for group
 * or others; blank lines and '#' comments skipped.  0, or -1 with
 * "PATH:LINE: reason" in err (never a digest). */
int sy_admin_tokens_load(const char *path, sy_admin_tokens *t, char *err, size_t err_len);

/* The lines of a tokens file, `len` bytes of `text` (any bytes: a NUL
 * or an overlong line is an error), as sy_admin_tokens_load reads them;
 * `path` names it in err.  Pure: what the fuzz target drives
 * (tests/fuzz/tokens.c). */
int sy_admin_tokens_parse(const char *text, size_t len, const char *path, sy_admin_tokens *t,
                          char *err, size_t err_len);

/* A tokens file is read whole; a bigger one is refused. */
#define SY_ADMIN_TOKENS_FILE_MAX (1 << 20)

/* Adds the token `token` (clear text) as `name` with `role` in memory
 * (admin.token_file's one token: name "token_file", role admin). */
void sy_admin_tokens_add_clear(sy_admin_tokens *t, const char *name, sy_admin_role role,
                               const char *token);

/* The entry an Authorization header's "Bearer TOKEN" is, or NULL.  Every
 * entry's digest is compared (CRYPTO_memcmp), found or not, so the time
 * says nothing of which matched. */
const sy_admin_token *sy_admin_tokens_match(const sy_admin_tokens *t, const char *header);

/* Makes a token (32 random bytes, hex), appends "NAME ROLE DIGEST" to
 * `path` (created 0600), and writes the token into `token` (at least 65
 * bytes).  Refuses a name already there or malformed.  0 or -1 with err. */
int sy_admin_tokens_new(const char *path, const char *name, sy_admin_role role, char *token,
                        size_t token_len, char *err, size_t err_len);

void sy_admin_tokens_free(sy_admin_tokens *t);

#endif
