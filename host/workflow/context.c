/* The JSON context: merging outputs into an input, parsing an output. */
#include "workflow/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* One pending object merge.  Merging walks an explicit stack rather than
 * recursing, so a deep context costs heap, never the host's stack. */
typedef struct merge_frame {
    json_t *dst;
    const json_t *src;
} merge_frame;

typedef struct merge_stack {
    merge_frame *v;
    size_t n, cap;
} merge_stack;

static int push(merge_stack *st, json_t *dst, const json_t *src)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 16;
        merge_frame *v = realloc(st->v, cap * sizeof *v);
        if (!v)
            return -1;
        st->v = v;
        st->cap = cap;
    }
    /* Held, so that an object shared inside dst and replaced through
     * another path stays alive until its own turn. */
    st->v[st->n++] = (merge_frame){json_incref(dst), src};
    return 0;
}

/* Merges one level; nested object pairs go on the stack. */
static int merge_level(merge_stack *st, json_t *dst, const json_t *src)
{
    const char *key;
    json_t *sv;
    /* jansson's iterator is not const-correct; src is only read. */
    json_object_foreach((json_t *)src, key, sv) {
        json_t *dv = json_object_get(dst, key);
        if (json_is_object(dv) && json_is_object(sv)) {
            if (dv != sv && push(st, dv, sv) != 0)
                return -1;
            continue;
        }
        /* A copy, so later merges into dst never reach into src; its
         * depth is src's, which the parser bounded. */
        json_t *copy = json_deep_copy(sv);
        if (!copy || json_object_set_new(dst, key, copy) != 0)
            return -1;
    }
    return 0;
}

/* src must not be part of dst (the same object is fine: a no-op). */
int sy_json_merge(json_t *dst, const json_t *src)
{
    if (!json_is_object(dst) || !json_is_object(src))
        return -1;
    if (dst == src)
        return 0;
    merge_stack st = {0};
    int rc = push(&st, dst, src);
    while (rc == 0 && st.n > 0) {
        merge_frame f = st.v[--st.n];
        rc = merge_level(&st, f.dst, f.src);
        json_decref(f.dst);
    }
    while (st.n > 0)
        json_decref(st.v[--st.n].dst);
    free(st.v);
    return rc;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "something else";
}

/* "16 MiB", or "16.0 MiB (16777217 bytes)" when the unit is not exact. */
static char *size_text(size_t n, char *buf, size_t len)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    double v = (double)n;
    unsigned long long div = 1;
    while (u + 1 < SY_ARRAY_LEN(units) && v >= 1024.0) {
        v /= 1024.0;
        div *= 1024;
        u++;
    }
    if (n % div == 0)
        snprintf(buf, len, "%llu %s", (unsigned long long)(n / div), units[u]);
    else
        snprintf(buf, len, "%.1f %s (%zu bytes)", v, units[u], n);
    return buf;
}

static bool all_space(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!strchr(" \t\r\n", text[i]) || text[i] == '\0')
            return false;
    return true;
}

/* Beyond context.h: whitespace alone counts as empty (a plugin that
 * printed a newline said nothing), and max_bytes 0 means no limit.  The
 * size is judged before anything is read. */
json_t *sy_output_parse(const char *text, size_t len, size_t max_bytes,
                        char *err, size_t err_len)
{
    if (!text)
        return json_object();
    if (max_bytes > 0 && len > max_bytes) {
        char got[64], lim[64];
        sy_errf(err, err_len, "output is %s, more than max_context_bytes %s",
                size_text(len, got, sizeof got),
                size_text(max_bytes, lim, sizeof lim));
        return NULL;
    }
    if (all_space(text, len))
        return json_object();
    json_error_t je;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY, &je);
    if (!v) {
        sy_errf(err, err_len, "output is not valid JSON: %s at line %d column %d",
                je.text, je.line, je.column);
        return NULL;
    }
    if (!json_is_object(v)) {
        sy_errf(err, err_len, "output is not a JSON object: got %s", json_kind(v));
        json_decref(v);
        return NULL;
    }
    return v;
}
