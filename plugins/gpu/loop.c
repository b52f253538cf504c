/* The gpu instance's own thread: every health_interval (and at once when
 * a submit, a completion or a cancel kicks it) it reads NVML's health
 * events without waiting, reads what the operator appended to the control
 * file, drains and resumes devices, starts what the scheduler places, and
 * joins the threads of finished jobs.  Nothing here runs on the host's
 * dispatch path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/sdk.h>

#include "gpu.h"

#define MAX_EVENTS_PER_TICK 64
#define CTL_CHUNK 8192


void sy_gpu_drain(sy_instance *inst, int d, bool manual, const char *why)
{
    const sy_nvml_dev_info *info = sy_nvml_dev(inst->nvml, (size_t)d);
    sy_gpu_dev *g = &inst->gdev[d];
    bool was = inst->sched.dev[d].drained;
    inst->sched.dev[d].drained = true;
    if (manual)
        g->manual = true;
    else
        g->broken = true;
    if (!was)
        g->drained_at = (int64_t)time(NULL);
    inst->api->log(inst->host, manual ? SY_LOG_INFO : SY_LOG_ERROR,
                   "%s %s (index %u, %s) drained: %s",
                   info->mig_instance >= 0 ? "MIG device" : "GPU", info->uuid,
                   info->index, info->name, why);
    if (manual)
        return;   /* the operator's drain lets running tasks finish */
    for (size_t i = 0; i < inst->sched.nr; i++) {
        sy_gpu_job *job = inst->sched.run[i]->owner;
        for (int k = 0; k < job->gs.ndevs; k++)
            if (job->gs.devs[k] == d && !job->deferring && !job->done) {
                job->deferring = true;
                snprintf(job->note, sizeof job->note, "%s", why);
                sy_gpu_job_interrupt(job);
                inst->api->log(inst->host, SY_LOG_WARN, "%s (attempt %u): "
                               "stopped and requeued without charge: %s",
                               job->task->ns ? job->task->ns : "?",
                               job->task->attempt, why);
            }
    }
}

void sy_gpu_resume(sy_instance *inst, int d)
{
    const sy_nvml_dev_info *info = sy_nvml_dev(inst->nvml, (size_t)d);
    sy_gpu_dev *g = &inst->gdev[d];
    bool was = inst->sched.dev[d].drained;
    inst->sched.dev[d].drained = false;
    g->manual = g->broken = false;
    g->drained_at = 0;
    inst->kick = true;
    if (was)
        inst->api->log(inst->host, SY_LOG_INFO, "GPU %s (index %u) resumed",
                       info->uuid, info->index);
}

/* ------------------------------------------------------------------------ */
/* Health events                                                            */
/* ------------------------------------------------------------------------ */

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Drains every device on the GPU of device `d` (its MIG instances, or
 * the GPU itself). */
static void drain_gpu(sy_instance *inst, int d, uint64_t xid, bool dbe,
                      const char *why)
{
    unsigned gpu = sy_nvml_dev(inst->nvml, (size_t)d)->index;
    for (size_t i = 0; i < sy_nvml_count(inst->nvml); i++)
        if (sy_nvml_dev(inst->nvml, i)->index == gpu) {
            if (xid)
                inst->gdev[i].xid = xid;
            inst->gdev[i].dbe = inst->gdev[i].dbe || dbe;
            sy_gpu_drain(inst, (int)i, false, why);
        }
}

static void apply_event(sy_instance *inst, const sy_nvml_event *ev)
{
    if (ev->dev < 0)
        return;
    const sy_nvml_dev_info *info = sy_nvml_dev(inst->nvml, (size_t)ev->dev);
    char when[32], why[256];
    utc_now(when, sizeof when);
    if (ev->type & SY_NVML_EVENT_XID) {
        inst->xids++;
        if (sy_nvml_xid_is_app(ev->data)) {
            inst->api->log(inst->host, SY_LOG_INFO, "GPU %s: Xid %llu at %s "
                           "(the application's fault; the device stays in "
                           "service)", info->gpu_uuid,
                           (unsigned long long)ev->data, when);
            return;
        }
        snprintf(why, sizeof why, "GPU %s Xid %llu at %s", info->gpu_uuid,
                 (unsigned long long)ev->data, when);
        drain_gpu(inst, ev->dev, ev->data, false, why);
    } else if (ev->type & SY_NVML_EVENT_DBE) {
        inst->ecc_errors++;
        snprintf(why, sizeof why, "GPU %s double-bit ECC error at %s",
                 info->gpu_uuid, when);
        drain_gpu(inst, ev->dev, 0, true, why);
    }
}

/* Reads NVML's pending events (mu not held: NVML is not ours to lock
 * around), then applies them under mu. */
static void health(sy_instance *inst)
{
    sy_nvml_event ev[MAX_EVENTS_PER_TICK];
    int n = 0;
    while (n < MAX_EVENTS_PER_TICK && sy_nvml_poll(inst->nvml, &ev[n]) == 1)
        n++;
    if (!n)
        return;
    pthread_mutex_lock(&inst->mu);
    for (int i = 0; i < n; i++)
        apply_event(inst, &ev[i]);
    pthread_mutex_unlock(&inst->mu);
}

/* ------------------------------------------------------------------------ */
/* The control file                                                         */
/* ------------------------------------------------------------------------ */

/* One line: "drain UUID [reason...]" or "resume UUID" (mu held). */
static void control_line(sy_instance *inst, char *line)
{
    char *save = NULL;
    char *verb = strtok_r(line, " \t\r", &save);
    if (!verb || verb[0] == '#')
        return;
    char *uuid = strtok_r(NULL, " \t\r", &save);
    char *rest = strtok_r(NULL, "\r", &save);
    bool drain = strcmp(verb, "drain") == 0;
    if ((!drain && strcmp(verb, "resume") != 0) || !uuid) {
        inst->api->log(inst->host, SY_LOG_WARN, "%s:%ld: expected \"drain "
                       "UUID [reason]\" or \"resume UUID\"",
                       inst->control_file, inst->ctl_line);
        return;
    }
    char why[256];
    snprintf(why, sizeof why, "by the operator%s%s", rest ? ": " : "",
             rest ? rest : "");
    /* A device's UUID, or a GPU's: then all of its MIG instances. */
    int found = 0;
    for (size_t i = 0; i < sy_nvml_count(inst->nvml); i++) {
        const sy_nvml_dev_info *d = sy_nvml_dev(inst->nvml, i);
        if (strcmp(d->uuid, uuid) != 0 && strcmp(d->gpu_uuid, uuid) != 0)
            continue;
        found++;
        if (drain)
            sy_gpu_drain(inst, (int)i, true, why);
        else
            sy_gpu_resume(inst, (int)i);
    }
    if (!found)
        inst->api->log(inst->host, SY_LOG_WARN, "%s:%ld: no device %s in "
                       "this instance", inst->control_file, inst->ctl_line,
                       uuid);
}

/* Reads the whole lines appended since the last read.  A file replaced or
 * cut shorter is read again from its start. */
static void control(sy_instance *inst)
{
    struct stat st;
    if (!inst->control_file || stat(inst->control_file, &st) != 0)
        return;
    if (st.st_ino != inst->ctl_ino || st.st_size < inst->ctl_offset) {
        inst->ctl_ino = st.st_ino;
        inst->ctl_offset = 0;
        inst->ctl_line = 0;
    }
    if (st.st_size == inst->ctl_offset)
        return;
    int fd = open(inst->control_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[CTL_CHUNK + 1];
    ssize_t got;
    while ((got = pread(fd, buf, CTL_CHUNK, inst->ctl_offset)) > 0) {
        buf[got] = '\0';
        char *end = memchr(buf, '\n', (size_t)got), *start = buf;
        if (!end && got == CTL_CHUNK) {
            inst->ctl_offset += got;   /* an absurd line: skip it */
            continue;
        }
        if (!end)
            break;                     /* a line still being written */
        pthread_mutex_lock(&inst->mu);
        while (end) {
            *end = '\0';
            inst->ctl_line++;
            control_line(inst, start);
            inst->ctl_offset += end - start + 1;
            start = end + 1;
            end = memchr(start, '\n', (size_t)(buf + got - start));
        }
        pthread_mutex_unlock(&inst->mu);
    }
    close(fd);
}

/* ------------------------------------------------------------------------ */
/* Scheduling                                                               */
/* ------------------------------------------------------------------------ */

/* Starts every task the scheduler places now (mu held).  A job whose
 * thread cannot be made is failed, outside the lock. */
static void schedule(sy_instance *inst)
{
    int64_t now = sy_gpu_now_ms();
    sy_gs_job *g;
    while ((g = sy_gs_overdue(&inst->sched, now)) != NULL) {
        sy_gpu_job *job = g->owner;
        inst->api->log(inst->host, SY_LOG_WARN, "%s: waited %lld ms for %d "
                       "GPU%s, past its bound: it goes first now",
                       job->task->ns ? job->task->ns : "?",
                       (long long)(now - g->queued_at), g->gpus,
                       g->gpus == 1 ? "" : "s");
    }
    while ((g = sy_gs_next(&inst->sched, now)) != NULL) {
        sy_gpu_job *job = g->owner;
        if (sy_gpu_job_start(job) == 0)
            continue;
        sy_gs_release(&inst->sched, g);
        pthread_mutex_unlock(&inst->mu);
        sy_gpu_job_finish_unstarted(job, SY_OUTCOME_FAILED,
                                    "cannot start a thread for the task");
        pthread_mutex_lock(&inst->mu);
    }
}

void sy_gpu_reap(sy_instance *inst)
{
    pthread_mutex_lock(&inst->mu);
    sy_gpu_job *z = inst->zombies;
    inst->zombies = NULL;
    pthread_mutex_unlock(&inst->mu);
    while (z) {
        sy_gpu_job *next = z->zombie_next;
        if (z->has_thread)
            pthread_join(z->thread, NULL);
        sy_gpu_job_free(z);
        z = next;
    }
}

static struct timespec deadline_in(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void *loop_main(void *arg)
{
    sy_instance *inst = arg;
    int64_t next_tick = 0;
    pthread_mutex_lock(&inst->mu);
    while (!inst->stop) {
        int64_t now = sy_gpu_now_ms();
        if (now >= next_tick) {
            pthread_mutex_unlock(&inst->mu);
            health(inst);
            control(inst);
            pthread_mutex_lock(&inst->mu);
            next_tick = now + inst->interval_ms;
        }
        inst->kick = false;
        schedule(inst);
        pthread_mutex_unlock(&inst->mu);
        sy_gpu_reap(inst);
        pthread_mutex_lock(&inst->mu);
        if (inst->kick || inst->stop)
            continue;
        int64_t wait = next_tick - sy_gpu_now_ms();
        struct timespec ts = deadline_in(wait > 0 ? wait : 0);
        pthread_cond_timedwait(&inst->cond, &inst->mu, &ts);
    }
    pthread_mutex_unlock(&inst->mu);
    return NULL;
}

int sy_gpu_loop_start(sy_instance *inst, char *err, size_t err_len)
{
    int rc = pthread_create(&inst->loop, NULL, loop_main, inst);
    if (rc != 0) {
        sy_sdk_errf(err, err_len, "cannot start the instance's thread: %s",
                    strerror(rc));
        return SY_EIO;
    }
    inst->loop_started = true;
    return SY_OK;
}

void sy_gpu_loop_stop(sy_instance *inst)
{
    if (!inst->loop_started)
        return;
    pthread_mutex_lock(&inst->mu);
    inst->stop = true;
    pthread_cond_signal(&inst->cond);
    pthread_mutex_unlock(&inst->mu);
    pthread_join(inst->loop, NULL);
    inst->loop_started = false;
}
