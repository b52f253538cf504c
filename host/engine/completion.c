/* Completions and deadlines: an attempt's outcome, applied to its task. */
#include "engine/completion.h"

#include <stdio.h>
#include <stdlib.h>

#include <switchyard/sdk.h>

#include "base/util.h"
#include "engine/attempt.h"
#include "engine/attempt_log.h"
#include "engine/fenced.h"
#include "engine/run.h"
#include "engine/shutdown.h"
#include "workflow/context.h"

void sy_engine_on_deadline(sy_timer *deadline)
{
    sy_attempt *a = deadline->data;
    sy_live_run *r = a->run;
    sy_live_task *t = &r->t[a->idx];
    if (t->current != a)
        return;
    a->timed_out = true;
    t->current = NULL;
    r->n_running--;
    a->queue->metrics->failed++;
    sy_histogram_observe(&r->e->metrics.duration,
                         (int64_t)(uv_now(r->e->loop) - a->submitted_ms));
    char msg[128];
    char dur[32];
    snprintf(msg, sizeof msg, "timed out after %s (attempt %u)",
             sy_sdk_format_ms(a->task.timeout_ms, dur, sizeof dur), a->number);
    sy_live_event(r, a->idx, a->number, "timed_out", msg);
    sy_attempt_cancel(a);
    sy_live_fail_or_retry(r, a->idx, true, msg);
}

/* The output of a succeeded attempt: Completed, or failed when it is not a
 * JSON object within bounds. */
static void apply_success(sy_engine *e, sy_attempt *a)
{
    sy_live_run *r = a->run;
    sy_live_task *t = &r->t[a->idx];
    char err[256];
    if (a->output_oversized) {
        snprintf(err, sizeof err, "output is %zu bytes, more than max_context_bytes %zu",
                 a->output_len, e->o.max_context_bytes);
        sy_live_fail_or_retry(r, a->idx, false, err);
        return;
    }
    json_t *out =
        sy_output_parse(a->output, a->output_len, e->o.max_context_bytes, err, sizeof err);
    if (!out) {
        sy_live_fail_or_retry(r, a->idx, false, err);
        return;
    }
    if (!sy_live_set_state(r, a->idx, SY_TASK_COMPLETED)) {
        json_decref(out);
        return;
    }
    sy_live_set_error(t, NULL);
    if (json_object_size(out) > 0) {
        t->output = out;
        t->output_text = json_dumps(out, JSON_COMPACT);
        /* An element's output is its map's to merge, once it ends. */
        r->n_with_output += !sy_live_is_slot(r, a->idx);
    } else {
        json_decref(out);
    }
    sy_live_task_terminal(r, a->idx);
}

/* What the instance made of the attempt, and how long it held it. */
static void count_outcome(sy_engine *e, const sy_attempt *a)
{
    sy_instance_metrics *m = a->queue->metrics;
    if (a->outcome == SY_OUTCOME_SUCCEEDED)
        m->completed++;
    else if (a->outcome == SY_OUTCOME_DEFERRED)
        m->throttled++;
    else
        m->failed++;
    sy_histogram_observe(&e->metrics.duration, (int64_t)(uv_now(e->loop) - a->submitted_ms));
}

static void apply_result(sy_engine *e, sy_attempt *a)
{
    sy_live_run *r = a->run;
    sy_live_task *t = &r->t[a->idx];
    /* A late attempt's logs are kept too while the row still holds its
     * token (no attempt started since). */
    if (a->token == t->token_stored)
        sy_attempt_log_write(a);
    if (t->current != a) {
        static const char *const outcomes[] = {"succeeded", "failed", "timed out",
                                               "cancelled", "deferred"};
        char detail[256];
        snprintf(detail, sizeof detail, "attempt %u %s after %s; ignored", a->number,
                 (unsigned)a->outcome < 5 ? outcomes[a->outcome] : "ended",
                 a->timed_out ? "its timeout" : "it stopped being current");
        sy_live_event(r, a->idx, a->number, "stale", detail);
        /* A late attempt's note still says what happened to it (a cancel
         * that could not recall a call, say). */
        if (a->result_note)
            sy_live_event(r, a->idx, a->number, "note", a->result_note);
        return;
    }
    t->current = NULL;
    r->n_running--;
    count_outcome(e, a);
    if (a->result_note)
        sy_live_event(r, a->idx, a->number, "note", a->result_note);
    if (sy_engine_requeue_interrupted(e, a))
        return;
    if (r->cancelling) {
        sy_live_set_state(r, a->idx, SY_TASK_CANCELLED);
        sy_live_set_error(t, "cancelled with its run");
        sy_live_task_terminal(r, a->idx);
        return;
    }
    if (a->outcome == SY_OUTCOME_DEFERRED) {
        sy_live_defer(r, a->idx, a->queue->entry->name, a->retry_after_ms, a->result_error);
        return;
    }
    t->deferrals = 0;
    if (a->outcome == SY_OUTCOME_SUCCEEDED) {
        apply_success(e, a);
        return;
    }
    const char *why = a->result_error && *a->result_error ? a->result_error : NULL;
    char buf[128];
    switch (a->outcome) {
    case SY_OUTCOME_TIMED_OUT:
        sy_live_fail_or_retry(r, a->idx, true, why ? why : "timed out in the executor");
        break;
    case SY_OUTCOME_CANCELLED:
        sy_live_fail_or_retry(r, a->idx, false, why ? why : "cancelled by the executor");
        break;
    default:
        snprintf(buf, sizeof buf, "failed (attempt %u)", a->number);
        sy_live_fail_or_retry(r, a->idx, false, why ? why : buf);
    }
}

void sy_engine_apply_done(sy_engine *e)
{
    sy_attempt *a = sy_attempt_take_done(e);
    while (a) {
        sy_attempt *next = a->done_next;
        sy_timer_stop(&e->timers, &a->deadline);
        apply_result(e, a);
        sy_attempt_release(a);
        a = next;
    }
}
