/*
 * sdnotify.h -- the service manager's notification protocol (sd_notify(3)):
 * one datagram of "KEY=VALUE" lines to the Unix socket NOTIFY_SOCKET names
 * (a path, or "@name" for an abstract socket), and the watchdog systemd
 * asks for with WATCHDOG_USEC (for the process WATCHDOG_PID names, when
 * set).
 *
 * Written here rather than linked from libsystemd: the protocol is a
 * stable, documented interface (sd_notify(3) gives a reference
 * implementation of the same size), the host needs only this one call, and
 * a build without libsystemd-dev behaves the same as one with it.
 *
 * sy_sd_init runs once, while the process has one thread; the others are
 * for the loop thread.  Without NOTIFY_SOCKET every call is a no-op.
 */
#ifndef SY_SDNOTIFY_H
#define SY_SDNOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID and removes them from
 * the environment: the processes tasks start must not speak for the host.
 * A socket address that cannot be used is logged once (warn). */
void sy_sd_init(void);

/* Whether a service manager listens (NOTIFY_SOCKET was usable). */
bool sy_sd_enabled(void);

/* Sends `state` ("READY=1\nSTATUS=..."): 1 sent, 0 nobody listens, -1 the
 * send failed (errno; logged once, for a manager that went away must not
 * fill the log). */
int sy_sd_notify(const char *state);
int sy_sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The watchdog interval systemd asked of this process, in microseconds; 0
 * when none (no WATCHDOG_USEC, or WATCHDOG_PID names another process). */
uint64_t sy_sd_watchdog_usec(void);

/* CLOCK_MONOTONIC in microseconds, as MONOTONIC_USEC= wants it. */
uint64_t sy_sd_monotonic_usec(void);

/* Pure parts, for tests. */

/* The address NOTIFY_SOCKET `path` names: an absolute path, or "@name"
 * (the '@' becomes the leading NUL of an abstract address).  0, or -1 when
 * it is empty, relative, another family ("vsock:...") or too long. */
int sy_sd_address(const char *path, struct sockaddr_un *sa, socklen_t *len);

/* WATCHDOG_USEC `usec` and WATCHDOG_PID `pid` (either may be NULL) as seen
 * by process `self`: the interval, or 0 when there is none for it (unset,
 * not a positive number, or another pid). */
uint64_t sy_sd_parse_watchdog(const char *usec, const char *pid, long self);

#endif
