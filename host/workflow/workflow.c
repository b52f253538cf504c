/* Workflow files: reading and validating one libconfig workflow, and a
 * directory of them.  Every problem is reported in one pass with its
 * FILE:LINE; a workflow with any error is never handed out.  This file
 * reads the workflow's own keys; parse_task.c reads its tasks. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/integers.h"
#include "config/params.h"
#include "base/tz.h"
#include "base/util.h"
#include "workflow/internal.h"
#include "workflow/start_trigger.h"

static const char *const top_keys[] = {"workflow", NULL};
static const char *const wf_keys[] = {
    "name", "tenant", "description", "schedule", "timezone", "catchup", "catchup_max",
    "retry", "timeout", "tasks", "max_map", "priority", "limits", "pool", "pool_slots", "triggers",
    "rate_limits", NULL,
};

/* --- loading one file ---------------------------------------------------------- */

static void read_name(sy_wf_loader *L, const config_setting_t *g)
{
    const config_setting_t *s = config_setting_get_member(g, "name");
    if (!s) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "workflow has no 'name' (e.g. name = \"etl\";)");
        return;
    }
    L->name_line = SY_SRC_LINE(s);
    const char *v = config_setting_get_string(s);
    const char *why = sy_wf_name_problem(v, true);
    if (why) {
        char q[300];
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s), "invalid workflow name%s%s: %s",
                 v ? " " : "", v ? sy_wf_quote(v, q, sizeof q) : "", why);
        return;
    }
    L->wf->name = sy_xstrdup(v);
}

static void read_tenant(sy_wf_loader *L, const config_setting_t *g)
{
    const config_setting_t *s = config_setting_get_member(g, "tenant");
    if (!s) {
        L->wf->tenant = sy_xstrdup("public");
        return;
    }
    const char *v = config_setting_get_string(s);
    const char *why = sy_wf_name_problem(v, false);
    if (why) {
        char q[300];
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s), "invalid tenant%s%s: %s%s",
                 v ? " " : "", v ? sy_wf_quote(v, q, sizeof q) : "", why,
                 v && strstr(v, "::") ? " (one segment, no \"::\")" : "");
        return;
    }
    L->wf->tenant = sy_xstrdup(v);
}

static void read_schedule(sy_wf_loader *L, const config_setting_t *g)
{
    const char *v = sy_setting_string(g, "schedule", "'schedule'", L->d);
    if (!v)
        return;
    char why[512];
    const config_setting_t *s = config_setting_get_member(g, "schedule");
    if (sy_cron_problem(v, why, sizeof why))
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s", why);
    else
        L->wf->schedule = sy_xstrdup(v);
}

/* A key that only means something with a schedule. */
static const config_setting_t *schedule_key(sy_wf_loader *L, const config_setting_t *g,
                                            const char *key)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (s && !config_setting_get_member(g, "schedule"))
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'%s' needs a 'schedule' (e.g. schedule = \"0 3 * * *\";)", key);
    return s;
}

/* `timezone`, `catchup`, `catchup_max`: how the schedule is read and what
 * a host that missed ticks fires. */
static void read_schedule_policy(sy_wf_loader *L, const config_setting_t *g)
{
    L->wf->catchup_max = SY_CATCHUP_MAX_DEFAULT;
    const config_setting_t *s;
    const char *v = sy_setting_string(g, "timezone", "'timezone'", L->d);
    if ((s = schedule_key(L, g, "timezone")) && v) {
        char why[512];
        sy_tz *tz = sy_tz_load(v, why, sizeof why);
        if (!tz)
            sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s", why);
        else
            L->wf->timezone = sy_xstrdup(v);
        sy_tz_free(tz);
    }
    v = sy_setting_string(g, "catchup", "'catchup'", L->d);
    if ((s = schedule_key(L, g, "catchup")) && v) {
        int c = sy_catchup_parse(v);
        if (c < 0)
            sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "unknown catchup \"%s\": use \"none\", \"latest\" or \"all\"", v);
        else
            L->wf->catchup = (sy_catchup)c;
    }
    if ((s = schedule_key(L, g, "catchup_max"))) {
        long long n = config_setting_type(s) == CONFIG_TYPE_INT ||
                              config_setting_type(s) == CONFIG_TYPE_INT64
                          ? config_setting_get_int64(s)
                          : -1;
        if (n < 1 || n > SY_CATCHUP_MAX_LIMIT)
            sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "'catchup_max' must be an integer from 1 to %u", SY_CATCHUP_MAX_LIMIT);
        else
            L->wf->catchup_max = (uint32_t)n;
    }
}

static void read_workflow_keys(sy_wf_loader *L, const config_setting_t *g)
{
    sy_setting_check_keys(g, wf_keys, "workflow", L->d);
    read_name(L, g);
    read_tenant(L, g);
    L->ns_ok = L->wf->name && L->wf->tenant;
    const char *desc =
        sy_setting_string(g, "description", "'description'", L->d);
    if (desc)
        L->wf->description = sy_xstrdup(desc);
    read_schedule(L, g);
    read_schedule_policy(L, g);
    const config_setting_t *s;
    if ((s = config_setting_get_member(g, "triggers")) && L->wf->name)
        sy_start_triggers_read(s, L->wf->name, &L->wf->triggers, &L->wf->n_triggers, L->d);
    if ((s = config_setting_get_member(g, "retry")))
        sy_retry_read(s, &L->retry, L->d);
    if ((s = config_setting_get_member(g, "timeout")))
        sy_setting_duration(s, &L->timeout_ms, L->d);
    if ((s = config_setting_get_member(g, "max_map")))
        sy_map_max_read(s, &L->max_map, "workflow", L->d);
    sy_flow_read(g, NULL, &L->priority, &L->flow, "workflow", L->d);
}

/* The plugin's view of each task, while the settings still know lines.
 * Run only for tasks with a namespace; a check that counts more errors
 * than it reported still has them counted. */
static int run_checks(sy_wf_loader *L, sy_task_check_fn check, void *arg)
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
    /* Not the file's fault: reported as its error, the workflow was
     * skipped and the command said it did not exist. */
    if (saved_errno == ENOMEM &&
        (config_error_type(lc) == CONFIG_ERR_FILE_IO || !config_error_file(lc)))
        sy_oom("reading %s", path);
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

static void read_config(sy_wf_loader *L, const config_t *lc, const char *path)
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
    sy_wf_tasks_read(L, g);
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

/* A workflow from the parse cache is handed out only when it would load
 * from the file without a word: its zone still loads and the plugins'
 * checks find nothing (they see the parameters without their settings;
 * anything they say is left for the full parse to say at its line). */
static bool hit_usable(sy_workflow *wf, const char *path, sy_task_check_fn check, void *arg)
{
    wf->file = sy_xstrdup(path);
    if (wf->timezone) {
        char why[512];
        sy_tz *tz = sy_tz_load(wf->timezone, why, sizeof why);
        if (!tz)
            return false;
        sy_tz_free(tz);
    }
    /* A schedule's host records a run at every tick: it keeps the text,
     * written once here, and the entry's hash must be the text's. */
    char hash[65];
    memcpy(hash, wf->hash, sizeof hash);
    if (wf->schedule && (sy_workflow_seal(wf) != 0 || strcmp(hash, wf->hash) != 0))
        return false;
    sy_diags quiet;
    sy_diags_init(&quiet);
    int problems = 0;
    for (size_t i = 0; check && i < wf->n_tasks && problems == 0 && quiet.n == 0; i++)
        problems += check(arg, wf, &wf->tasks[i], NULL, &quiet);
    bool ok = problems == 0 && quiet.n == 0;
    sy_diags_free(&quiet);
    return ok;
}

static int parse_file(const char *path, char *base, sy_task_check_fn check, void *arg,
                      sy_workflow **out, int *name_line, sy_diags *d)
{
    size_t before = d->errors;
    config_t lc;
    config_init(&lc);
    char *dir = sy_path_dirname(path);
    config_set_include_dir(&lc, dir);
    errno = 0;
    if (!sy_cfg_includes_ok(&lc, path, d) || config_read_file(&lc, path) != CONFIG_TRUE) {
        if (d->errors == before)
            parse_error(&lc, path, errno, d);
        config_destroy(&lc);
        free(dir);
        free(base);
        return (int)(d->errors - before);
    }
    free(dir);
    sy_cfg_whole(&lc, path);
    sy_wf_loader L = {.d = d, .retry = sy_retry_default, .max_map = SY_MAP_DEFAULT_MAX};
    L.wf = calloc(1, sizeof *L.wf);
    if (!L.wf) {
        sy_oom("reading %s", path);
    }
    L.wf->file = sy_xstrdup(path);
    L.wf->base_dir = base;
    size_t first = d->n;
    sy_cfg_check_ints(&lc, path, d);
    read_config(&L, &lc, path);
    int extra = run_checks(&L, check, arg);
    int errors = (int)(d->errors - before) + extra;
    sort_diags(d, first);
    config_destroy(&lc);
    /* The tree of a big file is most of the peak: the definition written
     * next must not add to it (a tree of a million tasks is 880 MiB). */
    if (L.wf->n_tasks >= 10000)
        sy_memory_release();
    sy_wf_after_free(L.after, L.wf->n_tasks);
    free(L.settings);
    sy_flow_free(L.flow);
    json_decref(L.no_params);
    /* Not an error in the file: reported as one, the workflow was skipped
     * and the command went on to say it did not exist. */
    if (errors == 0 && sy_workflow_seal(L.wf) != 0)
        sy_oom("writing the definition of %s", path);
    if (errors) {
        sy_workflow_free(L.wf);
        return errors;
    }
    *out = L.wf;
    *name_line = L.name_line;
    return 0;
}

static int load_file(const char *path, const char *cache_dir, sy_task_check_fn check,
                     void *arg, sy_workflow **out, int *name_line, sy_diags *d)
{
    int line = 0;
    char *base = base_dir_of(path);
    sy_wf_source src;
    bool cached = sy_wf_cache_probe(cache_dir, path, base, &src);
    if (cached) {
        sy_workflow *wf = sy_wf_cache_get(&src, base, &line);
        if (wf && hit_usable(wf, path, check, arg)) {
            free(base);
            sy_wf_source_free(&src);
            *out = wf;
            if (name_line)
                *name_line = line;
            return 0;
        }
        sy_workflow_free(wf);
    }
    size_t said = d->n;
    int errors = parse_file(path, base, check, arg, out, &line, d);
    /* Only a load with nothing to say: a hit reports nothing. */
    if (cached && errors == 0 && d->n == said)
        sy_wf_cache_put(&src, path, *out, line);
    if (cached)
        sy_wf_source_free(&src);
    if (errors == 0 && name_line)
        *name_line = line;
    return errors;
}

int sy_workflow_load_file(const char *path, sy_task_check_fn check, void *arg,
                          sy_workflow **out, sy_diags *d)
{
    return load_file(path, NULL, check, arg, out, NULL, d);
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
        sy_oom("listing workflows");
    }
    v[(*n)++] = wf;
    *out = v;
    return 0;
}

static int load_entry(const char *dir, const char *name, const char *cache_dir,
                      sy_task_check_fn check, void *arg, sy_workflow ***out, size_t *n,
                      sy_diags *d)
{
    char *path = sy_path_join(dir, name);
    struct stat st;
    int errors = 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        sy_warn(d, path, 0, "not a regular file; skipped");
    } else {
        sy_workflow *wf = NULL;
        int line = 0;
        errors = load_file(path, cache_dir, check, arg, &wf, &line, d);
        if (!errors)
            errors = add_loaded(wf, line, out, n, d);
    }
    free(path);
    return errors;
}

int sy_workflow_load_dir(const char *dir, sy_task_check_fn check, void *arg,
                         sy_workflow ***out, size_t *n, sy_diags *d)
{
    return sy_workflow_load_dir_cached(dir, NULL, check, arg, out, n, d);
}

int sy_workflow_load_dir_cached(const char *dir, const char *cache_dir,
                                sy_task_check_fn check, void *arg,
                                sy_workflow ***out, size_t *n, sy_diags *d)
{
    struct dirent **names = NULL;
    int count = scandir(dir, &names, cfg_filter, name_cmp);
    if (count < 0) {
        if (errno == ENOENT) {
            sy_warn(d, dir, 0, "workflow directory does not exist");
            return 0;
        }
        /* The host's shortage, not the directory's: reported as the
         * directory's, the command then said its workflow did not exist. */
        if (errno == ENOMEM)
            sy_oom("reading workflow directory %s", dir);
        sy_error(d, dir, 0, "cannot read workflow directory: %s", strerror(errno));
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < count; i++) {
        errors += load_entry(dir, names[i]->d_name, cache_dir, check, arg, out, n, d);
        free(names[i]);
    }
    free(names);
    return errors;
}
