/* The canonical definition of a workflow: JSON with sorted keys and no
 * spaces, holding everything needed to rebuild it, and its SHA-256.  A run
 * keeps the definition it started with; definition_read.c reads it back.
 * This file writes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "workflow/internal.h"
#include "workflow/start_trigger.h"


/* The definition is written straight into a buffer, byte for byte what
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) makes of the same tree (keys
 * below are in that order): building the tree first cost more than the
 * rest of loading a workflow of 2,000 tasks with 200,000 dependencies.
 * Values that are JSON already (params, condition values) and strings that
 * may need escaping go through jansson; task ids, which are letters,
 * digits, '_', '.' and '-', are written as they are. */
typedef struct wbuf {
    char *p;
    size_t len, cap;
    bool bad;
    double last_real;    /* the last real written, and its text: most */
    char last_text[40];  /* tasks share one retry backoff */
    sy_retry last_retry; /* the last retry group written, and where its */
    size_t retry_at, retry_len; /* text is in p: most tasks share one */
    bool have_retry;
} wbuf;

/* Room for `n` more bytes and the NUL; where they go, or NULL (and the
 * buffer spoilt) when there is no memory. */
static char *reserve(wbuf *b, size_t n)
{
    if (b->bad)
        return NULL;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = true;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->len;
}

static void put_mem(wbuf *b, const char *s, size_t n)
{
    char *p = reserve(b, n);
    if (!p)
        return;
    memcpy(p, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void put_str(wbuf *b, const char *s) { put_mem(b, s, strlen(s)); }

/* A task id: its characters need no escaping. */
static void put_id(wbuf *b, const char *id)
{
    put_mem(b, "\"", 1);
    put_str(b, id);
    put_mem(b, "\"", 1);
}

/* Any JSON value as jansson writes it; takes the reference.  NULL (a
 * string that is not UTF-8, no memory) spoils the buffer. */
static void put_json(wbuf *b, json_t *v)
{
    char *text = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
    json_decref(v);
    if (!text) {
        b->bad = true;
        return;
    }
    put_str(b, text);
    free(text);
}

static void put_int(wbuf *b, long long v)
{
    char num[24], *p = num + sizeof num;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--p = '-';
    put_mem(b, p, (size_t)(num + sizeof num - p));
}

/* A real as jansson writes it (its own formatting, remembered once). */
static void put_real(wbuf *b, double v)
{
    if (!b->last_text[0] || v != b->last_real) {
        json_t *real = json_real(v);
        char *text = real ? json_dumps(real, JSON_ENCODE_ANY) : NULL;
        json_decref(real);
        if (!text || strlen(text) >= sizeof b->last_text) {
            free(text);
            b->bad = true;
            return;
        }
        strcpy(b->last_text, text);
        free(text);
        b->last_real = v;
    }
    put_str(b, b->last_text);
}

/* A string escaped as jansson escapes it without flags: '"', '\\' and
 * the control characters; everything else (valid UTF-8 already) as is. */
static void put_escaped(wbuf *b, const char *s, size_t n)
{
    put_mem(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put_mem(b, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': put_mem(b, "\\\"", 2); break;
        case '\\': put_mem(b, "\\\\", 2); break;
        case '\b': put_mem(b, "\\b", 2); break;
        case '\f': put_mem(b, "\\f", 2); break;
        case '\n': put_mem(b, "\\n", 2); break;
        case '\r': put_mem(b, "\\r", 2); break;
        case '\t': put_mem(b, "\\t", 2); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04X", c);
            put_mem(b, esc, 6);
        }
    }
    put_mem(b, s + run, n - run);
    put_mem(b, "\"", 1);
}

static int key_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Any JSON value, compact with sorted keys, as json_dumps writes it. */
static void put_value(wbuf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), k = 0;
        const char **keys = n ? malloc(n * sizeof *keys) : NULL;
        if (n && !keys) {
            b->bad = true;
            return;
        }
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val) keys[k++] = key;
        if (n > 1)
            qsort(keys, n, sizeof *keys, key_cmp);
        put_mem(b, "{", 1);
        for (size_t i = 0; i < n; i++) {
            if (i)
                put_mem(b, ",", 1);
            put_escaped(b, keys[i], strlen(keys[i]));
            put_mem(b, ":", 1);
            put_value(b, json_object_get(v, keys[i]));
        }
        put_mem(b, "}", 1);
        free(keys);
        break;
    }
    case JSON_ARRAY:
        put_mem(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                put_mem(b, ",", 1);
            put_value(b, json_array_get(v, i));
        }
        put_mem(b, "]", 1);
        break;
    case JSON_STRING:
        put_escaped(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        put_int(b, (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        put_str(b, "true");
        break;
    case JSON_FALSE:
        put_str(b, "false");
        break;
    default:
        put_str(b, "null");
    }
}

static bool same_retry(const sy_retry *x, const sy_retry *y)
{
    return x->attempts == y->attempts && x->delay_ms == y->delay_ms &&
           x->backoff == y->backoff && x->max_delay_ms == y->max_delay_ms &&
           x->jitter == y->jitter && x->retry_on == y->retry_on;
}

static void put_retry_text(wbuf *b, const sy_retry *r);

/* The same group as the last task's is copied from the text written then. */
static void put_retry(wbuf *b, const sy_retry *r)
{
    if (b->have_retry && same_retry(r, &b->last_retry)) {
        char *p = reserve(b, b->retry_len);
        if (p) {
            memcpy(p, b->p + b->retry_at, b->retry_len);
            b->len += b->retry_len;
            b->p[b->len] = '\0';
        }
        return;
    }
    size_t at = b->len;
    put_retry_text(b, r);
    b->last_retry = *r;
    b->retry_at = at;
    b->retry_len = b->len - at;
    b->have_retry = true;
}

static void put_retry_text(wbuf *b, const sy_retry *r)
{
    put_str(b, "{\"attempts\":");
    put_int(b, r->attempts);
    put_str(b, ",\"backoff\":");
    put_real(b, r->backoff);
    put_str(b, ",\"delay_ms\":");
    put_int(b, r->delay_ms);
    put_str(b, r->jitter ? ",\"jitter\":true" : ",\"jitter\":false");
    put_str(b, ",\"max_delay_ms\":");
    put_int(b, r->max_delay_ms);
    put_str(b, ",\"retry_on\":[");
    bool first = true;
    for (unsigned bit = SY_RETRY_ON_FAILED; bit <= SY_RETRY_ON_TIMEOUT; bit <<= 1)
        if (r->retry_on & bit) {
            put_str(b, first ? "\"" : ",\"");
            put_str(b, sy_retry_on_name(bit));
            put_str(b, "\"");
            first = false;
        }
    put_str(b, "]}");
}

static void put_when(wbuf *b, const sy_cond *c, size_t n)
{
    put_str(b, "[");
    for (size_t i = 0; i < n; i++) {
        put_str(b, i ? ",{\"op\":" : "{\"op\":");
        put_json(b, json_string(sy_cond_op_name(c[i].op)));
        put_str(b, ",\"path\":");
        put_json(b, json_string(c[i].path));
        put_str(b, ",\"value\":");
        if (c[i].value)
            put_value(b, c[i].value);
        else
            b->bad = true;
        put_str(b, "}");
    }
    put_str(b, "]");
}

/* Every task's id as it appears in an `after` list, `,"id"`, laid end to
 * end: a large workflow writes 200,000 of them, and one copy each (after
 * one reserve a list) took 1.4 ms where three appends each took 3.5. */
typedef struct quoted {
    char *text;
    size_t *at;   /* task i's is text + at[i], at[i + 1] - at[i] bytes */
} quoted;

static bool quote_ids(const sy_workflow *wf, quoted *q)
{
    size_t total = 0;
    q->at = malloc((wf->n_tasks + 1) * sizeof *q->at);
    for (size_t i = 0; q->at && i < wf->n_tasks; i++)
        total += strlen(wf->tasks[i].id) + 3;
    q->text = q->at ? malloc(total + 1) : NULL;
    if (!q->text)
        return false;
    char *p = q->text;
    for (size_t i = 0; i < wf->n_tasks; i++) {
        q->at[i] = (size_t)(p - q->text);
        p += sprintf(p, ",\"%s\"", wf->tasks[i].id);
    }
    q->at[wf->n_tasks] = (size_t)(p - q->text);
    return true;
}

static void put_after(wbuf *b, const quoted *q, const sy_task_def *t)
{
    size_t need = 0;
    for (size_t k = 0; k < t->n_deps; k++)
        need += q->at[t->deps[k] + 1] - q->at[t->deps[k]];
    put_mem(b, "[", 1);
    char *p = need ? reserve(b, need) : NULL;
    if (p) {
        for (size_t k = 0; k < t->n_deps; k++) {
            size_t from = q->at[t->deps[k]] + (k == 0); /* no comma first */
            size_t n = q->at[t->deps[k] + 1] - from;
            memcpy(p, q->text + from, n);
            p += n;
        }
        b->len += need - 1;
    }
    put_mem(b, "]", 1);
}

/* Since version 2 a task's member is left out where it holds what a task
 * that does not set it gets (no dependencies, no parameters, the built-in
 * retry, no timeout, all_success, no conditions): a million plain tasks
 * wrote 224 MB in version 1, nine tenths of it those defaults. */
static bool plain_params(const json_t *params)
{
    return !params || (json_is_object(params) && json_object_size(params) == 0);
}

static void put_task(wbuf *b, const quoted *q, const sy_task_def *t)
{
    put_str(b, "{");
    if (t->n_deps) {
        put_str(b, "\"after\":");
        put_after(b, q, t);
        put_str(b, ",");
    }
    /* Only where set, like every member below: other definitions (and
     * hashes) stay what they were. */
    if (t->cache) {
        json_t *c = sy_task_cache_json(t->cache);
        if (!c)
            b->bad = true;
        put_str(b, "\"cache\":");
        if (c)
            put_value(b, c);
        put_str(b, ",");
        json_decref(c);
    }
    if (t->flow) {
        json_t *f = sy_flow_json(t->flow);
        if (!f)
            b->bad = true;
        put_str(b, "\"flow\":");
        if (f)
            put_value(b, f);
        put_str(b, ",");
        json_decref(f);
    }
    put_str(b, "\"id\":");
    put_id(b, t->id);
    if (t->mapped) {
        /* Only on mapped tasks: the definitions (and hashes) of others
         * stay what they were. */
        put_str(b, ",\"map\":{");
        if (t->map) {
            put_str(b, "\"key\":");
            put_json(b, json_string(t->map));
            put_str(b, ",");
        }
        put_str(b, "\"max\":");
        put_int(b, t->max_map);
        if (!t->map) {
            put_str(b, ",\"range\":[");
            put_int(b, t->range_from);
            put_str(b, ",");
            put_int(b, t->range_to);
            put_str(b, "]");
        }
        put_str(b, "}");
    }
    if (!plain_params(t->params)) {
        put_str(b, ",\"params\":");
        put_value(b, t->params);
    }
    if (t->priority) {
        put_str(b, ",\"priority\":");
        put_int(b, t->priority);
    }
    if (!same_retry(&t->retry, &sy_retry_default)) {
        put_str(b, ",\"retry\":");
        put_retry(b, &t->retry);
    }
    if (t->timeout_ms) {
        put_str(b, ",\"timeout_ms\":");
        put_int(b, t->timeout_ms);
    }
    if (t->trigger != SY_TRIGGER_ALL_SUCCESS) {
        put_str(b, ",\"trigger\":\"");
        put_str(b, sy_trigger_name(t->trigger));
        put_str(b, "\"");
    }
    if (t->n_when) {
        put_str(b, ",\"when\":");
        put_when(b, t->when, t->n_when);
    }
    put_str(b, "}");
}

static char *workflow_text(const sy_workflow *wf)
{
    /* Sized once for plain tasks (their braces, id and `after` ids quoted);
     * a task with more set grows it. */
    size_t guess = 4096;
    for (size_t i = 0; i < wf->n_tasks; i++)
        guess += 24 + (wf->tasks[i].n_deps + 1) * (strlen(wf->tasks[i].id) + 3);
    wbuf b = {.p = malloc(guess), .cap = guess};
    quoted q = {0};
    if (!b.p || !quote_ids(wf, &q)) {
        free(b.p);
        free(q.at);
        free(q.text);
        return NULL;
    }
    b.p[0] = '\0';
    put_str(&b, "{\"base_dir\":");
    put_json(&b, json_string(wf->base_dir ? wf->base_dir : ""));
    /* Only with a schedule, so that the hash of every other workflow stays
     * what it was before schedules fired. */
    if (wf->schedule) {
        put_str(&b, ",\"catchup\":");
        put_json(&b, json_string(sy_catchup_name(wf->catchup)));
        put_str(&b, ",\"catchup_max\":");
        put_json(&b, json_integer(wf->catchup_max));
    }
    if (wf->description) {
        put_str(&b, ",\"description\":");
        put_json(&b, json_string(wf->description));
    }
    put_str(&b, ",\"name\":");
    put_json(&b, json_string(wf->name));
    if (wf->schedule) {
        put_str(&b, ",\"schedule\":");
        put_json(&b, json_string(wf->schedule));
    }
    put_str(&b, ",\"tasks\":[");
    for (size_t i = 0; i < wf->n_tasks; i++) {
        if (i)
            put_mem(&b, ",", 1);
        put_task(&b, &q, &wf->tasks[i]);
    }
    put_str(&b, "],\"tenant\":");
    put_json(&b, json_string(wf->tenant));
    if (wf->timezone) {
        put_str(&b, ",\"timezone\":");
        put_json(&b, json_string(wf->timezone));
    }
    /* Only with triggers, so that the hash of every other workflow stays
     * what it was before triggers. */
    if (wf->n_triggers) {
        put_str(&b, ",\"triggers\":");
        put_json(&b, sy_start_triggers_json(wf->triggers, wf->n_triggers));
    }
    put_str(&b, ",\"version\":");
    put_int(&b, SY_DEFINITION_VERSION);
    put_str(&b, "}");
    free(q.at);
    free(q.text);
    if (b.bad) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static int sha256_hex(const char *text, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(text, strlen(text), md, &len, EVP_sha256(), NULL) != 1 || len != 32)
        return -1;
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < len; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
    return 0;
}

char *sy_wf_definition_build(const sy_workflow *wf, char hash[65])
{
    char *text = workflow_text(wf);
    if (text && sha256_hex(text, hash) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

const char *sy_workflow_definition(const sy_workflow *wf, char **built, char hash[65])
{
    *built = NULL;
    if (wf->definition) {
        memcpy(hash, wf->hash, 65);
        return wf->definition;
    }
    return *built = sy_wf_definition_build(wf, hash);
}

int sy_workflow_seal(sy_workflow *wf)
{
    char hash[65];
    char *text = sy_wf_definition_build(wf, hash);
    if (!text)
        return -1;
    free(wf->definition);
    wf->definition = text;
    memcpy(wf->hash, hash, sizeof hash);
    return 0;
}
