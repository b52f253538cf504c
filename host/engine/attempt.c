/* Attempts: made, handed back by plugins on any thread, cancelled, freed. */
#include "engine/attempt.h"

#include <stdlib.h>
#include <string.h>

#include <switchyard/json_params.h>
#include <switchyard/limits.h>

#include "base/util.h"
#include "engine/attempt_log.h"
#include "engine/input.h"
#include "engine/process.h"
#include "executor/call_record.h"


/* Runs on the plugin's thread: copy what the host needs and queue it.  An
 * output over max_context_bytes is only measured, never copied: the
 * attempt fails on the loop for it, and a plugin cannot make the host
 * allocate or read more than the bound. */
static void on_complete(sy_completion *c, const sy_result *res)
{
    sy_attempt *a = c->data;
    sy_engine *e = a->e;
    size_t max = e->o.max_context_bytes;
    a->outcome = res->outcome;
    if (res->output && max > 0 && res->output_len > max) {
        a->output_oversized = true;
        a->output_len = res->output_len;
    } else if (res->output && res->output_len) {
        a->output = malloc(res->output_len + 1);
        if (a->output) {
            memcpy(a->output, res->output, res->output_len);
            a->output[res->output_len] = '\0';
            a->output_len = res->output_len;
        }
    }
    /* Errors and notes are bounded (switchyard/limits.h): a plugin cannot
     * make the host keep megabytes of text per attempt. */
    a->result_error = res->error ? strndup(res->error, SY_RESULT_ERROR_MAX) : NULL;
    /* The 1.1 fields, read only when the plugin's struct has them. */
    if (SY_HAS_FIELD(res, sy_result, retry_after_ms))
        a->retry_after_ms = res->retry_after_ms;
    if (SY_HAS_FIELD(res, sy_result, note) && res->note && res->note[0])
        a->result_note = strndup(res->note, SY_RESULT_NOTE_MAX);
    /* Logs are bounded here, so that a plugin's megabytes of stderr cost
     * the host no more than log_limit per stream. */
    if (SY_HAS_FIELD(res, sy_result, log_stderr_cut) && e->o.log_limit >= 0) {
        size_t limit = e->o.log_limit ? (size_t)e->o.log_limit : SY_LOG_LIMIT_DEFAULT;
        sy_attempt_log_keep(&a->log[0], res->log_stdout, res->log_stdout_len,
                            res->log_stdout_dropped, res->log_stdout_cut, limit);
        sy_attempt_log_keep(&a->log[1], res->log_stderr, res->log_stderr_len,
                            res->log_stderr_dropped, res->log_stderr_cut, limit);
    }
    pthread_mutex_lock(&e->done_lock);
    a->done_next = NULL;
    if (e->done_tail)
        e->done_tail->done_next = a;
    else
        e->done_head = a;
    e->done_tail = a;
    pthread_mutex_unlock(&e->done_lock);
    sy_wake_send(&e->done);
}

sy_attempt *sy_attempt_take_done(sy_engine *e)
{
    pthread_mutex_lock(&e->done_lock);
    sy_attempt *a = e->done_head;
    e->done_head = e->done_tail = NULL;
    pthread_mutex_unlock(&e->done_lock);
    return a;
}

sy_attempt *sy_attempt_new(sy_engine *e, sy_live_run *r, size_t idx, char *err, size_t len)
{
    sy_live_task *t = &r->t[idx];
    const sy_task_def *d = sy_live_def(r, idx);
    bool borrowed = false;
    char *input = sy_engine_input(r, idx, &borrowed, err, len);
    if (!input)
        return NULL;
    /* Memory is the host's shortage, not the task's failure: failing the
     * task here ended the run Failed for good (attempt 0). */
    sy_attempt *a = calloc(1, sizeof *a);
    if (!a)
        sy_oom("starting task %s of run %lld", d->id, (long long)r->id);
    a->e = e;
    a->live_next = e->live;
    if (e->live)
        e->live->live_prev = a;
    e->live = a;
    a->run = r;
    a->idx = idx;
    a->queue = t->queue;
    a->number = t->attempts + 1;
    /* Claimed with the write that marks the task Running (batch.c): that
     * write moves the row from the token it holds to this one. */
    a->token = ++t->token;
    a->input = input;
    a->input_borrowed = borrowed;
    sy_completion_init_for(&a->c, &t->queue->entry->host, d->ns, on_complete, a);
    a->c.on_process = sy_process_on_attempt;
    a->task = (sy_task){
        .size = sizeof(sy_task),
        .attempt = a->number,
        .ns = d->ns,
        .run_id = r->id_text,
        .task_id = d->id,
        .input = input,
        .input_len = strlen(input),
        .params = sy_sdk_params_view(d->params),
        /* A task without a timeout of its own gets its instance's
         * max_task_time: an attempt a plugin never completes ends. */
        .timeout_ms = d->timeout_ms > 0 ? d->timeout_ms : t->queue->entry->max_task_ms,
        .workflow = r->wf->name,
        .base_dir = r->wf->base_dir ? r->wf->base_dir : ".",
        .element = sy_live_is_slot(r, idx) ? (int64_t)t->elem : -1,
    };
    return a;
}

void sy_attempt_release(sy_attempt *a)
{
    sy_engine *e = a->e;
    /* From here on a complete() naming this attempt is refused, before the
     * memory it would have reached is freed. */
    sy_completion_retire(&a->c);
    a->run->inflight--;
    if (a->live_prev)
        a->live_prev->live_next = a->live_next;
    else
        e->live = a->live_next;
    if (a->live_next)
        a->live_next->live_prev = a->live_prev;
    sy_timer_stop(&e->timers, &a->deadline);
    if (!a->input_borrowed)
        free(a->input);
    free(a->output);
    free(a->result_error);
    free(a->result_note);
    free(a->resumed_from);
    sy_attempt_log_clear(&a->log[0]);
    sy_attempt_log_clear(&a->log[1]);
    free(a);
}

void sy_attempt_cancel(sy_attempt *a)
{
    if (a->cancel_sent)
        return;
    a->cancel_sent = true;
    /* A retired token (a refused submit the plugin completed anyway) names
     * nothing the plugin may still hold. */
    sy_completion *token = sy_completion_token(&a->c);
    if (token) {
        sy_call_begin(a->queue->entry, "cancel", a->task.ns, a->run->id,
                      sy_live_call_idx(a->run, a->idx), a->number);
        a->queue->entry->desc->cancel(a->queue->entry->inst, token);
        sy_call_end();
    }
}
