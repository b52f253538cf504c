/* Length-framed JSON messages over a socket. */
#include "executor/wire.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 1 read, 0 clean end before any byte, -1 error or end mid-way. */
static int read_all(int fd, char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

int sy_wire_send(int fd, const json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    size_t len = strlen(text);
    if (len > SY_WIRE_MAX) {
        free(text);
        errno = EMSGSIZE;
        return -1;
    }
    unsigned char head[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
                             (unsigned char)(len >> 8), (unsigned char)len};
    int rc = write_all(fd, (const char *)head, sizeof head) == 0 && write_all(fd, text, len) == 0
                 ? 0
                 : -1;
    free(text);
    return rc;
}

json_t *sy_wire_recv(int fd, char *err, size_t err_len)
{
    if (err_len)
        err[0] = '\0';
    unsigned char head[4];
    int r = read_all(fd, (char *)head, sizeof head);
    if (r == 0)
        return NULL;
    if (r < 0) {
        snprintf(err, err_len, "reading a frame: %s", errno ? strerror(errno) : "cut short");
        return NULL;
    }
    size_t len = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
    if (len == 0 || len > SY_WIRE_MAX) {
        snprintf(err, err_len, "a frame of %zu bytes", len);
        return NULL;
    }
    char *buf = malloc(len);
    if (!buf) {
        snprintf(err, err_len, "out of memory for a frame of %zu bytes", len);
        return NULL;
    }
    if (read_all(fd, buf, len) != 1) {
        snprintf(err, err_len, "a frame cut short");
        free(buf);
        return NULL;
    }
    json_error_t jerr;
    json_t *msg = json_loadb(buf, len, 0, &jerr);
    free(buf);
    if (!json_is_object(msg)) {
        snprintf(err, err_len, "a frame that is not a JSON object: %s", msg ? "" : jerr.text);
        json_decref(msg);
        return NULL;
    }
    return msg;
}
