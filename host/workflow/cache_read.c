/* Reading a parse cache entry (cache_write.c has the layout) back into a
 * workflow.  An entry is a file on disk that anything may have cut short
 * or changed: every length and index is checked against the buffer and
 * the model's own rules (names, unique ids, ranges, an order in which each
 * task comes after its dependencies), and any doubt is a miss, never a
 * guess. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/util.h"
#include "workflow/internal.h"

/* The flows (limits, pool) read so far, by their text: a workflow's
 * tasks mostly repeat a few (one pool, a key per column), and parsing the
 * JSON of each was most of reading the entry of a workflow with limits
 * (12,600 instructions a task's). */
#define FLOW_MEMO 256

typedef struct ibuf {
    const char *p;
    size_t len, at;
    bool bad;
    struct {
        char *text;
        json_t *v;
    } flows[FLOW_MEMO];
} ibuf;

static const char *take(ibuf *b, size_t n)
{
    if (b->bad || n > b->len - b->at) {
        b->bad = true;
        return NULL;
    }
    const char *p = b->p + b->at;
    b->at += n;
    return p;
}

static uint64_t get_u64(ibuf *b)
{
    uint64_t v = 0;
    for (unsigned shift = 0; !b->bad; shift += 7) {
        if (b->at >= b->len || shift > 63) {
            b->bad = true;
            break;
        }
        unsigned char c = (unsigned char)b->p[b->at++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    return 0;
}

static uint32_t get_u32(ibuf *b)
{
    uint64_t v = get_u64(b);
    if (v > UINT32_MAX)
        b->bad = true;
    return (uint32_t)v;
}

static int64_t get_i64(ibuf *b)
{
    uint64_t v = get_u64(b);
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A string: NULL for none (or a bad one: then b->bad).  Owned. */
static char *get_s(ibuf *b)
{
    uint64_t n = get_u64(b);
    if (b->bad || n == 0)
        return NULL;
    n--;
    const char *p = n < SY_WF_CACHE_NONE ? take(b, (size_t)n) : NULL;
    if (!p || memchr(p, '\0', (size_t)n)) {
        b->bad = true;
        return NULL;
    }
    char *s = sy_xmalloc((size_t)n + 1);
    memcpy(s, p, (size_t)n);
    s[n] = '\0';
    return s;
}

static bool same_s(ibuf *b, const char *want)
{
    char *s = get_s(b);
    bool same = s && want && strcmp(s, want) == 0;
    free(s);
    return same;
}

static json_t *get_json(ibuf *b)
{
    char *text = get_s(b);
    if (!text)
        return NULL;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
    free(text);
    if (!v)
        b->bad = true;
    return v;
}

/* get_json for a task's flow, through b->flows: a text read before gives
 * its value again. */
static json_t *get_flow(ibuf *b)
{
    char *text = get_s(b);
    if (!text)
        return NULL;
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        h = (h ^ *c) * 0x100000001b3u;
    size_t i = (size_t)(h ^ h >> 32) % FLOW_MEMO;
    if (b->flows[i].text && strcmp(b->flows[i].text, text) == 0) {
        free(text);
        return json_incref(b->flows[i].v);
    }
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
    if (!v) {
        free(text);
        b->bad = true;
        return NULL;
    }
    free(b->flows[i].text);
    json_decref(b->flows[i].v);
    b->flows[i].text = text;
    b->flows[i].v = json_incref(v);
    return v;
}

static void flows_free(ibuf *b)
{
    for (size_t i = 0; i < FLOW_MEMO; i++) {
        free(b->flows[i].text);
        json_decref(b->flows[i].v);
    }
}

static void read_header(ibuf *b, sy_workflow *wf, int *name_line)
{
    wf->name = get_s(b);
    wf->tenant = get_s(b);
    if (!sy_wf_name_valid(wf->name ? wf->name : "", true) ||
        !sy_wf_name_valid(wf->tenant ? wf->tenant : "", false))
        b->bad = true;
    wf->description = get_s(b);
    wf->schedule = get_s(b);
    wf->timezone = get_s(b);
    char why[512];
    if (wf->schedule && sy_cron_problem(wf->schedule, why, sizeof why))
        b->bad = true;
    /* Text jansson will hold, and a zone named as definition_read.c
     * accepts one: the definition is written from these. */
    if ((wf->description && !sy_wf_utf8_valid(wf->description)) ||
        (wf->schedule && !sy_wf_utf8_valid(wf->schedule)) ||
        (wf->timezone && (!sy_wf_utf8_valid(wf->timezone) || !*wf->timezone ||
                          wf->timezone[0] == '/' || strstr(wf->timezone, ".."))))
        b->bad = true;
    uint32_t catchup = get_u32(b);
    wf->catchup_max = get_u32(b);
    if (catchup > SY_CATCHUP_ALL || wf->catchup_max < 1 ||
        wf->catchup_max > SY_CATCHUP_MAX_LIMIT)
        b->bad = true;
    wf->catchup = (sy_catchup)catchup;
    uint32_t line = get_u32(b);
    *name_line = line <= INT32_MAX ? (int)line : 0;
    const char *hash = take(b, 64);
    for (int i = 0; hash && i < 64; i++)
        if (!strchr("0123456789abcdef", hash[i]) || !hash[i])
            b->bad = true;
    if (hash && !b->bad) {
        memcpy(wf->hash, hash, 64);
        wf->hash[64] = '\0';
    }
}

static sy_retry *read_retries(ibuf *b, uint32_t *n)
{
    *n = get_u32(b);
    if (b->bad || *n == 0 || *n > b->len / 13) {
        b->bad = true;
        return NULL;
    }
    sy_retry *v = sy_xmalloc(sizeof *v * *n);
    for (uint32_t k = 0; k < *n; k++) {
        sy_retry *r = &v[k];
        r->attempts = get_u32(b);
        r->delay_ms = get_i64(b);
        const char *p = take(b, sizeof r->backoff);
        if (p)
            memcpy(&r->backoff, p, sizeof r->backoff);
        r->max_delay_ms = get_i64(b);
        uint32_t jitter = get_u32(b);
        r->retry_on = get_u32(b);
        r->jitter = jitter != 0;
        if (r->attempts < 1 || r->attempts > SY_RETRY_MAX_ATTEMPTS || r->delay_ms < 0 ||
            r->max_delay_ms < 0 || !isfinite(r->backoff) || r->backoff < 1.0 || jitter > 1 ||
            (r->retry_on & ~(SY_RETRY_ON_FAILED | SY_RETRY_ON_TIMEOUT)))
            b->bad = true;
    }
    return v;
}

static void read_task(ibuf *b, sy_workflow *wf, size_t i, const sy_retry *retries,
                      uint32_t n_retries, json_t *no_params)
{
    sy_task_def *t = &wf->tasks[i];
    t->id = get_s(b);
    if (!t->id || !sy_wf_name_valid(t->id, false)) {
        b->bad = true;
        return;
    }
    uint32_t line = get_u32(b);
    t->line = line <= INT32_MAX ? (int)line : 0;
    uint32_t trigger = get_u32(b);
    t->trigger = (sy_trigger)trigger;
    t->timeout_ms = get_i64(b);
    uint32_t retry = get_u32(b);
    uint32_t n_deps = get_u32(b);
    if (b->bad || trigger > SY_TRIGGER_ALWAYS || t->timeout_ms < 0 || retry >= n_retries ||
        n_deps > wf->n_tasks || n_deps > b->len - b->at) {
        b->bad = true;
        return;
    }
    t->retry = retries[retry];
    t->deps = sy_xmalloc(sizeof *t->deps * (n_deps ? n_deps : 1));
    for (uint32_t k = 0; k < n_deps; k++) {
        int64_t step = get_i64(b); /* the dependency's index minus i */
        bool in = step >= -(int64_t)i && step < (int64_t)(wf->n_tasks - i) && step != 0;
        if (!in)
            b->bad = true;
        t->deps[t->n_deps++] = in ? (size_t)((int64_t)i + step) : 0;
    }
    uint32_t mapped = get_u32(b);
    t->map = get_s(b);
    t->range_from = get_i64(b);
    t->range_to = get_i64(b);
    t->max_map = get_i64(b);
    t->mapped = mapped == 1;
    if (mapped > 1 || (t->map && !t->mapped) ||
        (t->mapped && (t->max_map < 1 || t->max_map > SY_MAP_LIMIT || t->range_from < 0 ||
                       t->range_to < t->range_from)) ||
        (t->map && (sy_cond_path_problem(t->map) || !sy_wf_utf8_valid(t->map))))
        b->bad = true;
    t->params = get_json(b);
    if (!t->params && !b->bad)
        t->params = json_incref(no_params);
    if (!json_is_object(t->params))
        b->bad = true;
    json_t *when = get_json(b);
    if (when && !b->bad && !sy_wf_when_from_json(when, t))
        b->bad = true;
    json_decref(when);
    int64_t priority = get_i64(b);
    if (priority < SY_PRIORITY_MIN || priority > SY_PRIORITY_MAX)
        b->bad = true;
    t->priority = (int32_t)priority;
    json_t *flow = get_flow(b);
    char why[160];
    if (flow && !b->bad && !(t->flow = sy_flow_from_json(flow, why, sizeof why)))
        b->bad = true;
    json_decref(flow);
    json_t *cache = get_json(b);
    if (cache && !b->bad && !(t->cache = sy_task_cache_from_json(cache, why, sizeof why)))
        b->bad = true;
    json_decref(cache);
    if (!b->bad)
        t->ns = sy_xconcat(wf->tenant, "::", wf->name, "::", t->id, (char *)NULL);
}

/* The stored order must hold every task once, each after its
 * dependencies: then the graph has no cycle.  Children follow. */
static void read_order(ibuf *b, sy_workflow *wf)
{
    size_t n = wf->n_tasks;
    wf->topo = sy_xmalloc(sizeof *wf->topo * n);
    size_t *pos = sy_xmalloc(sizeof *pos * n);
    for (size_t i = 0; i < n; i++)
        pos[i] = SIZE_MAX;
    int64_t u = 0;
    for (size_t k = 0; k < n && !b->bad; k++) {
        int64_t step = get_i64(b);
        if (step < -u || step >= (int64_t)n - u) {
            b->bad = true;
            break;
        }
        u += step;
        if (b->bad || u < 0 || (uint64_t)u >= n || pos[u] != SIZE_MAX) {
            b->bad = true;
            break;
        }
        pos[u] = k;
        wf->topo[k] = (size_t)u;
    }
    /* Each dependency once per task: seen[] is the last task naming it. */
    for (size_t i = 0; i < n && !b->bad; i++)
        for (size_t k = 0; k < wf->tasks[i].n_deps; k++)
            if (pos[wf->tasks[i].deps[k]] >= pos[i])
                b->bad = true;
    size_t *seen = b->bad ? NULL : sy_xmalloc(sizeof *seen * n);
    for (size_t i = 0; seen && i < n; i++)
        seen[i] = SIZE_MAX;
    for (size_t i = 0; seen && i < n && !b->bad; i++)
        for (size_t k = 0; k < wf->tasks[i].n_deps; k++) {
            size_t dep = wf->tasks[i].deps[k];
            if (seen[dep] == i)
                b->bad = true;
            seen[dep] = i;
        }
    free(seen);
    free(pos);
    if (b->bad)
        return;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < wf->tasks[i].n_deps; k++)
            wf->tasks[wf->tasks[i].deps[k]].n_children++;
    for (size_t i = 0; i < n; i++) {
        sy_task_def *t = &wf->tasks[i];
        t->children = sy_xmalloc(sizeof *t->children * (t->n_children ? t->n_children : 1));
        t->n_children = 0;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < wf->tasks[i].n_deps; k++) {
            sy_task_def *p = &wf->tasks[wf->tasks[i].deps[k]];
            p->children[p->n_children++] = i;
        }
}

/* Ids are unique, as the graph of a parse made sure: an open-addressing
 * table of task indices (4 bytes a slot, twice the tasks). */
static bool ids_unique(const sy_workflow *wf)
{
    size_t cap = 16;
    while (cap < 2 * wf->n_tasks)
        cap *= 2;
    uint32_t *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return false;
    memset(slot, 0xff, cap * sizeof *slot);
    bool unique = true;
    for (size_t i = 0; i < wf->n_tasks && unique; i++) {
        size_t k = (size_t)sy_fnv1a(SY_FNV_START, wf->tasks[i].id) & (cap - 1);
        for (; slot[k] != UINT32_MAX; k = (k + 1) & (cap - 1))
            if (strcmp(wf->tasks[slot[k]].id, wf->tasks[i].id) == 0) {
                unique = false;
                break;
            }
        slot[k] = (uint32_t)i;
    }
    free(slot);
    return unique;
}

static void read_tasks(ibuf *b, sy_workflow *wf)
{
    uint32_t n_retries = 0;
    sy_retry *retries = read_retries(b, &n_retries);
    uint32_t n = get_u32(b);
    /* Each task takes at least 14 bytes: a count beyond that is a lie. */
    if (b->bad || n == 0 || n > (b->len - b->at) / 14) {
        b->bad = true;
        free(retries);
        return;
    }
    wf->tasks = calloc(n, sizeof *wf->tasks);
    if (!wf->tasks) {
        b->bad = true;
        free(retries);
        return;
    }
    wf->n_tasks = n;
    json_t *no_params = json_object();
    for (size_t i = 0; i < n && !b->bad; i++)
        read_task(b, wf, i, retries, n_retries, no_params);
    json_decref(no_params);
    free(retries);
    if (!b->bad && !ids_unique(wf))
        b->bad = true;
    if (!b->bad)
        read_order(b, wf);
}

sy_workflow *sy_wf_cache_decode(const char *buf, size_t len, const unsigned char key[32],
                                const char *base_dir, int *name_line)
{
    uint32_t format, bom, version;
    uint64_t payload;
    if (len < SY_WF_CACHE_HEADER || memcmp(buf, SY_WF_CACHE_MAGIC, 4) != 0)
        return NULL;
    memcpy(&format, buf + 4, 4);
    memcpy(&bom, buf + 8, 4);
    memcpy(&version, buf + 12, 4);
    memcpy(&payload, buf + SY_WF_CACHE_SUM_AT + 32, sizeof payload);
    if (format != SY_WF_CACHE_FORMAT || bom != SY_WF_CACHE_BOM ||
        version != SY_DEFINITION_VERSION || payload != len - SY_WF_CACHE_HEADER)
        return NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    if (EVP_Digest(buf + SY_WF_CACHE_HEADER, payload, md, &md_len, EVP_sha256(), NULL) != 1 ||
        md_len != 32 || memcmp(md, buf + SY_WF_CACHE_SUM_AT, 32) != 0)
        return NULL;
    ibuf b = {buf, len, SY_WF_CACHE_HEADER, false, {{NULL, NULL}}};
    const char *k = take(&b, 32);
    if (!k || memcmp(k, key, 32) != 0 || !same_s(&b, PACKAGE_VERSION))
        return NULL;
    /* The definition holds the file's directory: another one's entry is
     * another definition. */
    if (!same_s(&b, base_dir))
        return NULL;
    sy_workflow *wf = calloc(1, sizeof *wf);
    if (!wf)
        return NULL;
    wf->base_dir = sy_xstrdup(base_dir);
    read_header(&b, wf, name_line);
    if (!b.bad)
        read_tasks(&b, wf);
    flows_free(&b);
    if (b.bad || b.at != b.len) {
        sy_workflow_free(wf);
        return NULL;
    }
    return wf;
}
