/* Context trees: the ancestor-by-ancestor merge of context.h, kept with the
 * position of every write so that merging two trees gives the same result
 * as merging all of their writes in topological order. */
#include "workflow/context_tree.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NO_WRITE (-1)

/* One key's value, or the root.  Every write to the key is at a position;
 * a tree keeps only what still shows: the latest non-object write
 * (scalar_pos) and, when objects were written after it, their merge
 * (object_pos is the latest of those, kids their keys).  Writes at or
 * before a floor are cut when a merge finds that the other side replaced
 * them (a non-object written later over the same key). */
struct sy_context_tree {
    uint32_t refs;
    uint32_t order;         /* the key's index in the object of its oldest
                               write: with first_pos, where it sorts */
    int64_t first_pos;      /* the oldest write to this key still shown, as
                               near as the tree can tell: for key order */
    int64_t min_pos;        /* no write in this subtree is older: what
                               decides that a subtree can be shared */
    int64_t scalar_pos;     /* the latest non-object write, or NO_WRITE */
    int64_t object_pos;     /* the latest object write after scalar_pos,
                               or NO_WRITE: then this is not an object */
    json_t *scalar;         /* held: the value written at scalar_pos */
    const char *key;        /* NULL at the root; lives in key_holder */
    json_t *key_holder;     /* held: the object the key was read from */
    size_t n;               /* kids, sorted by key */
    sy_context_tree **kids;
};

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int64_t newest(const sy_context_tree *t) { return max64(t->scalar_pos, t->object_pos); }

sy_context_tree *sy_context_tree_ref(sy_context_tree *t)
{
    if (t)
        t->refs++;
    return t;
}

void sy_context_tree_unref(sy_context_tree *t)
{
    if (!t || --t->refs > 0)
        return;
    for (size_t i = 0; i < t->n; i++)
        sy_context_tree_unref(t->kids[i]);
    free(t->kids);
    json_decref(t->scalar);
    json_decref(t->key_holder);
    free(t);
}

static sy_context_tree *node_new(const char *key, json_t *key_holder)
{
    sy_context_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->refs = 1;
    t->scalar_pos = t->object_pos = NO_WRITE;
    t->key = key;
    t->key_holder = json_incref(key_holder);
    return t;
}

static int by_key(const void *x, const void *y)
{
    return strcmp((*(sy_context_tree *const *)x)->key, (*(sy_context_tree *const *)y)->key);
}

/* The tree of `value` written under `key` of `holder` at pos. */
static sy_context_tree *from_value(json_t *value, const char *key, json_t *holder,
                                   uint32_t order, int64_t pos)
{
    sy_context_tree *t = node_new(key, holder);
    if (!t)
        return NULL;
    t->order = order;
    t->first_pos = t->min_pos = pos;
    if (!json_is_object(value)) {
        t->scalar_pos = pos;
        t->scalar = json_incref(value);
        return t;
    }
    t->object_pos = pos;
    t->kids = json_object_size(value) ? calloc(json_object_size(value), sizeof *t->kids) : NULL;
    if (json_object_size(value) && !t->kids) {
        sy_context_tree_unref(t);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach(value, k, v) {
        if (!(t->kids[t->n] = from_value(v, k, value, (uint32_t)t->n, pos))) {
            sy_context_tree_unref(t);
            return NULL;
        }
        t->n++;
    }
    if (t->n > 1)
        qsort(t->kids, t->n, sizeof *t->kids, by_key);
    return t;
}

sy_context_tree *sy_context_tree_from_object(json_t *obj, uint32_t pos)
{
    return json_is_object(obj) ? from_value(obj, NULL, NULL, 0, pos) : NULL;
}

/* Where the key first showed of the side that showed it first. */
static void take_first(sy_context_tree *t, const sy_context_tree *side, int64_t floor)
{
    if (!side)
        return;
    /* A side's oldest write may be cut; then its oldest write still shown
     * is at least its newest, as close as the tree can tell. */
    int64_t first = side->first_pos > floor ? side->first_pos : newest(side);
    if (t->first_pos == NO_WRITE || first < t->first_pos) {
        t->first_pos = first;
        t->order = side->order;
    }
}

static sy_context_tree *merge_at(sy_context_tree *a, sy_context_tree *b, int64_t floor);

/* The kids of two objects, merged key by key above the floor. */
static bool merge_kids(sy_context_tree *t, const sy_context_tree *a, const sy_context_tree *b,
                       int64_t floor)
{
    size_t na = a ? a->n : 0, nb = b ? b->n : 0;
    if (na + nb == 0)
        return true;
    t->kids = malloc((na + nb) * sizeof *t->kids);
    if (!t->kids)
        return false;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : strcmp(a->kids[i]->key, b->kids[j]->key);
        sy_context_tree *ka = c <= 0 ? a->kids[i++] : NULL;
        sy_context_tree *kb = c >= 0 ? b->kids[j++] : NULL;
        /* Both NULL here only when out of memory: a kid that merges to
         * nothing (every write cut) is simply left out. */
        sy_context_tree *k = merge_at(ka, kb, floor);
        if (k)
            t->kids[t->n++] = k;
        else if ((ka && newest(ka) > floor) || (kb && newest(kb) > floor))
            return false;
    }
    return true;
}

/* The merge of a and b, with every write at or before `floor` cut. */
static sy_context_tree *merge_at(sy_context_tree *a, sy_context_tree *b, int64_t floor)
{
    if (a && newest(a) <= floor)
        a = NULL;
    if (b && newest(b) <= floor)
        b = NULL;
    if (!a || a == b) { /* one side, or the same tree reached twice */
        a = a ? a : b;
        b = NULL;
    }
    if (!a)
        return NULL;
    if (!b && a->min_pos > floor) /* nothing to cut: share it */
        return sy_context_tree_ref(a);

    /* The latest non-object write wins; objects written after it merge. */
    int64_t as = a->scalar_pos > floor ? a->scalar_pos : NO_WRITE;
    int64_t bs = b && b->scalar_pos > floor ? b->scalar_pos : NO_WRITE;
    const sy_context_tree *scalar_side = bs > as ? b : as != NO_WRITE ? a : NULL;
    int64_t cut = max64(floor, max64(as, bs));
    const sy_context_tree *oa = a->object_pos > cut ? a : NULL;
    const sy_context_tree *ob = b && b->object_pos > cut ? b : NULL;
    if (!scalar_side && !oa && !ob)
        return NULL;

    sy_context_tree *t = node_new(a->key, a->key_holder);
    if (!t)
        return NULL;
    if (scalar_side) {
        t->scalar_pos = scalar_side->scalar_pos;
        t->scalar = json_incref(scalar_side->scalar);
    }
    t->first_pos = NO_WRITE;
    take_first(t, a, floor);
    take_first(t, b, floor);
    /* Whatever this node keeps is newer than the floor and than the
     * oldest write of either side: a bound, never too late. */
    t->min_pos = max64(floor + 1, b && b->min_pos < a->min_pos ? b->min_pos : a->min_pos);
    if (oa || ob) {
        t->object_pos = max64(oa ? oa->object_pos : NO_WRITE, ob ? ob->object_pos : NO_WRITE);
        if (!merge_kids(t, oa, ob, cut)) {
            sy_context_tree_unref(t);
            return NULL;
        }
    }
    return t;
}

sy_context_tree *sy_context_tree_merge(sy_context_tree *a, sy_context_tree *b)
{
    return merge_at(a, b, NO_WRITE);
}

/* --- materialising ------------------------------------------------------------ */

static int by_first_write(const void *x, const void *y)
{
    const sy_context_tree *a = *(sy_context_tree *const *)x, *b = *(sy_context_tree *const *)y;
    if (a->first_pos != b->first_pos)
        return a->first_pos < b->first_pos ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static json_t *to_json(const sy_context_tree *t)
{
    if (t->object_pos == NO_WRITE)
        return json_incref(t->scalar);
    json_t *obj = json_object();
    if (!obj || t->n == 0)
        return obj;
    /* Keys in the order the topological merge would have inserted them. */
    sy_context_tree **v = malloc(t->n * sizeof *v);
    if (!v) {
        json_decref(obj);
        return NULL;
    }
    memcpy(v, t->kids, t->n * sizeof *v);
    qsort(v, t->n, sizeof *v, by_first_write);
    for (size_t i = 0; i < t->n && obj; i++) {
        json_t *value = to_json(v[i]);
        if (!value || json_object_set_new(obj, v[i]->key, value) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    free(v);
    return obj;
}

json_t *sy_context_tree_json(const sy_context_tree *t)
{
    return t ? to_json(t) : json_object();
}
