/* Function tasks in the host process: task libraries are opened once per
 * instance (RTLD_NOW | RTLD_LOCAL) and looked up through a cache keyed by
 * (base_dir, "path:symbol"), so a hot task costs one mutex and a few string
 * compares. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskapi.h"
#include "thread.h"

void sy_libs_init(sy_libs *L)
{
    memset(L, 0, sizeof *L);
    pthread_mutex_init(&L->mu, NULL);
}

void sy_libs_free(sy_libs *L)
{
    for (sy_fn_entry *e = L->fns, *next; e; e = next) {
        next = e->next;
        free(e->base_dir);
        free(e->function);
        free(e);
    }
    for (sy_lib *l = L->libs, *next; l; l = next) {
        next = l->next;
        dlclose(l->handle);
        free(l->path);
        free(l);
    }
    pthread_mutex_destroy(&L->mu);
    memset(L, 0, sizeof *L);
}

static bool is_symbol(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

int sy_fn_split(const char *function, char **path, char **symbol, char *err,
                size_t err_len)
{
    const char *colon = strrchr(function, ':');
    *path = *symbol = NULL;
    if (!colon || colon == function || !colon[1]) {
        snprintf(err, err_len, "function = \"%s\": expected "
                               "\"path/to/lib.so:symbol\"", function);
        return SY_EINVAL;
    }
    if (!is_symbol(colon + 1)) {
        snprintf(err, err_len, "function = \"%s\": \"%s\" is not a C symbol "
                               "name", function, colon + 1);
        return SY_EINVAL;
    }
    *path = strndup(function, (size_t)(colon - function));
    *symbol = strdup(colon + 1);
    if (!*path || !*symbol) {
        free(*path);
        free(*symbol);
        *path = *symbol = NULL;
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    return SY_OK;
}

/* Whether dlopen failed for want of memory, not for the library: the
 * loader ends its message with the error's text, and may leave errno. */
static bool out_of_memory(const char *why)
{
    if (errno == ENOMEM)
        return true;
    const char *tail = strerror(ENOMEM);
    size_t n = why ? strlen(why) : 0, m = strlen(tail);
    return n >= m && strcmp(why + n - m, tail) == 0;
}

/* The handle of `path`, opened now or earlier; under L->mu. */
static int lib_open(sy_libs *L, const char *path, void **out, char *err,
                    size_t err_len)
{
    char *real = realpath(path, NULL);
    if (!real) {
        int why = errno;
        snprintf(err, err_len, "cannot open task library %s: %s", path, strerror(why));
        return why == ENOMEM ? SY_ENOMEM : SY_ENOENT;
    }
    for (sy_lib *l = L->libs; l; l = l->next)
        if (strcmp(l->path, real) == 0) {
            free(real);
            *out = l->handle;
            return SY_OK;
        }
    errno = 0;
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(err, err_len, "cannot load task library %s: %s", path,
                 why ? why : "dlopen failed");
        free(real);
        return out_of_memory(why) ? SY_ENOMEM : SY_ENOENT;
    }
    int rc = sy_task_lib_check_abi(h, path, err, err_len);
    sy_lib *l = rc == SY_OK ? calloc(1, sizeof *l) : NULL;
    if (!l) {
        if (rc == SY_OK)
            snprintf(err, err_len, "out of memory");
        dlclose(h);
        free(real);
        return rc == SY_OK ? SY_ENOMEM : rc;
    }
    l->path = real;
    l->handle = h;
    l->next = L->libs;
    L->libs = l;
    *out = h;
    return SY_OK;
}

static sy_task_fn cached(const sy_libs *L, const char *base_dir,
                         const char *function)
{
    for (const sy_fn_entry *e = L->fns; e; e = e->next)
        if (strcmp(e->function, function) == 0 &&
            strcmp(e->base_dir, base_dir) == 0)
            return e->fn;
    return NULL;
}

static void remember(sy_libs *L, const char *base_dir, const char *function,
                     sy_task_fn fn)
{
    sy_fn_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->base_dir = strdup(base_dir);
        e->function = strdup(function);
    }
    if (!e || !e->base_dir || !e->function) {
        /* Only the cache is lost: the next call looks it up again. */
        if (e) {
            free(e->base_dir);
            free(e->function);
        }
        free(e);
        return;
    }
    e->fn = fn;
    e->next = L->fns;
    L->fns = e;
}

static int lookup(sy_libs *L, const char *base_dir, const char *function,
                  sy_task_fn *out, char *err, size_t err_len)
{
    char *path = NULL, *symbol = NULL, *full = NULL;
    void *h = NULL;
    int rc = sy_fn_split(function, &path, &symbol, err, err_len);
    if (rc == SY_OK) {
        full = sy_path_resolve(base_dir, path);
        rc = full ? lib_open(L, full, &h, err, err_len) : SY_ENOMEM;
    }
    if (rc == SY_OK) {
        dlerror();
        void *sym = dlsym(h, symbol);
        if (sym) {
            memcpy(out, &sym, sizeof *out);
        } else {
            snprintf(err, err_len, "task library %s has no symbol %s (is "
                                   "it exported with SY_TASK_EXPORT?)",
                     full, symbol);
            rc = SY_ENOENT;
        }
    }
    if (rc == SY_ENOMEM)
        snprintf(err, err_len, "out of memory");
    free(path);
    free(symbol);
    free(full);
    return rc;
}

int sy_fn_resolve(sy_libs *L, const char *base_dir, const char *function,
                  sy_task_fn *out, char *err, size_t err_len)
{
    if (!base_dir)
        base_dir = "";
    pthread_mutex_lock(&L->mu);
    int rc = SY_OK;
    sy_task_fn fn = cached(L, base_dir, function);
    if (!fn) {
        rc = lookup(L, base_dir, function, &fn, err, err_len);
        if (rc == SY_OK)
            remember(L, base_dir, function, fn);
    }
    pthread_mutex_unlock(&L->mu);
    if (rc == SY_OK)
        *out = fn;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* One call                                                                 */
/* ------------------------------------------------------------------------ */

static int job_stop(void *owner) { return sy_job_should_stop(owner); }

static void job_log_line(void *owner, sy_log_level level, const char *line)
{
    sy_job_log(owner, level, "%s", line);
}

static void fill_info(sy_task_ctx *ctx, const sy_task *t)
{
    sy_task_info *i = &ctx->info;
    i->attempt = t->attempt;
    i->ns = t->ns ? t->ns : "";
    i->run_id = t->run_id ? t->run_id : "";
    i->task_id = t->task_id ? t->task_id : "";
    i->workflow = t->workflow ? t->workflow : "";
    i->base_dir = t->base_dir ? t->base_dir : "";
    i->timeout_ms = t->timeout_ms;
}

/* How the call ended.  A cancel wins: the host asked, and will ignore what
 * the function made of it.  A failure after the deadline is a timeout (the
 * function most likely saw cancelled() turn true); a success is a success,
 * even a late one. */
static void settle(sy_job *job, sy_task_ctx *ctx, int rc)
{
    if (atomic_load(&job->cancelled)) {
        sy_job_fail(job, SY_OUTCOME_CANCELLED, "cancelled while running "
                    "(the function returned %d)", rc);
    } else if (rc != 0 && job->deadline_ms && sy_now_ms() >= job->deadline_ms) {
        sy_job_fail(job, SY_OUTCOME_TIMED_OUT, "function %s ran past its "
                    "timeout of %lld ms", job->spec.function,
                    (long long)job->task->timeout_ms);
    } else if (rc != 0) {
        if (ctx->error)
            sy_job_fail(job, SY_OUTCOME_FAILED, "%s", ctx->error);
        else
            sy_job_fail(job, SY_OUTCOME_FAILED, "function %s returned %d "
                        "without an error message", job->spec.function, rc);
    } else if (ctx->oom) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "out of memory copying the "
                    "output of %s", job->spec.function);
    } else {
        size_t len = 0;
        char *out = sy_task_ctx_take_output(ctx, &len);
        sy_job_succeed(job, out, len);
    }
}

void sy_fn_run(sy_job *job)
{
    const sy_task *t = job->task;
    char err[1024];
    sy_task_fn fn = NULL;
    int found = sy_fn_resolve(&job->inst->libs, t->base_dir, job->spec.function, &fn, err,
                              sizeof err);
    if (found == SY_ENOMEM) {
        /* The host is short of memory, which is not the task's doing: it
         * goes back Ready uncharged, as a command that cannot start does. */
        sy_job_fail(job, SY_OUTCOME_DEFERRED, "%s (the host is short of memory; tried "
                    "again, not charged)", err);
        job->retry_after_ms = SY_JOB_DEFER_MS;
        return;
    }
    if (found != SY_OK) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "%s", err);
        return;
    }
    sy_task_ctx ctx;
    sy_task_ctx_init(&ctx, t->input, t->input_len, t->params);
    fill_info(&ctx, t);
    ctx.is_cancelled = job_stop;
    ctx.emit_log = job_log_line;
    ctx.owner = job;
    int rc = fn(&job->inst->task_api, &ctx);
    settle(job, &ctx, rc);
    sy_task_ctx_release(&ctx);
}
