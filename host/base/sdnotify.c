/* sd_notify(3)'s datagram protocol, without libsystemd (sdnotify.h says
 * why). */
#include "base/sdnotify.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

static struct sockaddr_un addr;
static socklen_t addr_len;
static int fd = -1;
static bool enabled, failed_logged;
static uint64_t watchdog_usec;

int sy_sd_address(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
    size_t n = path ? strlen(path) : 0;
    if (n < 2 || (path[0] != '/' && path[0] != '@') || n >= sizeof sa->sun_path)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path, path, n);
    if (path[0] == '@') {
        /* An abstract name is the bytes after the NUL, exactly: no
         * terminator counts in its length. */
        sa->sun_path[0] = '\0';
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
    return 0;
}

uint64_t sy_sd_parse_watchdog(const char *usec, const char *pid, long self)
{
    uint64_t us = 0, p = 0;
    if (!sy_parse_digits(usec, &us) || us == 0)
        return 0;
    if (pid && (!sy_parse_digits(pid, &p) || p != (uint64_t)self))
        return 0;
    return us;
}

void sy_sd_init(void)
{
    const char *sock = getenv("NOTIFY_SOCKET");
    watchdog_usec = sy_sd_parse_watchdog(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"),
                                         (long)getpid());
    if (sock && sy_sd_address(sock, &addr, &addr_len) == 0) {
        enabled = true;
    } else if (sock) {
        sy_log(SY_LOG_WARN, "systemd", "NOTIFY_SOCKET=\"%s\" is not an absolute path nor "
                                       "an @abstract name; the service manager is not told "
                                       "anything", sock);
    }
    if (!enabled)
        watchdog_usec = 0;
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
}

bool sy_sd_enabled(void) { return enabled; }

uint64_t sy_sd_watchdog_usec(void) { return watchdog_usec; }

uint64_t sy_sd_monotonic_usec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int sy_sd_notify(const char *state)
{
    if (!enabled)
        return 0;
    if (fd < 0)
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ssize_t n = fd < 0 ? -1
                       : sendto(fd, state, strlen(state), MSG_NOSIGNAL,
                                (const struct sockaddr *)&addr, addr_len);
    if (n >= 0)
        return 1;
    int saved = errno;
    if (!failed_logged) {
        failed_logged = true;
        sy_log(SY_LOG_WARN, "systemd", "cannot notify the service manager: %s",
               strerror(saved));
    }
    errno = saved;
    return -1;
}

int sy_sd_notifyf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return sy_sd_notify(buf);
}
