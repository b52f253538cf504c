/* The parse cache's entry for one loaded workflow (cache_file.c stores
 * it): the model in a compact binary form, so that reading it back costs
 * a copy per task instead of libconfig's tree, the checks and the graph.
 * cache_read.c reads it back and is the judge of its layout:
 *
 *   "SYWC", u32 format, u32 byte-order mark, u32 definition version,
 *   32 bytes: SHA-256 of the payload, u64 payload length, payload.
 *
 * Payload, every integer a LEB128 varint (signed ones zigzagged), every
 * string its length + 1 (0: none) and its bytes, every real 8 bytes:
 * the key (32 bytes: SHA-256 of the source file), the host's
 * version, base_dir, name, tenant, description, schedule, timezone (each
 * may be none), catchup, catchup_max, name_line, the definition hash (64
 * hex), the retry groups (attempts, delay, backoff, max delay, jitter,
 * retry_on each), the tasks (id, line, trigger, timeout, retry group,
 * n_deps and each dependency's index minus the task's, mapped, map key,
 * range from, to, max_map, params as JSON or none for {}, `when` as JSON
 * or none, priority, flow (limits and pool) as JSON or none, cache as JSON or none), then the topological order (each as the step from the one
 * before).  The header's integers are in the
 * writer's byte order: the mark refuses another's. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "workflow/internal.h"

typedef struct obuf {
    char *p;
    size_t len, cap;
    bool bad;
} obuf;

static void put(obuf *b, const void *v, size_t n)
{
    if (b->bad)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (b->len + n > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

/* Integers as LEB128 varints (most are small: lines, counts, the
 * distance from a task to its dependency), signed ones zigzagged. */
static void put_u64(obuf *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        tmp[n++] |= v ? 0x80 : 0;
    } while (v);
    put(b, tmp, n);
}

static void put_u32(obuf *b, uint32_t v) { put_u64(b, v); }

static void put_i64(obuf *b, int64_t v)
{
    put_u64(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* A string: its length + 1 (0 for none), then its bytes. */
static void put_s(obuf *b, const char *s)
{
    if (!s) {
        put_u64(b, 0);
        return;
    }
    size_t n = strlen(s);
    if (n >= SY_WF_CACHE_NONE) {
        b->bad = true;
        return;
    }
    put_u64(b, (uint64_t)n + 1);
    put(b, s, n);
}

/* A JSON value as compact text (NULL: none). */
static void put_json(obuf *b, const json_t *v)
{
    if (!v) {
        put_s(b, NULL);
        return;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        b->bad = true;
    else
        put_s(b, text);
    free(text);
}

static bool same_retry(const sy_retry *x, const sy_retry *y)
{
    return x->attempts == y->attempts && x->delay_ms == y->delay_ms &&
           x->backoff == y->backoff && x->max_delay_ms == y->max_delay_ms &&
           x->jitter == y->jitter && x->retry_on == y->retry_on;
}

/* Nearly every task shares the workflow's retry group: each distinct one
 * is written once and tasks name it by number.  *ids is task -> group. */
static void put_retries(obuf *b, const sy_workflow *wf, uint32_t *ids)
{
    sy_retry *v = malloc(sizeof *v * (wf->n_tasks ? wf->n_tasks : 1));
    if (!v) {
        b->bad = true;
        return;
    }
    uint32_t n = 0;
    for (size_t i = 0; i < wf->n_tasks; i++) {
        uint32_t k = n;
        /* The last group first: runs of equal groups are the rule. */
        if (n && same_retry(&v[n - 1], &wf->tasks[i].retry))
            k = n - 1;
        else
            for (k = 0; k < n && !same_retry(&v[k], &wf->tasks[i].retry); k++)
                if (k >= 64) { /* many distinct groups: stop looking */
                    k = n;
                    break;
                }
        if (k == n)
            v[n++] = wf->tasks[i].retry;
        ids[i] = k;
    }
    put_u32(b, n);
    for (uint32_t k = 0; k < n; k++) {
        put_u32(b, v[k].attempts);
        put_i64(b, v[k].delay_ms);
        put(b, &v[k].backoff, sizeof v[k].backoff);
        put_i64(b, v[k].max_delay_ms);
        put_u32(b, v[k].jitter);
        put_u32(b, v[k].retry_on);
    }
    free(v);
}

/* `when` in the canonical definition's form (definition_read.c reads it). */
static json_t *when_json(const sy_task_def *t)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < t->n_when; i++) {
        json_t *c = json_object();
        if (!c || json_object_set_new(c, "path", json_string(t->when[i].path)) ||
            json_object_set_new(c, "op", json_string(sy_cond_op_name(t->when[i].op))) ||
            json_object_set_new(c, "value", json_incref(t->when[i].value)) ||
            json_array_append_new(a, c)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static void put_task(obuf *b, const sy_task_def *t, size_t i, uint32_t retry)
{
    put_s(b, t->id);
    put_u32(b, (uint32_t)t->line);
    put_u32(b, (uint32_t)t->trigger);
    put_i64(b, t->timeout_ms);
    put_u32(b, retry);
    put_u32(b, (uint32_t)t->n_deps);
    for (size_t k = 0; k < t->n_deps; k++)
        put_i64(b, (int64_t)t->deps[k] - (int64_t)i);
    put_u32(b, t->mapped);
    put_s(b, t->map);
    put_i64(b, t->range_from);
    put_i64(b, t->range_to);
    put_i64(b, t->max_map);
    /* An empty object, as most tasks have, is written as nothing. */
    put_json(b, t->params && json_object_size(t->params) ? t->params : NULL);
    if (t->n_when) {
        json_t *w = when_json(t);
        if (!w)
            b->bad = true;
        put_json(b, w);
        json_decref(w);
    } else {
        put_s(b, NULL);
    }
    put_i64(b, t->priority);
    json_t *flow = t->flow ? sy_flow_json(t->flow) : NULL;
    if (t->flow && !flow)
        b->bad = true;
    put_json(b, flow);
    json_decref(flow);
    json_t *cache = t->cache ? sy_task_cache_json(t->cache) : NULL;
    if (t->cache && !cache)
        b->bad = true;
    put_json(b, cache);
    json_decref(cache);
}

int sy_wf_cache_encode(const sy_workflow *wf, const unsigned char key[32], int name_line,
                       char **out, size_t *out_len)
{
    obuf b = {0};
    /* A workflow with triggers is read from its file: the entry's layout
     * has no place for them. */
    if (wf->n_tasks >= SY_WF_CACHE_NONE || wf->n_triggers)
        return -1;
    uint32_t *retry = malloc(sizeof *retry * (wf->n_tasks ? wf->n_tasks : 1));
    if (!retry)
        return -1;
    /* The header, its checksum filled in last. */
    uint32_t head[3] = {SY_WF_CACHE_FORMAT, SY_WF_CACHE_BOM, SY_DEFINITION_VERSION};
    put(&b, SY_WF_CACHE_MAGIC, 4);
    put(&b, head, sizeof head);
    unsigned char zero[40] = {0}; /* checksum, payload length */
    put(&b, zero, sizeof zero);
    size_t start = b.len;
    put(&b, key, 32);
    put_s(&b, PACKAGE_VERSION);
    put_s(&b, wf->base_dir);
    put_s(&b, wf->name);
    put_s(&b, wf->tenant);
    put_s(&b, wf->description);
    put_s(&b, wf->schedule);
    put_s(&b, wf->timezone);
    put_u32(&b, (uint32_t)wf->catchup);
    put_u32(&b, wf->catchup_max);
    put_u32(&b, (uint32_t)name_line);
    put(&b, wf->hash, 64);
    put_retries(&b, wf, retry);
    put_u32(&b, (uint32_t)wf->n_tasks);
    for (size_t i = 0; i < wf->n_tasks; i++)
        put_task(&b, &wf->tasks[i], i, retry[i]);
    /* Each as the step from the one before: mostly 1, in file order. */
    for (size_t i = 0; i < wf->n_tasks; i++)
        put_i64(&b, (int64_t)wf->topo[i] - (i ? (int64_t)wf->topo[i - 1] : 0));
    free(retry);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    if (b.bad || EVP_Digest(b.p + start, b.len - start, md, &md_len, EVP_sha256(), NULL) != 1 ||
        md_len != 32) {
        free(b.p);
        return -1;
    }
    memcpy(b.p + SY_WF_CACHE_SUM_AT, md, 32);
    uint64_t payload = b.len - start;
    memcpy(b.p + SY_WF_CACHE_SUM_AT + 32, &payload, sizeof payload);
    *out = b.p;
    *out_len = b.len;
    return 0;
}
