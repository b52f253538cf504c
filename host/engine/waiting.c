/* The Waiting state and its reason (engine/waiting.h). */
#include "engine/waiting.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/batch.h"
#include "engine/run.h"
#include "workflow/state.h"

static const char *const kind_names[SY_WAITING_KIND_COUNT] = {"key", "pool", "tenant",
                                                              "other"};

const char *sy_waiting_kind_name(sy_waiting_kind k)
{
    return (unsigned)k < SY_WAITING_KIND_COUNT ? kind_names[k] : "other";
}

sy_waiting_kind sy_waiting_kind_of(const char *why)
{
    const char *key = NULL;
    if (!sy_waiting_key(why, &key))
        return SY_WAITING_OTHER;
    /* A rate's wait ("rate:...") has no kind of its own here. */
    for (int k = 0; k < SY_WAITING_OTHER; k++) {
        size_t n = strlen(kind_names[k]);
        if (strncmp(key, kind_names[k], n) == 0 && key[n] == ':')
            return (sy_waiting_kind)k;
    }
    return SY_WAITING_OTHER;
}

static size_t stable_len(const char *s)
{
    const char *p = strstr(s, " (");
    return p ? (size_t)(p - s) : strlen(s);
}

bool sy_waiting_same(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    size_t n = stable_len(a);
    return n == stable_len(b) && memcmp(a, b, n) == 0;
}

void sy_waiting_enter(sy_live_run *r, size_t idx, const char *why)
{
    sy_live_task *t = &r->t[idx];
    if (t->state == SY_TASK_WAITING) {
        if (sy_waiting_same(t->waiting_for, why))
            return; /* the same wait: nothing to write */
        free(t->waiting_for);
        t->waiting_for = sy_xstrdup(why);
        sy_batch_mark_task(r, idx);
        return;
    }
    if (!sy_live_set_state(r, idx, SY_TASK_WAITING))
        return;
    t->waiting_for = sy_xstrdup(why);
}
