/* Runs as data: where a run's Waiting tasks stand now in the queues of
 * the keys they wait for (service/runs.h, sy_runs_add_waiting). */
#include "service/runs.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "service/limits_waiters.h"
#include "store/slots.h"
#include "workflow/state.h"

/* A Waiting task or element of the view, and the key its reason names. */
typedef struct {
    json_t *o;
    char *key;
    uint32_t idx;
    int64_t elem; /* -1: not a map's element */
} waiter;

typedef struct {
    waiter *v;
    size_t n, cap;
} waiting;

/* The key a reason names ("waiting for KEY" or "waiting for KEY (...)",
 * as the engine writes it: engine/limits.c, engine/rates.c), or NULL for
 * a wait of another kind ("waiting for capacity: ...", engine/dispatch.c). */
static char *key_named(const char *why)
{
    const char *key = NULL;
    size_t n = sy_waiting_key(why, &key);
    if (n == 0 || n > SY_SLOT_KEY_MAX)
        return NULL;
    char *k = sy_xmalloc(n + 1);
    memcpy(k, key, n);
    k[n] = '\0';
    return k;
}

static void note(waiting *w, json_t *o, uint32_t idx, int64_t elem)
{
    const char *status = json_string_value(json_object_get(o, "status"));
    if (!status || strcmp(status, "Waiting") != 0)
        return;
    char *key = key_named(json_string_value(json_object_get(o, "waiting_for")));
    if (!key)
        return;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 8;
        w->v = realloc(w->v, w->cap * sizeof *w->v);
        if (!w->v)
            sy_oom("reading a run's waiting tasks");
    }
    w->v[w->n++] = (waiter){o, key, idx, elem};
}

/* `why` with the task's place as it is now: its "(position P of N
 * waiting)" replaced; else the place added inside its parenthesis
 * ("(2 of 2 held; position 1 of 3 waiting)"), or after it. */
static char *current(const char *why, size_t position, size_t count)
{
    char place[80];
    snprintf(place, sizeof place, "position %zu of %zu waiting", position, count);
    const char *at = strstr(why, " (position ");
    const char *close = at ? strchr(at, ')') : NULL;
    if (close)
        return sy_xasprintf("%.*s (%s)%s", (int)(at - why), why, place, close + 1);
    size_t n = strlen(why);
    if (strstr(why, " (") && why[n - 1] == ')')
        return sy_xasprintf("%.*s; %s)", (int)(n - 1), why, place);
    return sy_xasprintf("%s (%s)", why, place);
}

/* `why` with the count of its "(H of L held" the key's now, as the engine
 * writes it when a key is full (engine/limits.c); NULL when it says no
 * such count. */
static char *held_now(const char *why, int64_t held)
{
    const char *open = strstr(why, " (");
    if (!open)
        return NULL;
    const char *digits = open + 2, *p = digits;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == digits || strncmp(p, " of ", 4) != 0)
        return NULL;
    const char *limit = p + 4, *q = limit;
    while (*q >= '0' && *q <= '9')
        q++;
    if (q == limit || strncmp(q, " held", 5) != 0)
        return NULL;
    return sy_xasprintf("%.*s%lld%s", (int)(digits - why), why, (long long)held, p);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Each waiter's fields from the queues read. */
static void place(waiter *x, const sy_waiter_queues *q, int64_t run_id)
{
    size_t position, count;
    json_object_set_new(x->o, "waiting_key", json_string(x->key));
    if (!sy_waiter_queues_position(q, x->key, run_id, x->idx, x->elem, &position, &count)) {
        /* No live row: a rate's wait, or a host that lost the run. */
        json_object_set_new(x->o, "waiting_position", json_null());
        json_object_set_new(x->o, "waiting_count", json_null());
        return;
    }
    const char *why = json_string_value(json_object_get(x->o, "waiting_for"));
    int64_t held = 0;
    char *counted = NULL;
    if (sy_waiter_queues_held(q, x->key, &held)) {
        json_object_set_new(x->o, "waiting_held", json_integer((json_int_t)held));
        counted = held_now(why, held);
    }
    char *text = current(counted ? counted : why, position, count);
    free(counted);
    json_object_set_new(x->o, "waiting_for", json_string(text));
    free(text);
    json_object_set_new(x->o, "waiting_position", json_integer((json_int_t)position));
    json_object_set_new(x->o, "waiting_count", json_integer((json_int_t)count));
}

int sy_runs_add_waiting(sy_store *st, const sy_flow_config *flow, int64_t now,
                        int64_t run_id, json_t *tasks, char *err, size_t err_len)
{
    waiting w = {0};
    size_t i, j;
    json_t *t, *e;
    json_array_foreach(tasks, i, t) {
        uint32_t idx = (uint32_t)json_integer_value(json_object_get(t, "index"));
        note(&w, t, idx, -1);
        json_t *list = json_object_get(json_object_get(t, "map"), "list");
        json_array_foreach(list, j, e)
            note(&w, e, idx, (int64_t)json_integer_value(json_object_get(e, "index")));
    }
    if (w.n == 0)
        return SY_OK; /* nothing waits: no read */
    /* One read for the view: each key once. */
    const char **keys = sy_xmalloc(w.n * sizeof *keys);
    for (i = 0; i < w.n; i++)
        keys[i] = w.v[i].key;
    qsort(keys, w.n, sizeof *keys, by_name);
    size_t m = 0;
    for (i = 0; i < w.n; i++)
        if (m == 0 || strcmp(keys[m - 1], keys[i]) != 0)
            keys[m++] = keys[i];
    sy_waiter_queues *q = NULL;
    int rc = sy_waiter_queues_read(st, flow, now, keys, m, &q, err, err_len);
    for (i = 0; i < w.n; i++) {
        if (rc == SY_OK)
            place(&w.v[i], q, run_id);
        free(w.v[i].key);
    }
    sy_waiter_queues_free(q);
    free(keys);
    free(w.v);
    return rc;
}
