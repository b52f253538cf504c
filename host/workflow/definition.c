/* The canonical definition of a workflow: JSON with sorted keys and no
 * spaces, holding everything needed to rebuild it, and its SHA-256.  A run
 * keeps the definition it started with; sy_workflow_from_json reads it
 * back as strictly as a file is read, since a database can be edited. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/util.h"
#include "workflow/internal.h"

/* Bumped when the layout changes, so an old host refuses a newer one. */
#define DEFINITION_VERSION 1

/* --- writing ---------------------------------------------------------------------- */

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
    char num[32];
    put_mem(b, num, (size_t)snprintf(num, sizeof num, "%lld", v));
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

static void put_retry(wbuf *b, const sy_retry *r)
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

static void put_task(wbuf *b, const quoted *q, const sy_task_def *t)
{
    put_str(b, "{\"after\":");
    put_after(b, q, t);
    put_str(b, ",\"id\":");
    put_id(b, t->id);
    put_str(b, ",\"params\":");
    if (t->params)
        put_value(b, t->params);
    else
        put_str(b, "{}");
    put_str(b, ",\"retry\":");
    put_retry(b, &t->retry);
    put_str(b, ",\"timeout_ms\":");
    put_int(b, t->timeout_ms);
    put_str(b, ",\"trigger\":\"");
    put_str(b, sy_trigger_name(t->trigger));
    put_str(b, "\"");
    put_str(b, ",\"when\":");
    put_when(b, t->when, t->n_when);
    put_str(b, "}");
}

static char *workflow_text(const sy_workflow *wf)
{
    /* Sized once: each task's fixed part, its id, each `after` id quoted. */
    size_t guess = 4096;
    for (size_t i = 0; i < wf->n_tasks; i++)
        guess += 256 + (wf->tasks[i].n_deps + 1) * (strlen(wf->tasks[i].id) + 3);
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
    put_str(&b, ",\"version\":");
    put_int(&b, DEFINITION_VERSION);
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
    for (unsigned i = 0; i < len; i++)
        sprintf(out + 2 * i, "%02x", md[i]);
    out[64] = '\0';
    return 0;
}

int sy_workflow_seal(sy_workflow *wf)
{
    char *text = workflow_text(wf);
    char hash[65];
    if (!text || sha256_hex(text, hash) != 0) {
        free(text);
        return -1;
    }
    free(wf->definition);
    wf->definition = text;
    memcpy(wf->hash, hash, sizeof hash);
    return 0;
}

/* --- reading ------------------------------------------------------------------------- */

/* The first problem found; later ones are dropped, reading stops soon. */
typedef struct reader {
    char *err;
    size_t len;
    bool bad;
} reader;

static void fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(reader *r, const char *fmt, ...)
{
    if (r->bad)
        return;
    r->bad = true;
    if (!r->err || !r->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->len, fmt, ap);
    va_end(ap);
}

/* Refuses any key not in `keys`, and any missing one of the first `need`. */
static void only_keys(reader *r, const json_t *o, const char *const *keys,
                      size_t need, const char *where)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0)
            i++;
        if (!keys[i])
            fail(r, "%s: unknown key \"%s\"", where, k);
    }
    for (size_t i = 0; i < need; i++)
        if (!json_object_get(o, keys[i]))
            fail(r, "%s: missing \"%s\"", where, keys[i]);
}

static const char *get_str(reader *r, const json_t *o, const char *key,
                           const char *where)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return NULL;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
        fail(r, "%s: \"%s\" must be a string", where, key);
        return NULL;
    }
    return json_string_value(v);
}

/* An integer member within [lo, hi]; `dflt` when missing or bad. */
static long long get_int(reader *r, const json_t *o, const char *key,
                         long long lo, long long hi, const char *where)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        fail(r, "%s: \"%s\" must be an integer from %lld to %lld", where, key, lo, hi);
        return lo;
    }
    return json_integer_value(v);
}

static char *dup_or_null(const char *s)
{
    return s ? sy_xstrdup(s) : NULL;
}

static void read_retry(reader *r, const json_t *o, sy_retry *out, const char *where)
{
    static const char *const keys[] = {"attempts", "delay_ms", "backoff",
                                       "max_delay_ms", "jitter", "retry_on", NULL};
    if (!json_is_object(o)) {
        fail(r, "%s: \"retry\" must be an object", where);
        return;
    }
    only_keys(r, o, keys, 6, where);
    out->attempts = (uint32_t)get_int(r, o, "attempts", 1, SY_RETRY_MAX_ATTEMPTS, where);
    out->delay_ms = get_int(r, o, "delay_ms", 0, INT64_MAX, where);
    out->max_delay_ms = get_int(r, o, "max_delay_ms", 0, INT64_MAX, where);
    const json_t *b = json_object_get(o, "backoff");
    out->backoff = json_number_value(b);
    if (!json_is_number(b) || !isfinite(out->backoff) || out->backoff < 1.0)
        fail(r, "%s: \"backoff\" must be a number >= 1.0", where);
    const json_t *j = json_object_get(o, "jitter");
    if (!json_is_boolean(j))
        fail(r, "%s: \"jitter\" must be true or false", where);
    out->jitter = json_is_true(j);
    const json_t *on = json_object_get(o, "retry_on");
    out->retry_on = 0;
    for (size_t i = 0; json_is_array(on) && i < json_array_size(on); i++) {
        unsigned bit = sy_retry_on_parse(json_string_value(json_array_get(on, i)));
        if (!bit)
            fail(r, "%s: \"retry_on\" entry %zu is not \"failed\" or \"timeout\"", where,
                 i + 1);
        out->retry_on |= bit;
    }
    if (!json_is_array(on))
        fail(r, "%s: \"retry_on\" must be an array", where);
}

static void read_when(reader *r, const json_t *a, sy_task_def *t, const char *where)
{
    static const char *const keys[] = {"path", "op", "value", NULL};
    if (!json_is_array(a)) {
        fail(r, "%s: \"when\" must be an array", where);
        return;
    }
    size_t n = json_array_size(a);
    t->when = sy_xmalloc(sizeof *t->when * (n ? n : 1));
    for (size_t i = 0; i < n && !r->bad; i++) {
        const json_t *c = json_array_get(a, i);
        if (!json_is_object(c)) {
            fail(r, "%s: \"when\" entry %zu must be an object", where, i + 1);
            break;
        }
        only_keys(r, c, keys, 3, where);
        const char *path = get_str(r, c, "path", where);
        int op = sy_cond_op_parse(get_str(r, c, "op", where));
        const json_t *value = json_object_get(c, "value");
        const char *why = !path ? NULL
                          : sy_cond_path_problem(path) ? sy_cond_path_problem(path)
                          : op < 0 ? "unknown operator"
                                   : sy_cond_value_problem((sy_cond_op)op, value);
        if (why || r->bad) {
            fail(r, "%s: \"when\" entry %zu: %s", where, i + 1, why ? why : "malformed");
            break;
        }
        t->when[t->n_when++] = (sy_cond){sy_xstrdup(path), (sy_cond_op)op,
                                         json_incref((json_t *)value)};
    }
}

static void read_after(reader *r, const json_t *a, sy_wf_after *out, const char *where)
{
    if (!json_is_array(a)) {
        fail(r, "%s: \"after\" must be an array", where);
        return;
    }
    size_t n = json_array_size(a);
    out->v = sy_xmalloc(sizeof *out->v * (n ? n : 1));
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_array_get(a, i));
        if (!id) {
            fail(r, "%s: \"after\" entry %zu must be a string", where, i + 1);
            return;
        }
        out->v[out->n++] = (sy_wf_ref){id, 0};
    }
}

static void read_task(reader *r, sy_workflow *wf, size_t i, const json_t *o,
                      sy_wf_after *after)
{
    static const char *const keys[] = {"id", "after", "trigger", "when", "retry",
                                       "timeout_ms", "params", NULL};
    char where[64];
    snprintf(where, sizeof where, "task %zu", i + 1);
    if (!json_is_object(o)) {
        fail(r, "%s must be an object", where);
        return;
    }
    only_keys(r, o, keys, 7, where);
    sy_task_def *t = &wf->tasks[i];
    const char *id = get_str(r, o, "id", where);
    if (!sy_wf_name_valid(id, false))
        fail(r, "%s: invalid id", where);
    t->id = dup_or_null(id);
    int trig = sy_trigger_parse(get_str(r, o, "trigger", where));
    if (trig < 0)
        fail(r, "%s: unknown trigger", where);
    t->trigger = trig < 0 ? SY_TRIGGER_ALL_SUCCESS : (sy_trigger)trig;
    t->timeout_ms = get_int(r, o, "timeout_ms", 0, INT64_MAX, where);
    const json_t *params = json_object_get(o, "params");
    if (!json_is_object(params))
        fail(r, "%s: \"params\" must be an object", where);
    else
        t->params = json_incref((json_t *)params);
    if (r->bad)
        return;
    read_retry(r, json_object_get(o, "retry"), &t->retry, where);
    read_when(r, json_object_get(o, "when"), t, where);
    read_after(r, json_object_get(o, "after"), after, where);
    if (!r->bad)
        t->ns = sy_asprintf("%s::%s::%s", wf->tenant, wf->name, t->id);
}

static void read_header(reader *r, sy_workflow *wf, const json_t *o)
{
    static const char *const keys[] = {"version", "name", "tenant", "base_dir", "tasks",
                                       "description", "schedule", NULL};
    if (!json_is_object(o)) {
        fail(r, "the definition is not a JSON object");
        return;
    }
    only_keys(r, o, keys, 5, "definition");
    get_int(r, o, "version", DEFINITION_VERSION, DEFINITION_VERSION, "definition");
    const char *name = get_str(r, o, "name", "definition");
    const char *tenant = get_str(r, o, "tenant", "definition");
    if (!r->bad && !sy_wf_name_valid(name, true))
        fail(r, "definition: invalid workflow name");
    if (!r->bad && !sy_wf_name_valid(tenant, false))
        fail(r, "definition: invalid tenant");
    const char *schedule = get_str(r, o, "schedule", "definition");
    char why[512];
    if (schedule && sy_cron_problem(schedule, why, sizeof why))
        fail(r, "definition: %s", why);
    wf->name = dup_or_null(name);
    wf->tenant = dup_or_null(tenant);
    wf->base_dir = dup_or_null(get_str(r, o, "base_dir", "definition"));
    wf->description = dup_or_null(get_str(r, o, "description", "definition"));
    wf->schedule = dup_or_null(schedule);
}

static void read_tasks(reader *r, sy_workflow *wf, const json_t *a)
{
    if (!json_is_array(a) || json_array_size(a) == 0) {
        fail(r, "definition: \"tasks\" must be a non-empty array");
        return;
    }
    size_t n = json_array_size(a);
    wf->tasks = calloc(n, sizeof *wf->tasks);
    sy_wf_after *after = calloc(n, sizeof *after);
    if (!wf->tasks || !after) {
        free(after);
        fail(r, "out of memory");
        return;
    }
    wf->n_tasks = n;
    for (size_t i = 0; i < n && !r->bad; i++)
        read_task(r, wf, i, json_array_get(a, i), &after[i]);
    if (!r->bad) {
        sy_diags d;
        sy_diags_init(&d);
        if (sy_wf_graph(wf, after, NULL, &d) > 0)
            fail(r, "definition: %s", d.n ? d.v[0].msg : "invalid dependencies");
        sy_diags_free(&d);
    }
    sy_wf_after_free(after, n);
}

sy_workflow *sy_workflow_from_json(const char *definition, char *err, size_t err_len)
{
    reader r = {err, err_len, false};
    if (err && err_len)
        err[0] = '\0';
    if (!definition) {
        fail(&r, "no definition");
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loads(definition, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        fail(&r, "the definition is not valid JSON: %s at line %d column %d", je.text,
             je.line, je.column);
        return NULL;
    }
    sy_workflow *wf = calloc(1, sizeof *wf);
    if (!wf) {
        json_decref(root);
        fail(&r, "out of memory");
        return NULL;
    }
    read_header(&r, wf, root);
    if (!r.bad)
        read_tasks(&r, wf, json_object_get(root, "tasks"));
    json_decref(root);
    if (!r.bad && sy_workflow_seal(wf) != 0)
        fail(&r, "out of memory");
    if (r.bad) {
        sy_workflow_free(wf);
        return NULL;
    }
    return wf;
}
