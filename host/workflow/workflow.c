/* Workflow files: reading and validating one libconfig workflow, and a
 * directory of them.  Every problem is reported in one pass with its
 * FILE:LINE; a workflow with any error is never handed out. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/integers.h"
#include "base/duration.h"
#include "config/params.h"
#include "base/util.h"
#include "workflow/internal.h"

const char *const sy_workflow_task_keys[] = {
    "id", "after", "trigger", "when", "retry", "timeout", "description", NULL,
};

static const char *const top_keys[] = {"workflow", NULL};
static const char *const wf_keys[] = {
    "name", "tenant", "description", "schedule", "retry", "timeout", "tasks", NULL,
};

/* --- small checks shared with workflow/definition.c ----------------------------------- */

static bool seg_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

bool sy_wf_name_valid(const char *name, bool multi)
{
    if (!name)
        return false;
    for (const char *p = name;;) {
        const char *start = p;
        while (seg_char(*p))
            p++;
        if (p == start)
            return false;
        if (!*p)
            return true;
        if (!multi || strncmp(p, "::", 2) != 0)
            return false;
        p += 2;
    }
}

bool sy_wf_utf8_valid(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    json_decref(j);
    return j != NULL;
}

/* --- cron -------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int lo, hi;
} cron_fields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

/* A decimal number of at most 4 digits at *p; -1 when there is none. */
static int cron_num(const char **p)
{
    int v = 0, n = 0;
    while (**p >= '0' && **p <= '9') {
        if (++n > 4)
            return INT_MAX;
        v = v * 10 + (*(*p)++ - '0');
    }
    return n ? v : -1;
}

/* Checks one comma-separated item of field f: *, n, a-b, * /n, a-b/n. */
static const char *cron_item(const char *item, int f, char *buf, size_t len)
{
    int lo = cron_fields[f].lo, hi = cron_fields[f].hi;
    const char *p = item;
    bool range = true;
    if (*p == '*') {
        p++;
    } else {
        int a, b;
        a = b = cron_num(&p);
        range = *p == '-';
        if (range) {
            p++;
            b = cron_num(&p);
        }
        if (a < 0 || b < 0)
            return sy_errf(buf, len, "\"%s\" is not a number, a range a-b or '*'", item);
        if (a < lo || a > hi || b < lo || b > hi)
            return sy_errf(buf, len, "\"%s\" is out of range %d-%d", item, lo, hi);
        if (a > b)
            return sy_errf(buf, len, "range \"%s\" runs backwards", item);
    }
    if (*p == '/') {
        if (!range)
            return sy_errf(buf, len, "step in \"%s\" needs '*' or a range a-b before it", item);
        p++;
        int step = cron_num(&p);
        if (step < 1 || step > hi)
            return sy_errf(buf, len, "step in \"%s\" must be from 1 to %d", item, hi);
    }
    if (*p)
        return sy_errf(buf, len, "\"%s\" is not *, n, a-b, */n or a-b/n", item);
    return NULL;
}

static const char *cron_field(char *field, int f, char *buf, size_t len)
{
    char *save = NULL;
    if (field[0] == ',' || field[strlen(field) - 1] == ',' || strstr(field, ",,"))
        return sy_errf(buf, len, "\"%s\" has an empty list item", field);
    for (char *item = strtok_r(field, ",", &save); item;
         item = strtok_r(NULL, ",", &save))
        if (cron_item(item, f, buf, len))
            return buf;
    return NULL;
}

const char *sy_cron_problem(const char *expr, char *buf, size_t len)
{
    char *copy = sy_xstrdup(expr ? expr : "");
    char why[200], *save = NULL;
    int n = 0;
    const char *bad = NULL;
    for (char *field = strtok_r(copy, " \t", &save); field;
         field = strtok_r(NULL, " \t", &save)) {
        if (n == 5) {
            n++; /* one too many is enough to say so */
            break;
        }
        if (!bad && cron_field(field, n, why, sizeof why))
            bad = sy_errf(buf, len, "schedule \"%s\": %s field: %s", expr,
                          cron_fields[n].name, why);
        n++;
    }
    free(copy);
    if (bad)
        return bad;
    if (n != 5)
        return sy_errf(buf, len,
                       "schedule \"%s\" must have 5 fields: minute hour "
                       "day-of-month month day-of-week, e.g. \"*/5 * * * *\"",
                       expr ? expr : "");
    return NULL;
}

/* --- settings helpers ------------------------------------------------------------ */

int sy_setting_duration(const config_setting_t *s, int64_t *ms, sy_diags *d)
{
    const char *name = config_setting_name(s);
    char why[256];
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        if (config_setting_get_int64(s) >= 0) {
            *ms = config_setting_get_int64(s);
            return 0;
        }
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'%s' must not be negative (milliseconds)", name);
        return 1;
    case CONFIG_TYPE_STRING:
        if (sy_duration_parse(config_setting_get_string(s), ms, why, sizeof why) == 0)
            return 0;
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "'%s': %s", name, why);
        return 1;
    default:
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'%s' must be a duration such as \"250ms\", \"5s\", \"1m\" or "
                 "integer milliseconds",
                 name);
        return 1;
    }
}

static bool known(const char *name, const char *const *keys)
{
    for (; *keys; keys++)
        if (strcmp(name, *keys) == 0)
            return true;
    return false;
}

int sy_setting_check_keys(const config_setting_t *g, const char *const *keys,
                          const char *where, sy_diags *d)
{
    int errors = 0;
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        if (known(config_setting_name(s), keys))
            continue;
        char list[512];
        size_t off = 0;
        list[0] = '\0';
        for (const char *const *k = keys; *k; k++)
            off += (size_t)snprintf(list + off, off < sizeof list ? sizeof list - off : 0,
                                    "%s%s", off ? ", " : "", *k);
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "unknown key '%s' in %s (known: %s)",
                 config_setting_name(s), where, list);
        errors++;
    }
    return errors;
}

/* A string member, or NULL (absent, or reported when of another type or
 * not UTF-8). */
static const char *get_string(const config_setting_t *g, const char *key,
                              const char *what, sy_diags *d)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return NULL;
    const char *v = config_setting_get_string(s);
    if (!v || !sy_wf_utf8_valid(v)) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s must be %s", what,
                 v ? "valid UTF-8 text" : "a string");
        return NULL;
    }
    return v;
}

/* --- loading one file ---------------------------------------------------------- */

typedef struct loader {
    sy_diags *d;
    sy_workflow *wf;
    sy_retry retry;        /* the workflow's, over the defaults */
    int64_t timeout_ms;    /* the workflow's; 0 for none */
    bool ns_ok;            /* name and tenant valid: tasks get namespaces */
    int name_line;
    sy_wf_after *after;    /* per task */
    const config_setting_t **settings; /* per task; NULL when not a group */
} loader;

static void read_name(loader *L, const config_setting_t *g)
{
    const config_setting_t *s = config_setting_get_member(g, "name");
    if (!s) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "workflow has no 'name' (e.g. name = \"etl\";)");
        return;
    }
    L->name_line = SY_SRC_LINE(s);
    const char *v = config_setting_get_string(s);
    if (!sy_wf_name_valid(v, true)) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "invalid workflow name%s%s%s: use letters, digits, '_', '.' and "
                 "'-', in segments joined by \"::\"",
                 v ? " \"" : "", v ? v : "", v ? "\"" : "");
        return;
    }
    L->wf->name = sy_xstrdup(v);
}

static void read_tenant(loader *L, const config_setting_t *g)
{
    const config_setting_t *s = config_setting_get_member(g, "tenant");
    if (!s) {
        L->wf->tenant = sy_xstrdup("public");
        return;
    }
    const char *v = config_setting_get_string(s);
    if (!sy_wf_name_valid(v, false)) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "invalid tenant%s%s%s: use letters, digits, '_', '.' and '-' "
                 "(one segment, no \"::\")",
                 v ? " \"" : "", v ? v : "", v ? "\"" : "");
        return;
    }
    L->wf->tenant = sy_xstrdup(v);
}

static void read_schedule(loader *L, const config_setting_t *g)
{
    const char *v = get_string(g, "schedule", "'schedule'", L->d);
    if (!v)
        return;
    char why[512];
    const config_setting_t *s = config_setting_get_member(g, "schedule");
    if (sy_cron_problem(v, why, sizeof why))
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s", why);
    else
        L->wf->schedule = sy_xstrdup(v);
}

static void read_workflow_keys(loader *L, const config_setting_t *g)
{
    sy_setting_check_keys(g, wf_keys, "workflow", L->d);
    read_name(L, g);
    read_tenant(L, g);
    L->ns_ok = L->wf->name && L->wf->tenant;
    const char *desc = get_string(g, "description", "'description'", L->d);
    if (desc)
        L->wf->description = sy_xstrdup(desc);
    read_schedule(L, g);
    const config_setting_t *s;
    if ((s = config_setting_get_member(g, "retry")))
        sy_retry_read(s, &L->retry, L->d);
    if ((s = config_setting_get_member(g, "timeout")))
        sy_setting_duration(s, &L->timeout_ms, L->d);
}

static void read_id(loader *L, sy_task_def *t, const config_setting_t *g, size_t i)
{
    const config_setting_t *s = config_setting_get_member(g, "id");
    if (!s) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "task %zu has no 'id' (e.g. id = \"extract\";)", i + 1);
        return;
    }
    const char *v = config_setting_get_string(s);
    if (!sy_wf_name_valid(v, false)) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "invalid task id%s%s%s: use letters, digits, '_', '.' and '-'",
                 v ? " \"" : "", v ? v : "", v ? "\"" : "");
        return;
    }
    t->id = sy_xstrdup(v);
}

static void read_after(loader *L, const sy_task_def *t, const config_setting_t *g,
                       size_t i)
{
    const config_setting_t *s = config_setting_get_member(g, "after");
    if (!s)
        return;
    char who[160];
    sy_wf_task_label(t, i, who, sizeof who);
    sy_wf_after *a = &L->after[i];
    a->line = SY_SRC_LINE(s);
    int type = config_setting_type(s);
    if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'after' must be a list of task ids, e.g. after = [\"extract\"]", who);
        return;
    }
    int len = config_setting_length(s);
    a->v = sy_xmalloc(sizeof *a->v * (size_t)(len > 0 ? len : 1));
    for (int k = 0; k < len; k++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
        const char *id = config_setting_get_string(e);
        if (!id) {
            sy_error(L->d, SY_SRC_FILE(e), SY_SRC_LINE(e),
                     "%s: 'after' entry %d must be a task id (a string), e.g. "
                     "after = [\"extract\"]",
                     who, k + 1);
            continue;
        }
        a->v[a->n++] = (sy_wf_ref){id, SY_SRC_LINE(e)};
    }
}

static void read_trigger(loader *L, sy_task_def *t, const config_setting_t *g,
                         const char *who)
{
    const config_setting_t *s = config_setting_get_member(g, "trigger");
    if (!s)
        return;
    const char *v = config_setting_get_string(s);
    int trig = sy_trigger_parse(v);
    if (trig < 0) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: unknown trigger%s%s%s (valid: all_success, all_done, "
                 "all_failed, one_success, one_failed, none_failed, always)",
                 who, v ? " '" : "", v ? v : "", v ? "'" : "");
        return;
    }
    t->trigger = (sy_trigger)trig;
}

static void read_params(loader *L, sy_task_def *t, const config_setting_t *g,
                        const char *who)
{
    t->params = sy_params_from_setting(g, sy_workflow_task_keys);
    if (!t->params)
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "%s: its parameters cannot be held in JSON (text that is not "
                 "valid UTF-8?)",
                 who);
}

static void read_task(loader *L, size_t i, const config_setting_t *g)
{
    sy_task_def *t = &L->wf->tasks[i];
    t->line = SY_SRC_LINE(g);
    t->retry = L->retry;
    t->timeout_ms = L->timeout_ms;
    t->trigger = SY_TRIGGER_ALL_SUCCESS;
    L->after[i].line = t->line;
    if (!config_setting_is_group(g)) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "task %zu must be a group, e.g. { id = \"extract\"; command = "
                 "[\"./extract\"]; }",
                 i + 1);
        return;
    }
    L->settings[i] = g;
    read_id(L, t, g, i);
    char who[160];
    sy_wf_task_label(t, i, who, sizeof who);
    read_after(L, t, g, i);
    read_trigger(L, t, g, who);
    const config_setting_t *s;
    if ((s = config_setting_get_member(g, "when")))
        sy_when_read(s, &t->when, &t->n_when, L->d);
    if ((s = config_setting_get_member(g, "retry")))
        sy_retry_read(s, &t->retry, L->d);
    if ((s = config_setting_get_member(g, "timeout")))
        sy_setting_duration(s, &t->timeout_ms, L->d);
    get_string(g, "description", "task 'description'", L->d);
    read_params(L, t, g, who);
    if (L->ns_ok && t->id)
        t->ns = sy_asprintf("%s::%s::%s", L->wf->tenant, L->wf->name, t->id);
}

static void read_tasks(loader *L, const config_setting_t *g)
{
    const config_setting_t *s = config_setting_get_member(g, "tasks");
    if (!s) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "workflow has no 'tasks' (e.g. tasks = ( { id = \"a\"; ... } );)");
        return;
    }
    int len = config_setting_length(s), type = config_setting_type(s);
    bool list = type == CONFIG_TYPE_LIST || type == CONFIG_TYPE_ARRAY;
    if (!list || (type == CONFIG_TYPE_ARRAY && len > 0)) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'tasks' must be a list of groups, e.g. tasks = ( { id = \"a\"; ... } );");
        return;
    }
    if (len == 0) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'tasks' is empty: a workflow needs at least one task");
        return;
    }
    size_t n = (size_t)len;
    L->wf->tasks = calloc(n, sizeof *L->wf->tasks);
    L->after = calloc(n, sizeof *L->after);
    L->settings = calloc(n, sizeof *L->settings);
    if (!L->wf->tasks || !L->after || !L->settings) {
        fputs("switchyard: out of memory\n", stderr);
        abort();
    }
    L->wf->n_tasks = n;
    for (size_t i = 0; i < n; i++)
        read_task(L, i, config_setting_get_elem(s, (unsigned)i));
}

/* The plugin's view of each task, while the settings still know lines.
 * Run only for tasks with a namespace; a check that counts more errors
 * than it reported still has them counted. */
static int run_checks(loader *L, sy_task_check_fn check, void *arg)
{
    int extra = 0;
    for (size_t i = 0; check && i < L->wf->n_tasks; i++) {
        if (!L->settings[i] || !L->wf->tasks[i].ns)
            continue;
        size_t before = L->d->errors;
        int n = check(arg, L->wf, &L->wf->tasks[i], L->settings[i], L->d);
        int added = (int)(L->d->errors - before);
        if (n > added)
            extra += n - added;
    }
    return extra;
}

static void parse_error(const config_t *lc, const char *path, int saved_errno,
                        sy_diags *d)
{
    if (config_error_type(lc) == CONFIG_ERR_FILE_IO || !config_error_file(lc))
        sy_error(d, path, 0, "cannot read: %s",
                 strerror(saved_errno ? saved_errno : ENOENT));
    else
        sy_error(d, config_error_file(lc), config_error_line(lc), "%s",
                 config_error_text(lc));
}

static char *base_dir_of(const char *path)
{
    char *dir = sy_path_dirname(path);
    char *real = realpath(dir, NULL);
    if (!real)
        return dir;
    free(dir);
    return real;
}

static void read_config(loader *L, const config_t *lc, const char *path)
{
    const config_setting_t *root = config_root_setting(lc);
    sy_setting_check_keys(root, top_keys, "a workflow file", L->d);
    const config_setting_t *g = config_setting_get_member(root, "workflow");
    if (!g || !config_setting_is_group(g)) {
        sy_error(L->d, path, g ? SY_SRC_LINE(g) : 0,
                 "a workflow file holds one group: workflow = { name = \"...\"; "
                 "tasks = ( ... ); };");
        return;
    }
    read_workflow_keys(L, g);
    read_tasks(L, g);
    if (L->wf->n_tasks)
        sy_wf_graph(L->wf, L->after, path, L->d);
}

/* --- reporting in file order ------------------------------------------------ */

typedef struct diag_pos {
    sy_diag g;
    size_t i;
} diag_pos;

static int diag_cmp(const void *a, const void *b)
{
    const diag_pos *x = a, *y = b;
    int c = strcmp(x->g.file ? x->g.file : "", y->g.file ? y->g.file : "");
    if (c == 0)
        c = (x->g.line > y->g.line) - (x->g.line < y->g.line);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The checks run key by key, then graph-wide; a reader wants the problems
 * of a file top to bottom.  Sorts d->v[from..] by file and line, stably. */
static void sort_diags(sy_diags *d, size_t from)
{
    size_t n = d->n - from;
    diag_pos *v = n > 1 ? calloc(n, sizeof *v) : NULL;
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = (diag_pos){d->v[from + i], i};
    qsort(v, n, sizeof *v, diag_cmp);
    for (size_t i = 0; i < n; i++)
        d->v[from + i] = v[i].g;
    free(v);
}

static int load_file(const char *path, sy_task_check_fn check, void *arg,
                     sy_workflow **out, int *name_line, sy_diags *d)
{
    size_t before = d->errors;
    config_t lc;
    config_init(&lc);
    char *dir = sy_path_dirname(path);
    config_set_include_dir(&lc, dir);
    errno = 0;
    if (config_read_file(&lc, path) != CONFIG_TRUE) {
        parse_error(&lc, path, errno, d);
        config_destroy(&lc);
        free(dir);
        return (int)(d->errors - before);
    }
    free(dir);
    loader L = {.d = d, .retry = sy_retry_default};
    L.wf = calloc(1, sizeof *L.wf);
    if (!L.wf) {
        fputs("switchyard: out of memory\n", stderr);
        abort();
    }
    L.wf->file = sy_xstrdup(path);
    L.wf->base_dir = base_dir_of(path);
    size_t first = d->n;
    sy_cfg_check_ints(&lc, path, d);
    read_config(&L, &lc, path);
    int extra = run_checks(&L, check, arg);
    int errors = (int)(d->errors - before) + extra;
    sort_diags(d, first);
    config_destroy(&lc);
    sy_wf_after_free(L.after, L.wf->n_tasks);
    free(L.settings);
    if (errors == 0 && sy_workflow_seal(L.wf) != 0) {
        sy_error(d, path, 0, "out of memory writing the workflow's definition");
        errors++;
    }
    if (errors) {
        sy_workflow_free(L.wf);
        return errors;
    }
    *out = L.wf;
    if (name_line)
        *name_line = L.name_line;
    return 0;
}

int sy_workflow_load_file(const char *path, sy_task_check_fn check, void *arg,
                          sy_workflow **out, sy_diags *d)
{
    return load_file(path, check, arg, out, NULL, d);
}

/* --- directories ----------------------------------------------------------------- */

static int cfg_filter(const struct dirent *e)
{
    return e->d_name[0] != '.' && sy_str_ends_with(e->d_name, ".cfg");
}

/* Byte order, not the locale's: the same files load in the same order
 * everywhere. */
static int name_cmp(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static const sy_workflow *find_same(sy_workflow **v, size_t n, const sy_workflow *wf)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i]->name, wf->name) == 0 && strcmp(v[i]->tenant, wf->tenant) == 0)
            return v[i];
    return NULL;
}

static int add_loaded(sy_workflow *wf, int line, sy_workflow ***out, size_t *n,
                      sy_diags *d)
{
    const sy_workflow *same = find_same(*out, *n, wf);
    if (same) {
        sy_error(d, wf->file, line,
                 "workflow \"%s\" of tenant \"%s\" is already defined in %s",
                 wf->name, wf->tenant, same->file ? same->file : "(a stored definition)");
        sy_workflow_free(wf);
        return 1;
    }
    sy_workflow **v = realloc(*out, sizeof *v * (*n + 1));
    if (!v) {
        fputs("switchyard: out of memory\n", stderr);
        abort();
    }
    v[(*n)++] = wf;
    *out = v;
    return 0;
}

static int load_entry(const char *dir, const char *name, sy_task_check_fn check,
                      void *arg, sy_workflow ***out, size_t *n, sy_diags *d)
{
    char *path = sy_path_join(dir, name);
    struct stat st;
    int errors = 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        sy_warn(d, path, 0, "not a regular file; skipped");
    } else {
        sy_workflow *wf = NULL;
        int line = 0;
        errors = load_file(path, check, arg, &wf, &line, d);
        if (!errors)
            errors = add_loaded(wf, line, out, n, d);
    }
    free(path);
    return errors;
}

int sy_workflow_load_dir(const char *dir, sy_task_check_fn check, void *arg,
                         sy_workflow ***out, size_t *n, sy_diags *d)
{
    struct dirent **names = NULL;
    int count = scandir(dir, &names, cfg_filter, name_cmp);
    if (count < 0) {
        if (errno == ENOENT) {
            sy_warn(d, dir, 0, "workflow directory does not exist");
            return 0;
        }
        sy_error(d, dir, 0, "cannot read workflow directory: %s", strerror(errno));
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < count; i++) {
        errors += load_entry(dir, names[i]->d_name, check, arg, out, n, d);
        free(names[i]);
    }
    free(names);
    return errors;
}

/* --- the rest --------------------------------------------------------------------- */

void sy_workflow_free(sy_workflow *wf)
{
    if (!wf)
        return;
    for (size_t i = 0; wf->tasks && i < wf->n_tasks; i++) {
        sy_task_def *t = &wf->tasks[i];
        free(t->id);
        free(t->ns);
        free(t->deps);
        free(t->children);
        sy_conds_free(t->when, t->n_when);
        json_decref(t->params);
    }
    free(wf->tasks);
    free(wf->name);
    free(wf->tenant);
    free(wf->description);
    free(wf->schedule);
    free(wf->file);
    free(wf->base_dir);
    free(wf->topo);
    free(wf->definition);
    free(wf);
}

long sy_workflow_task_index(const sy_workflow *wf, const char *id)
{
    for (size_t i = 0; wf && id && i < wf->n_tasks; i++)
        if (wf->tasks[i].id && strcmp(wf->tasks[i].id, id) == 0)
            return (long)i;
    return -1;
}
