/* A turn's keys found in constant time (engine/key_index.h). */
#include "engine/key_index.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static uint32_t hash_of(const char *key)
{
    return (uint32_t)sy_fnv1a(SY_FNV_START, key);
}

/* The slot of `key`: its entry's, or the empty one it would take. */
static uint32_t *slot_of(const sy_key_index *x, const char *key, sy_key_of key_of,
                         const void *arg)
{
    size_t mask = x->size - 1;
    for (size_t i = hash_of(key) & mask;; i = (i + 1) & mask) {
        uint32_t *s = &x->slot[i];
        if (*s == 0 || strcmp(key_of(arg, *s - 1), key) == 0)
            return s;
    }
}

ptrdiff_t sy_key_index_find(const sy_key_index *x, const char *key, sy_key_of key_of,
                            const void *arg)
{
    if (x->n == 0)
        return -1;
    uint32_t *s = slot_of(x, key, key_of, arg);
    return *s ? (ptrdiff_t)*s - 1 : -1;
}

ptrdiff_t sy_key_index_find_again(sy_key_index *x, const char *key, sy_key_of key_of,
                                  const void *arg)
{
    if (key == x->last)
        return (ptrdiff_t)x->last_at;
    ptrdiff_t i = sy_key_index_find(x, key, key_of, arg);
    if (i >= 0) {
        x->last = key;
        x->last_at = (size_t)i;
    }
    return i;
}

void sy_key_index_add(sy_key_index *x, sy_key_of key_of, const void *arg)
{
    if (2 * (x->n + 1) > x->size) {
        free(x->slot);
        x->size = x->size ? x->size * 2 : 64;
        x->slot = sy_xmalloc(x->size * sizeof *x->slot);
        memset(x->slot, 0, x->size * sizeof *x->slot);
        for (size_t i = 0; i < x->n; i++)
            *slot_of(x, key_of(arg, i), key_of, arg) = (uint32_t)i + 1;
    }
    *slot_of(x, key_of(arg, x->n), key_of, arg) = (uint32_t)x->n + 1;
    x->n++;
}

void sy_key_index_clear(sy_key_index *x)
{
    if (x->slot && x->n)
        memset(x->slot, 0, x->size * sizeof *x->slot);
    x->n = 0;
    x->last = NULL;
}

void sy_key_index_free(sy_key_index *x)
{
    free(x->slot);
    *x = (sy_key_index){0};
}
