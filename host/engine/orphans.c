/* Killing the process groups a dead host's attempts left running
 * (engine/orphans.h). */
#include "engine/orphans.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/process.h>

#include "base/log.h"

/* SIGKILL to `pid` only while it is still the process whose stat said
 * `start`: with a pidfd taken before the check, a pid reused between the
 * check and the signal is not hit.  True when it was signalled. */
static bool kill_verified(int64_t pid, uint64_t start)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd >= 0) {
        sy_process_stat st;
        bool same = sy_process_stat_read(pid, &st) == 0 && st.start_time == start;
        bool sent = same && syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0;
        close(fd);
        return sent;
    }
    if (errno != ENOSYS)
        return false; /* gone already */
#endif
    sy_process_stat st;
    return sy_process_stat_read(pid, &st) == 0 && st.start_time == start &&
           kill((pid_t)pid, SIGKILL) == 0;
}

/* One pass over /proc: the live processes of group `pgid` started at or
 * after `start` (zombies do no more work and are not counted), each sent
 * SIGKILL when `kill_them`.  Returns how many there were. */
static size_t scan_group(int64_t pgid, uint64_t start, bool kill_them, size_t *killed)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long long pid = strtoll(de->d_name, &end, 10);
        if (*end || pid <= 1)
            continue;
        sy_process_stat st;
        if (sy_process_stat_read(pid, &st) != 0 || st.pgrp != pgid ||
            st.start_time < start || st.state == 'Z' || st.state == 'X')
            continue;
        n++;
        if (kill_them && kill_verified(pid, st.start_time) && killed)
            (*killed)++;
    }
    closedir(d);
    return n;
}

size_t sy_orphans_kill_group(int64_t pgid, uint64_t start_time, int64_t wait_ms,
                             size_t *killed)
{
    if (killed)
        *killed = 0;
    if (pgid <= 1 || start_time == 0)
        return 0;
    /* The leader, when it is still the recorded one, names the group for
     * sure: the whole group at once, members forked after our scan too. */
    sy_process_stat lead;
    if (sy_process_stat_read(pgid, &lead) == 0) {
        /* Linux gives no new process a pid still used as a group's id, so
         * a live process with that pid and another start time means the
         * recorded group had ended entirely before: nothing of it is left,
         * and the pid is a stranger's. */
        if (lead.start_time != start_time)
            return 0;
        if (lead.pgrp == pgid && kill_verified(pgid, start_time)) {
            kill(-(pid_t)pgid, SIGKILL);
            if (killed)
                (*killed)++;
        }
    }
    /* Without its leader the group is still the recorded one while any
     * member lives (for the same reason), and every member started after
     * the leader did. */
    size_t left = scan_group(pgid, start_time, true, killed);
    struct timespec tick = {0, 5 * 1000 * 1000};
    for (int64_t waited = 0; left && waited < wait_ms; waited += 5) {
        nanosleep(&tick, NULL);
        left = scan_group(pgid, start_time, true, killed);
    }
    return left;
}

typedef struct {
    sy_engine *e;
    sy_live_run *r;
    const bool *running;
    int64_t wait_ms;
    size_t killed;
} reap_ctx;

static int on_record(void *arg, const sy_process_record *p)
{
    reap_ctx *c = arg;
    sy_engine *e = c->e;
    sy_live_run *r = c->r;
    if (p->idx >= r->wf->n_tasks || !c->running[p->idx] || p->attempt != r->t[p->idx].attempts)
        return 0; /* not an attempt found Running: its group ended with it */
    const char *ns = r->wf->tasks[p->idx].ns;
    bool here = p->machine && e->machine_id[0] && strcmp(p->machine, e->machine_id) == 0;
    if (!here) {
        sy_log(SY_LOG_WARN, "engine",
               "run %lld: task %s attempt %u ran process group %lld on machine %s, not "
               "this one: it cannot be stopped from here; retrying anyway",
               (long long)r->id, ns, p->attempt, (long long)p->pgid,
               p->machine ? p->machine : "(unknown)");
        return 0;
    }
    if (!p->boot_id || strcmp(p->boot_id, e->boot_id) != 0)
        return 0; /* recorded before a reboot, which ended it */
    size_t killed = 0;
    size_t left = sy_orphans_kill_group(p->pgid, p->start_time, c->wait_ms, &killed);
    c->killed += killed;
    if (killed)
        sy_log(SY_LOG_WARN, "engine",
               "run %lld: task %s attempt %u: killed %zu process%s of group %lld left "
               "running by %s",
               (long long)r->id, ns, p->attempt, killed, killed == 1 ? "" : "es",
               (long long)p->pgid, p->host ? p->host : "its host");
    if (left)
        sy_log(SY_LOG_ERROR, "engine",
               "run %lld: task %s attempt %u: %zu process%s of group %lld still alive "
               "%lld ms after SIGKILL (uninterruptible?); retrying anyway",
               (long long)r->id, ns, p->attempt, left, left == 1 ? "" : "es",
               (long long)p->pgid, (long long)c->wait_ms);
    return 0;
}

size_t sy_orphans_kill(sy_engine *e, sy_live_run *r, const bool *running, int64_t wait_ms)
{
    reap_ctx c = {e, r, running, wait_ms, 0};
    if (sy_store_list_processes(e->o.store, r->id, on_record, &c) != SY_OK)
        sy_log(SY_LOG_ERROR, "store", "run %lld: cannot list its process groups: %s",
               (long long)r->id, sy_store_errmsg(e->o.store));
    return c.killed;
}
