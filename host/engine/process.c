/* Recording the process groups attempts run: a plugin thread's request,
 * the loop's write, the answer (engine/process.h). */
#include "engine/process.h"

#include <stdlib.h>

#include <switchyard/process.h>

#include "base/log.h"
#include "engine/fenced.h"

struct sy_process_request {
    sy_attempt *a;
    int64_t pgid;
    uint64_t start_time;
    int status;
    bool written, done;
    /* attempt_process_async: called with the status instead of waking a
     * waiter; the request is then the loop's (malloc'd, freed once
     * answered).  NULL: a waiter's, on its stack. */
    void (*answer)(void *arg, int status);
    void *arg;
    sy_process_request *next;
};

void sy_process_init(sy_engine *e)
{
    pthread_cond_init(&e->proc_cond, NULL);
    e->loop_thread = pthread_self();
    if (sy_process_machine_id(e->machine_id, sizeof e->machine_id) != 0)
        e->machine_id[0] = '\0';
    if (sy_process_boot_id(e->boot_id, sizeof e->boot_id) != 0)
        e->boot_id[0] = '\0';
}

void sy_process_free(sy_engine *e)
{
    sy_process_refuse_all(e, SY_ESTATE, true);
    pthread_cond_destroy(&e->proc_cond);
}

/* Loop thread: the write of one request; its status. */
static int write_one(sy_engine *e, sy_process_request *q, int64_t now)
{
    sy_attempt *a = q->a;
    sy_live_run *r = a->run;
    if (r->lost || r->fenced || r->t[a->idx].current != a)
        return SY_ESTATE;
    /* An element of a mapped task has no task row to fence the record on,
     * and recovery looks for the groups of Running task rows: its group
     * is not recorded (the plugin goes on; docs/reliability.md). */
    if (sy_live_is_slot(r, a->idx))
        return SY_ENOTSUP;
    sy_process_record p = {
        .idx = (uint32_t)a->idx,
        .attempt = a->number,
        .host = (char *)e->o.owner,
        .machine = e->machine_id[0] ? e->machine_id : NULL,
        .boot_id = e->boot_id[0] ? e->boot_id : NULL,
        .pgid = q->pgid,
        .start_time = q->start_time,
        .recorded = now,
    };
    int rc = sy_store_record_process(e->o.store, r->id, &r->fence, a->token, &p);
    if (rc == SY_STORE_EFENCED)
        return SY_ESTATE;
    if (rc != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "run %lld: cannot record process group %lld of "
               "task %s: %s", (long long)r->id, (long long)q->pgid, a->task.ns,
               sy_store_errmsg(e->o.store));
        /* A refused write leaves the batch to be rolled back (store.h), as
         * batch.c's do: the turn stops here, with this line only (the
         * commit would fail next for "no batch is open"). */
        e->fatal = true;
        return SY_EIO;
    }
    return SY_OK;
}

/* Under done_lock: `q` joins the requests the next batch writes. */
static void enqueue(sy_engine *e, sy_process_request *q)
{
    if (e->proc_tail)
        e->proc_tail->next = q;
    else
        e->proc_head = q;
    e->proc_tail = q;
    sy_wake_send(&e->done);
}

int sy_process_on_attempt(sy_completion *c, int64_t pgid, uint64_t start_time,
                          void (*answer)(void *arg, int status), void *arg)
{
    sy_attempt *a = c->data;
    sy_engine *e = a->e;
    sy_process_request q = {.a = a, .pgid = pgid, .start_time = start_time};
    if (pthread_equal(pthread_self(), e->loop_thread)) {
        /* From inside submit() or cancel(): the loop cannot wait for
         * itself; no batch is open there (submits follow the commit). */
        int rc = write_one(e, &q, e->now());
        if (!answer)
            return rc;
        answer(arg, rc);
        return SY_OK;
    }
    if (answer) {
        /* Nobody waits: the request lives until the loop answers it. */
        sy_process_request *h = malloc(sizeof *h);
        if (!h)
            return SY_ENOMEM;
        *h = q;
        h->answer = answer;
        h->arg = arg;
        pthread_mutex_lock(&e->done_lock);
        if (e->proc_closed) {
            pthread_mutex_unlock(&e->done_lock);
            free(h);
            return SY_ESTATE;
        }
        enqueue(e, h);
        pthread_mutex_unlock(&e->done_lock);
        return SY_OK;
    }
    uint64_t asked = uv_hrtime();
    pthread_mutex_lock(&e->done_lock);
    if (e->proc_closed) {
        pthread_mutex_unlock(&e->done_lock);
        return SY_ESTATE;
    }
    enqueue(e, &q);
    while (!q.done)
        pthread_cond_wait(&e->proc_cond, &e->done_lock);
    /* The wait is the command's: it starts once this returns. */
    e->proc_records++;
    e->proc_wait_ns += uv_hrtime() - asked;
    pthread_mutex_unlock(&e->done_lock);
    return q.status;
}

bool sy_process_pending(sy_engine *e)
{
    pthread_mutex_lock(&e->done_lock);
    bool any = e->proc_head != NULL;
    pthread_mutex_unlock(&e->done_lock);
    return any;
}

void sy_process_write(sy_engine *e, int64_t now)
{
    pthread_mutex_lock(&e->done_lock);
    sy_process_request *list = e->proc_head;
    e->proc_head = e->proc_tail = NULL;
    pthread_mutex_unlock(&e->done_lock);
    /* The requests stay on their waiters' stacks until answered; the
     * written list is the loop's alone. */
    for (sy_process_request *q = list; q; q = q->next) {
        q->status = e->fatal ? SY_EIO : write_one(e, q, now);
        q->written = true;
    }
    if (!list)
        return;
    sy_process_request *last = list;
    while (last->next)
        last = last->next;
    last->next = e->proc_written;
    e->proc_written = list;
}

/* Under done_lock: marks the requests of `list` answered, `status`
 * replacing their own unless SY_OK; the waiters' are done (each may be
 * gone once the lock is let go), the others are returned, to be called
 * once the lock is let go. */
static sy_process_request *settle(sy_engine *e, sy_process_request *list, int status)
{
    sy_process_request *calls = NULL;
    for (sy_process_request *q = list, *next; q; q = next) {
        next = q->next;
        if (status != SY_OK)
            q->status = status;
        if (q->answer) {
            e->proc_records++;
            q->next = calls;
            calls = q;
        } else {
            q->done = true;
        }
    }
    return calls;
}

/* Loop thread, without the lock: the plugins' answers, then the
 * requests freed. */
static void call_answers(sy_process_request *calls)
{
    for (sy_process_request *q = calls, *next; q; q = next) {
        next = q->next;
        q->answer(q->arg, q->status);
        free(q);
    }
}

void sy_process_answer(sy_engine *e, int status)
{
    pthread_mutex_lock(&e->done_lock);
    sy_process_request *calls = settle(e, e->proc_written, status);
    e->proc_written = NULL;
    pthread_cond_broadcast(&e->proc_cond);
    pthread_mutex_unlock(&e->done_lock);
    call_answers(calls);
}

void sy_process_refuse_all(sy_engine *e, int status, bool close)
{
    sy_process_answer(e, status);
    pthread_mutex_lock(&e->done_lock);
    sy_process_request *calls = settle(e, e->proc_head, status);
    e->proc_head = e->proc_tail = NULL;
    if (close)
        e->proc_closed = true;
    pthread_cond_broadcast(&e->proc_cond);
    pthread_mutex_unlock(&e->done_lock);
    call_answers(calls);
}
