/*
 * inflight.c -- the table of accepted, not yet completed attempts whose
 * take() decides the one caller that completes each (switchyard/sdk.h,
 * "In flight").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

/* Prepares an empty table.  SY_OK, or SY_ENOMEM / SY_EINTERNAL. */
int sy_sdk_inflight_init(sy_sdk_inflight *t)
{
    memset(t, 0, sizeof *t);
    if (pthread_mutex_init(&t->lock, NULL) != 0)
        return SY_EINTERNAL;
    t->cap = 64;
    t->slots = (sy_sdk_inflight_slot *)calloc(t->cap, sizeof *t->slots);
    if (!t->slots) {
        pthread_mutex_destroy(&t->lock);
        return SY_ENOMEM;
    }
    return SY_OK;
}

/* Frees the table.  Entries still in it are dropped without a word: by
 * destroy() time the host has seen every completion, so a non-empty table
 * is the plugin's bug, which sy_sdk_inflight_count() can reveal first. */
void sy_sdk_inflight_fini(sy_sdk_inflight *t)
{
    if (!t->slots)
        return; /* init failed (and undid itself) or never ran */
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
    pthread_mutex_destroy(&t->lock);
}

static size_t home(const sy_sdk_inflight *t, const sy_completion *c)
{
    /* Fibonacci hashing: pointers are aligned, so low bits carry little. */
    uint64_t h = (uint64_t)(uintptr_t)c * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (t->cap - 1);
}

/* The slot holding `c`, or the empty slot where it would go. */
static size_t find_slot(const sy_sdk_inflight *t, const sy_completion *c)
{
    size_t i = home(t, c);
    while (t->slots[i].key && t->slots[i].key != c)
        i = (i + 1) & (t->cap - 1);
    return i;
}

static int grow(sy_sdk_inflight *t)
{
    sy_sdk_inflight_slot *old = t->slots;
    size_t old_cap = t->cap;
    sy_sdk_inflight_slot *v =
        (sy_sdk_inflight_slot *)calloc(old_cap * 2, sizeof *v);
    if (!v)
        return SY_ENOMEM;
    t->slots = v;
    t->cap = old_cap * 2;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            t->slots[find_slot(t, old[i].key)] = old[i];
    free(old);
    return SY_OK;
}

/* Records `c` as in flight with the plugin's `value`.  SY_OK; SY_EINVAL
 * when c is NULL or already in the table (a host bug: one completion per
 * submit); SY_ENOMEM.  On error nothing changed: refuse the submit. */
int sy_sdk_inflight_add(sy_sdk_inflight *t, sy_completion *c, void *value)
{
    int rc = SY_OK;
    if (!c)
        return SY_EINVAL;
    pthread_mutex_lock(&t->lock);
    /* Grow at half full: probes stay short. */
    if ((t->count + 1) * 2 > t->cap)
        rc = grow(t);
    if (rc == SY_OK) {
        size_t i = find_slot(t, c);
        if (t->slots[i].key) {
            rc = SY_EINVAL;
        } else {
            t->slots[i].key = c;
            t->slots[i].value = value;
            t->count++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* Removes slot i, shifting later entries of the same probe run back so no
 * lookup ever stops at a hole too early. */
static void remove_slot(sy_sdk_inflight *t, size_t i)
{
    size_t mask = t->cap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->slots[j].key)
            break;
        size_t k = home(t, t->slots[j].key);
        /* Entry j may stay when its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        t->slots[i] = t->slots[j];
        i = j;
    }
    t->slots[i].key = NULL;
    t->slots[i].value = NULL;
    t->count--;
}

/* Takes `c` out of the table.  SY_OK (and *value, when value is not NULL,
 * gets what add() stored): the caller now owns the one completion of `c`.
 * SY_ENOENT: not in the table (already taken, or never added). */
int sy_sdk_inflight_take(sy_sdk_inflight *t, sy_completion *c, void **value)
{
    int rc = SY_ENOENT;
    if (!c)
        return SY_ENOENT;
    pthread_mutex_lock(&t->lock);
    size_t i = find_slot(t, c);
    if (t->slots[i].key) {
        if (value)
            *value = t->slots[i].value;
        remove_slot(t, i);
        rc = SY_OK;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* Takes any one entry (for a shutdown that must answer everything left).
 * SY_OK with *c and *value set, or SY_ENOENT when the table is empty. */
int sy_sdk_inflight_take_any(sy_sdk_inflight *t, sy_completion **c,
                             void **value)
{
    int rc = SY_ENOENT;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; t->count > 0 && i < t->cap; i++) {
        if (!t->slots[i].key)
            continue;
        *c = t->slots[i].key;
        if (value)
            *value = t->slots[i].value;
        remove_slot(t, i);
        rc = SY_OK;
        break;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* The number of entries now (a snapshot: others may change it at once). */
size_t sy_sdk_inflight_count(sy_sdk_inflight *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* take() and, when it succeeds, api->complete(c, r) outside the lock.
 * SY_OK: this call completed `c`; SY_ENOENT: someone else did (nothing was
 * sent).  `value` as for take(), may be NULL. */
int sy_sdk_inflight_complete(sy_sdk_inflight *t, const sy_host_api *api,
                             sy_completion *c, const sy_result *r, void **value)
{
    int rc = sy_sdk_inflight_take(t, c, value);
    if (rc == SY_OK)
        api->complete(c, r);
    return rc;
}
