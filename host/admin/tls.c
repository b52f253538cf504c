/* TLS on the admin listener: the certificate chain and key read into
 * memory for libmicrohttpd (GnuTLS), the key held to the token's rules. */
#include "admin/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <openssl/crypto.h>

#include <switchyard/executor.h>

#include "base/util.h"

#define PEM_MAX (1 << 20)

/* The whole file, NUL-terminated, into *out; a key must be this user's
 * and closed to others.  0, or -1 with one line naming the key. */
static int read_pem(const char *key_name, const char *path, bool secret, char **out, char *err,
                    size_t err_len)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size <= 0 || st.st_size > PEM_MAX)
        why = "empty, or over 1 MiB: not a PEM file";
    else if (secret && st.st_uid != geteuid())
        why = "owned by another user than this one";
    else if (secret && (st.st_mode & 077))
        why = "others may read it (chmod 600)";
    char *buf = why ? NULL : malloc((size_t)st.st_size + 1);
    size_t n = 0;
    if (!why && !buf)
        why = "out of memory";
    ssize_t r = 0;
    while (!why && n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
        n += (size_t)r;
    if (!why && r < 0)
        why = strerror(errno);
    if (fd >= 0)
        close(fd);
    if (!why && !strstr(buf ? (buf[n] = '\0', buf) : "", "-----BEGIN "))
        why = "no PEM block (-----BEGIN ...) in it";
    if (why) {
        if (buf)
            OPENSSL_cleanse(buf, n);
        free(buf);
        return sy_errf(err, err_len, "admin.%s %s: %s", key_name, path, why), -1;
    }
    *out = buf;
    return 0;
}

int sy_admin_tls_load(sy_admin *a, char *err, size_t err_len)
{
    if (!a->cfg->tls_cert)
        return 0;
    if (read_pem("tls_cert", a->cfg->tls_cert, false, &a->tls_cert, err, err_len) != 0 ||
        read_pem("tls_key", a->cfg->tls_key, true, &a->tls_key, err, err_len) != 0 ||
        (a->cfg->tls_client_ca && read_pem("tls_client_ca", a->cfg->tls_client_ca, false,
                                           &a->tls_trust, err, err_len) != 0))
        return -1;
    return 0;
}

bool sy_admin_tls_client_ok(const sy_admin *a, struct MHD_Connection *c)
{
    if (!a->tls_trust)
        return true;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!info || !info->tls_session)
        return false;
    /* libmicrohttpd asked for a certificate and holds admin.tls_client_ca
     * as its trust: the peer's chain is verified against it here. */
    unsigned status = 0;
    gnutls_session_t s = (gnutls_session_t)info->tls_session;
    return gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0;
}

void sy_admin_tls_free(sy_admin *a)
{
    if (a->tls_key)
        OPENSSL_cleanse(a->tls_key, strlen(a->tls_key));
    free(a->tls_key);
    free(a->tls_cert);
    free(a->tls_trust);
    a->tls_key = a->tls_cert = a->tls_trust = NULL;
}
