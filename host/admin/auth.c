/* The bearer token and the local listener check. */
#include "admin/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <switchyard/executor.h>

#include "base/util.h"
#include "config/admin.h"


#define TOKEN_MAX 4096

int sy_admin_token_load(const char *path, char **token, char *err, size_t err_len)
{
    *token = NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        sy_errf(err, err_len, "admin.token_file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sy_errf(err, err_len, "admin.token_file %s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        sy_errf(err, err_len, "admin.token_file %s: owned by uid %u, not by this user (uid %u)",
                path, (unsigned)st.st_uid, (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        sy_errf(err, err_len, "admin.token_file %s: mode %04o lets others read it; "
                "chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
        close(fd);
        return -1;
    }
    char buf[TOKEN_MAX + 2];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    buf[n] = '\0';
    char *b = buf;
    while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')
        b++;
    size_t len = strlen(b);
    while (len && (b[len - 1] == ' ' || b[len - 1] == '\t' || b[len - 1] == '\n' ||
                   b[len - 1] == '\r'))
        len--;
    b[len] = '\0';
    bool printable = true;
    for (size_t i = 0; i < len; i++)
        printable &= b[i] > ' ' && b[i] < 127;
    if (len < 16 || len > TOKEN_MAX || !printable || strlen(b) != len) {
        explicit_bzero(buf, sizeof buf);
        sy_errf(err, err_len, "admin.token_file %s: the token must be 16 to %d printable "
                "characters without spaces", path, TOKEN_MAX);
        return -1;
    }
    *token = sy_xstrdup(b);
    explicit_bzero(buf, sizeof buf);
    return SY_OK;
}

bool sy_admin_bearer_ok(const char *header, const char *token)
{
    if (!header || !token || strncasecmp(header, "Bearer ", 7) != 0)
        return false;
    const char *given = header + 7;
    while (*given == ' ')
        given++;
    unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)given, strlen(given), a);
    SHA256((const unsigned char *)token, strlen(token), b);
    bool same = CRYPTO_memcmp(a, b, sizeof a) == 0;
    OPENSSL_cleanse(a, sizeof a);
    OPENSSL_cleanse(b, sizeof b);
    return same;
}

bool sy_admin_listen_local(const char *listen)
{
    if (strncmp(listen, "unix:", 5) == 0)
        return true;
    char host[256];
    int port;
    if (!sy_config_admin_split(listen, host, sizeof host, &port))
        return false;
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strcmp(host, "localhost") == 0;
}
