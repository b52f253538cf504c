/*
 * spawn_io.c -- the child's three pipes while it runs (switchyard/spawn.h):
 * feeding stdin, capturing stdout up to its limit, keeping the tail of
 * stderr, and the SIGTERM-then-SIGKILL that ends the group.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spawn_internal.h"

int64_t sy_spawn__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sy_spawn__signal_group(sy_spawn__run *s, int sig)
{
    kill(-s->pid, sig);
}

/* SIGTERM now, SIGKILL at kill_at; stdin is no longer fed. */
void sy_spawn__terminate(sy_spawn__run *s)
{
    if (s->terminating)
        return;
    s->terminating = true;
    sy_spawn__close(&s->in_fd);
    int64_t grace = s->o->kill_grace_ms > 0 ? s->o->kill_grace_ms : 0;
    if (grace == 0) {
        sy_spawn__signal_group(s, SIGKILL);
        s->killed = true;
        return;
    }
    sy_spawn__signal_group(s, SIGTERM);
    s->kill_at = sy_spawn__now_ms() + grace;
}

void sy_spawn__feed(sy_spawn__run *s)
{
    const sy_spawn_opts *o = s->o;
    while (s->in_fd >= 0 && s->in_off < o->input_len) {
        size_t chunk = o->input_len - s->in_off;
        if (chunk > 65536)
            chunk = 65536;
        ssize_t n = write(s->in_fd, o->input + s->in_off, chunk);
        if (n > 0) {
            s->in_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        /* EPIPE: the child does not want the rest. */
        sy_spawn__close(&s->in_fd);
    }
    sy_spawn__close(&s->in_fd);
}

/* Grows the stdout buffer toward max_out + 1 (one byte past the limit is
 * how an overflow is seen).  False when out of memory. */
bool sy_spawn__grow_out(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    if (r->out_len + 1 < s->out_cap)
        return true;
    size_t cap = s->out_cap ? s->out_cap * 2 : 4096;
    if (cap > s->max_out + 2)
        cap = s->max_out + 2;
    char *p = realloc(r->out, cap);
    if (!p)
        return false;
    r->out = p;
    s->out_cap = cap;
    return true;
}

/* Reads what follows the kept head of a stdout that is a log, counting
 * it (stdout_as_log). */
static void sy_spawn__skip_out(sy_spawn__run *s)
{
    char scratch[16384];
    while (s->out_fd >= 0) {
        ssize_t n = read(s->out_fd, scratch, sizeof scratch);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            sy_spawn__close(&s->out_fd);
            return;
        }
        s->r->out_dropped += (size_t)n;
    }
}

void sy_spawn__read_out(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    if (s->o->stdout_as_log && r->out_len >= s->max_out) {
        sy_spawn__skip_out(s);
        return;
    }
    while (s->out_fd >= 0) {
        if (!sy_spawn__grow_out(s)) {
            s->oom = true;
            sy_spawn__close(&s->out_fd);
            sy_spawn__terminate(s);
            return;
        }
        ssize_t n =
            read(s->out_fd, r->out + r->out_len, s->out_cap - 1 - r->out_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            sy_spawn__close(&s->out_fd);
            return;
        }
        r->out_len += (size_t)n;
        if (r->out_len > s->max_out && s->o->stdout_as_log) {
            r->out_dropped += r->out_len - s->max_out;
            r->out_len = s->max_out;
            sy_spawn__skip_out(s);
            return;
        }
        if (r->out_len > s->max_out) {
            r->out_len = s->max_out;
            r->output_too_large = true;
            /* Closing our end makes a writer get EPIPE at once, even one
             * that ignores SIGTERM. */
            sy_spawn__close(&s->out_fd);
            sy_spawn__terminate(s);
            return;
        }
    }
}

/* Appends to the stderr ring, dropping the oldest bytes when full. */
static void sy_spawn__ring_put(sy_spawn__run *s, const char *p, size_t n)
{
    const size_t cap = SY_SPAWN_STDERR_TAIL;
    /* Most programs write nothing on stderr: the ring is made on demand. */
    if (!s->ring && n > 0 && !(s->ring = malloc(cap))) {
        s->oom = true;
        return;
    }
    /* The ring is about to drop its first bytes: the start of stderr is
     * kept aside first, once: what the ring holds, then what comes. */
    if (!s->head && s->ring_len + n > cap) {
        if (!(s->head = malloc(SY_SPAWN_STDERR_HEAD))) {
            s->oom = true;
            return;
        }
        size_t from_ring = s->ring_len < SY_SPAWN_STDERR_HEAD ? s->ring_len
                                                              : SY_SPAWN_STDERR_HEAD;
        for (size_t i = 0; i < from_ring; i++)
            s->head[i] = s->ring[(s->ring_start + i) % cap];
        size_t more = SY_SPAWN_STDERR_HEAD - from_ring < n ? SY_SPAWN_STDERR_HEAD - from_ring
                                                           : n;
        memcpy(s->head + from_ring, p, more);
        s->head_len = from_ring + more;
    }
    while (n > 0) {
        size_t end = (s->ring_start + s->ring_len) % cap;
        size_t chunk = cap - end < n ? cap - end : n;
        memcpy(s->ring + end, p, chunk);
        p += chunk;
        n -= chunk;
        s->ring_len += chunk;
        if (s->ring_len > cap) {
            size_t over = s->ring_len - cap;
            s->ring_start = (s->ring_start + over) % cap;
            s->ring_len = cap;
            s->r->err_dropped += over;
        }
    }
}

void sy_spawn__read_err(sy_spawn__run *s)
{
    char buf[16384];
    while (s->err_fd >= 0) {
        ssize_t n = read(s->err_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            sy_spawn__close(&s->err_fd);
            return;
        }
        sy_spawn__ring_put(s, buf, (size_t)n);
    }
}

bool sy_spawn__collect_err(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    r->err = malloc(s->ring_len + 1);
    if (!r->err)
        return false;
    for (size_t i = 0; i < s->ring_len; i++)
        r->err[i] = s->ring[(s->ring_start + i) % SY_SPAWN_STDERR_TAIL];
    r->err[s->ring_len] = '\0';
    r->err_len = s->ring_len;
    if (s->head && r->err_dropped) {
        /* Only what is not in the tail: a short overflow shares bytes. */
        size_t n = s->head_len < r->err_dropped ? s->head_len : r->err_dropped;
        if (!(r->err_head = malloc(n + 1)))
            return false;
        memcpy(r->err_head, s->head, n);
        r->err_head[n] = '\0';
        r->err_head_len = n;
    }
    return true;
}
