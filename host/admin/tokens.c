/* Roles and the tokens file: digests only, compared in constant time. */
#include "admin/tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <switchyard/executor.h>

#include "base/util.h"

#define LINE_MAX_LEN 512

static const char *const role_names[] = {"none", "open", "read", "operate", "admin"};

const char *sy_admin_role_name(sy_admin_role r)
{
    return (unsigned)r < sizeof role_names / sizeof role_names[0] ? role_names[r] : "none";
}

bool sy_admin_role_parse(const char *s, sy_admin_role *out)
{
    for (sy_admin_role r = SY_ROLE_READ; r <= SY_ROLE_ADMIN; r++)
        if (s && strcmp(s, role_names[r]) == 0) {
            *out = r;
            return true;
        }
    return false;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SY_ADMIN_TOKEN_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static void push(sy_admin_tokens *t, const sy_admin_token *k)
{
    sy_admin_token *v = realloc(t->v, (t->n + 1) * sizeof *v);
    if (!v)
        sy_oom("reading the admin tokens");
    t->v = v;
    t->v[t->n++] = *k;
}

/* One line "NAME ROLE HEX"; NULL when good, else why. */
static const char *parse_line(char *line, const sy_admin_tokens *t, sy_admin_token *k)
{
    char *save = NULL;
    char *name = strtok_r(line, " \t", &save);
    char *role = strtok_r(NULL, " \t", &save);
    char *hex = strtok_r(NULL, " \t", &save);
    if (!name || !role || !hex || strtok_r(NULL, " \t", &save))
        return "expected NAME ROLE SHA256-HEX";
    if (!name_ok(name))
        return "a name is 1 to 63 of A-Z a-z 0-9 . _ -";
    if (!sy_admin_role_parse(role, &k->role))
        return "the role must be read, operate or admin";
    if (strlen(hex) != 2 * SY_ADMIN_DIGEST_LEN)
        return "the digest must be 64 lowercase hex digits (SHA-256)";
    for (size_t i = 0; i < SY_ADMIN_DIGEST_LEN; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return "the digest must be 64 lowercase hex digits (SHA-256)";
        k->digest[i] = (unsigned char)(hi << 4 | lo);
    }
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0)
            return "a name given twice";
    snprintf(k->name, sizeof k->name, "%s", name);
    return NULL;
}

int sy_admin_tokens_parse(const char *text, size_t len, const char *path, sy_admin_tokens *t,
                          char *err, size_t err_len)
{
    memset(t, 0, sizeof *t);
    int no = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        no++;
        const char *why = NULL;
        char line[LINE_MAX_LEN];
        if (n >= sizeof line)
            why = "line too long";
        else if (memchr(text + at, '\0', n))
            why = "a NUL byte in the line";
        if (!why) {
            memcpy(line, text + at, n);
            line[n] = '\0';
            line[strcspn(line, "\r")] = '\0';
            char *p = line + strspn(line, " \t");
            sy_admin_token k;
            if (*p && *p != '#' && (why = parse_line(p, t, &k)) == NULL)
                push(t, &k);
            explicit_bzero(line, sizeof line);
        }
        if (why) {
            sy_admin_tokens_free(t);
            return sy_errf(err, err_len, "%s:%d: %s", path, no, why), -1;
        }
        at += n + 1;
    }
    return 0;
}

int sy_admin_tokens_load(const char *path, sy_admin_tokens *t, char *err, size_t err_len)
{
    memset(t, 0, sizeof *t);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return sy_errf(err, err_len, "admin.tokens_file %s: %s", path, strerror(errno)), -1;
    const char *why = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_uid != geteuid())
        why = "owned by another user than this one";
    else if (st.st_mode & 077)
        why = "others may read it (chmod 600)";
    else if (st.st_size > SY_ADMIN_TOKENS_FILE_MAX)
        why = "over 1 MiB: not a tokens file";
    char *text = why ? NULL : malloc((size_t)st.st_size + 1);
    size_t len = 0;
    ssize_t r = 0;
    while (text && len < (size_t)st.st_size &&
           (r = read(fd, text + len, (size_t)st.st_size - len)) > 0)
        len += (size_t)r;
    int e = errno;
    close(fd);
    if (!why && (!text || r < 0))
        why = text ? strerror(e) : "out of memory";
    if (why) {
        free(text);
        return sy_errf(err, err_len, "admin.tokens_file %s: %s", path, why), -1;
    }
    int rc = sy_admin_tokens_parse(text, len, path, t, err, err_len);
    explicit_bzero(text, len);
    free(text);
    return rc;
}

void sy_admin_tokens_add_clear(sy_admin_tokens *t, const char *name, sy_admin_role role,
                               const char *token)
{
    sy_admin_token k = {.role = role};
    snprintf(k.name, sizeof k.name, "%s", name);
    SHA256((const unsigned char *)token, strlen(token), k.digest);
    push(t, &k);
}

const sy_admin_token *sy_admin_tokens_match(const sy_admin_tokens *t, const char *header)
{
    if (!header || strncasecmp(header, "Bearer ", 7) != 0)
        return NULL;
    const char *given = header + 7;
    while (*given == ' ')
        given++;
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)given, strlen(given), d);
    const sy_admin_token *found = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (CRYPTO_memcmp(d, t->v[i].digest, sizeof d) == 0 && !found)
            found = &t->v[i];
    OPENSSL_cleanse(d, sizeof d);
    return found;
}

int sy_admin_tokens_new(const char *path, const char *name, sy_admin_role role, char *token,
                        size_t token_len, char *err, size_t err_len)
{
    if (!name_ok(name))
        return sy_errf(err, err_len, "--name %s: 1 to 63 of A-Z a-z 0-9 . _ -", name), -1;
    if (role < SY_ROLE_READ || role > SY_ROLE_ADMIN || token_len < 65)
        return sy_errf(err, err_len, "--role: read, operate or admin"), -1;
    sy_admin_tokens have;
    if (access(path, F_OK) == 0) {
        if (sy_admin_tokens_load(path, &have, err, err_len) != 0)
            return -1;
        for (size_t i = 0; i < have.n; i++)
            if (strcmp(have.v[i].name, name) == 0) {
                sy_admin_tokens_free(&have);
                return sy_errf(err, err_len, "%s: a token named '%s' is there already", path,
                               name), -1;
            }
        sy_admin_tokens_free(&have);
    }
    unsigned char raw[32], d[SHA256_DIGEST_LENGTH];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return sy_errf(err, err_len, "no random bytes from libcrypto"), -1;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(token + 2 * i, 3, "%02x", raw[i]);
    OPENSSL_cleanse(raw, sizeof raw);
    SHA256((const unsigned char *)token, strlen(token), d);
    char line[LINE_MAX_LEN];
    int n = snprintf(line, sizeof line, "%s %s ", name, sy_admin_role_name(role));
    for (size_t i = 0; i < sizeof d; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%02x", d[i]);
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, line, (size_t)n) == n;
    int e = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (!ok) {
        OPENSSL_cleanse(token, token_len);
        return sy_errf(err, err_len, "%s: %s", path, strerror(e)), -1;
    }
    return 0;
}

void sy_admin_tokens_free(sy_admin_tokens *t)
{
    if (t->v)
        OPENSSL_cleanse(t->v, t->n * sizeof *t->v);
    free(t->v);
    t->v = NULL;
    t->n = 0;
}
