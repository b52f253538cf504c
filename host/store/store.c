/*
 * store.c -- picks the store implementation from the URL and checks the
 * arguments once for all implementations, so that each of them sees only
 * valid input and they all refuse bad input with the same words.  It
 * knows the implementations only by their driver descriptors
 * (store/driver.h).
 */
#include "store/store.h"

#include <string.h>

#include "store/driver.h"
#include "base/util.h"
#include "workflow/workflow.h"

static const char accepted_forms[] =
    "use \"sqlite:PATH\", \"sqlite::memory:\" or \"postgresql://...\"";

#ifndef SY_HAVE_LIBPQ
static const char *const postgres_prefixes[] = {
    "postgresql://", "postgres://", NULL,
};

/* A build without libpq still knows the URLs, so that they are told "not
 * built" rather than "unknown kind of store". */
static const struct sy_store_driver postgres_not_built = {
    .name = "PostgreSQL",
    .prefixes = postgres_prefixes,
    .open = NULL,
};
#endif

static const struct sy_store_driver *const drivers[] = {
    &sy_store_sqlite_driver,
#ifdef SY_HAVE_LIBPQ
    &sy_store_postgres_driver,
#else
    &postgres_not_built,
#endif
};

/* The driver serving `url`, and in *target what follows its prefix; NULL
 * when none does. */
static const struct sy_store_driver *find_driver(const char *url,
                                                 const char **target)
{
    for (size_t i = 0; i < SY_ARRAY_LEN(drivers); i++)
        for (const char *const *p = drivers[i]->prefixes; *p; p++)
            if (strncmp(url, *p, strlen(*p)) == 0) {
                *target = url + strlen(*p);
                return drivers[i];
            }
    return NULL;
}

/* Only the scheme of an unknown URL is echoed: the rest may hold a
 * password. */
static int unknown_url(const char *url, char *err, size_t err_len)
{
    const char *colon = strchr(url, ':');
    if (!*url)
        sy_errf(err, err_len, "the store URL is empty: %s", accepted_forms);
    else if (!colon)
        sy_errf(err, err_len,
                "store \"%s\" has no scheme: %s (did you mean \"sqlite:%s\"?)",
                url, accepted_forms, url);
    else
        sy_errf(err, err_len, "store \"%.*s...\": unknown kind of store: %s",
                (int)(colon - url + 1), url, accepted_forms);
    return SY_EINVAL;
}

int sy_store_open(const char *url, const char *base_dir, sy_store **out,
                  char *err, size_t err_len)
{
    if (!out) {
        sy_errf(err, err_len, "sy_store_open: out is NULL");
        return SY_EINVAL;
    }
    *out = NULL;
    if (!url) {
        sy_errf(err, err_len, "no store URL given: %s", accepted_forms);
        return SY_EINVAL;
    }
    const char *target = NULL;
    const struct sy_store_driver *driver = find_driver(url, &target);
    if (!driver)
        return unknown_url(url, err, err_len);
    if (!driver->open) {
        sy_errf(err, err_len, "the %s store is not in this build (configure found no libpq: apt-get install libpq-dev)", driver->name);
        return SY_ENOTSUP;
    }
    return driver->open(target, base_dir, out, err, err_len);
}

char *sy_store_redact(const char *url, char *out, size_t len)
{
    if (!len)
        return out;
    size_t o = 0;
    const char *p = url ? url : "";
    const char *scheme = strstr(p, "://");
    const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
    const char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
    while (*p && o + 1 < len) {
        if (colon && p == colon + 1) { /* "user:PASSWORD@" */
            for (const char *m = "***"; *m && o + 1 < len; m++)
                out[o++] = *m;
            p = at;
            continue;
        }
        if (!scheme && strncmp(p, "password=", 9) == 0 &&
            (p == url || p[-1] == ' ' || p[-1] == ':')) {
            for (const char *m = "password=***"; *m && o + 1 < len; m++)
                out[o++] = *m;
            p += 9;
            if (*p == '\'') { /* a quoted value */
                for (p++; *p && *p != '\''; p++)
                    if (*p == '\\' && p[1])
                        p++;
                if (*p)
                    p++;
            } else {
                while (*p && *p != ' ')
                    p++;
            }
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
    return out;
}

void sy_store_close(sy_store *s)
{
    if (s)
        s->ops->close(s);
}

const char *sy_store_errmsg(const sy_store *s)
{
    return s ? s->err : "no store handle";
}

/* --- argument checks ---------------------------------------------------------- */

#define NEED(s, cond, fn, what)                                               \
    do {                                                                      \
        if (!(cond))                                                          \
            return sy_store_fail((s), SY_EINVAL, "%s: %s", (fn), (what));     \
    } while (0)

static int check_names(sy_store *s, const char *fn, const char *field,
                       const char *const *v, size_t n)
{
    if (n && !v)
        return sy_store_fail(s, SY_EINVAL, "%s: %s is NULL with %zu entries",
                             fn, field, n);
    for (size_t i = 0; i < n; i++)
        if (!v[i])
            return sy_store_fail(s, SY_EINVAL, "%s: %s[%zu] is NULL", fn,
                                 field, i);
    return SY_OK;
}

/* --- definitions ------------------------------------------------------------- */

int sy_store_put_definition(sy_store *s, const char *hash, const char *tenant,
                            const char *workflow, const char *definition)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, hash && tenant && workflow && definition, "put_definition",
         "hash, tenant, workflow and definition are required");
    return s->ops->put_definition(s, hash, tenant, workflow, definition);
}

int sy_store_get_definition(sy_store *s, const char *hash, char **out)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, hash && out, "get_definition", "hash and out are required");
    *out = NULL;
    return s->ops->get_definition(s, hash, out);
}

/* --- runs ------------------------------------------------------------------- */

int sy_store_create_run(sy_store *s, const char *hash, const char *tenant,
                        const char *workflow, const char *context,
                        size_t n_tasks, const char *const *task_ids,
                        const char *const *ns, int64_t now, int64_t *run_id)
{
    sy_store_new_run r = {hash, tenant, workflow, context, n_tasks, task_ids, ns, 0};
    return sy_store_create_run_with(s, &r, now, run_id);
}

int sy_store_create_run_with(sy_store *s, const sy_store_new_run *r, int64_t now,
                             int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, r && r->hash && r->tenant && r->workflow, "create_run",
         "hash, tenant and workflow are required");
    NEED(s, r->n_tasks <= UINT32_MAX, "create_run", "too many tasks");
    NEED(s, r->priority >= SY_PRIORITY_MIN && r->priority <= SY_PRIORITY_MAX, "create_run",
         "priority out of range");
    int rc = check_names(s, "create_run", "task_ids", r->task_ids, r->n_tasks);
    if (rc == SY_OK)
        rc = check_names(s, "create_run", "ns", r->ns, r->n_tasks);
    if (rc != SY_OK)
        return rc;
    return s->ops->create_run(s, r, now, run_id);
}

int sy_store_get_run(sy_store *s, int64_t run_id, sy_run_record *out)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, out, "get_run", "out is required");
    memset(out, 0, sizeof *out);
    return s->ops->get_run(s, run_id, out);
}

int sy_store_list_runs(sy_store *s, size_t limit,
                       int (*cb)(void *arg, const sy_run_record *r), void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_runs", "the callback is required");
    return s->ops->list_runs(s, limit, cb, arg);
}

int sy_store_list_tasks(sy_store *s, int64_t run_id,
                        int (*cb)(void *arg, const sy_task_record *t),
                        void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_tasks", "the callback is required");
    return s->ops->list_tasks(s, run_id, cb, arg);
}

/* --- ownership ---------------------------------------------------------------- */

int sy_store_claim_run(sy_store *s, int64_t run_id, const char *owner,
                       int64_t lease_until, int64_t now,
                       const char *const *stale, size_t n_stale,
                       bool *claimed)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, owner && claimed, "claim_run", "owner and claimed are required");
    *claimed = false;
    int rc = check_names(s, "claim_run", "stale", stale, n_stale);
    if (rc != SY_OK)
        return rc;
    return s->ops->claim_run(s, run_id, owner, lease_until, now, stale,
                             n_stale, claimed);
}

int sy_store_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                        int64_t now, const char *const *stale, size_t n_stale,
                        size_t max, int64_t *ids, size_t *n)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, owner && n && (ids || !max), "claim_runs",
         "owner, n and (when max > 0) ids are required");
    *n = 0;
    int rc = check_names(s, "claim_runs", "stale", stale, n_stale);
    if (rc != SY_OK || max == 0)
        return rc;
    return s->ops->claim_runs(s, owner, lease_until, now, stale, n_stale, max,
                              ids, n);
}

int sy_store_list_owners(sy_store *s,
                         int (*cb)(void *arg, const char *owner), void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_owners", "the callback is required");
    return s->ops->list_owners(s, cb, arg);
}

int sy_store_renew(sy_store *s, const char *owner, int64_t lease_until,
                   int64_t now, int (*cb)(void *arg, int64_t run_id),
                   void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, owner, "renew", "owner is required");
    return s->ops->renew(s, owner, lease_until, now, cb, arg);
}

int sy_store_release(sy_store *s, const char *owner)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, owner, "release", "owner is required");
    return s->ops->release(s, owner);
}

int sy_store_request_cancel(sy_store *s, int64_t run_id, int64_t now)
{
    if (!s)
        return SY_EINVAL;
    return s->ops->request_cancel(s, run_id, now);
}

int sy_store_cancel_requests(sy_store *s, const char *owner,
                             int (*cb)(void *arg, int64_t run_id), void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, owner && cb, "cancel_requests",
         "owner and the callback are required");
    return s->ops->cancel_requests(s, owner, cb, arg);
}

/* --- batches -------------------------------------------------------------------- */

int sy_store_begin(sy_store *s)
{
    return s ? s->ops->begin(s) : SY_EINVAL;
}

int sy_store_commit(sy_store *s)
{
    return s ? s->ops->commit(s) : SY_EINVAL;
}

void sy_store_rollback(sy_store *s)
{
    if (s)
        s->ops->rollback(s);
}

int sy_store_update_task(sy_store *s, int64_t run_id,
                         const sy_store_fence *fence, int64_t token,
                         const sy_task_record *t)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, t, "update_task", "the task is required");
    NEED(s, !fence || fence->owner, "update_task", "a fence names its owner");
    if ((unsigned)t->state >= SY_TASK_STATE_COUNT)
        return sy_store_fail(s, SY_EINVAL,
                             "update_task: run %lld task %u: bad state %d",
                             (long long)run_id, t->idx, (int)t->state);
    /* An attempt token only grows: a write that would move it back is a
     * bug in its writer, refused before it reaches the store. */
    if (fence && t->fence < token)
        return sy_store_fail(s, SY_EINVAL,
                             "update_task: run %lld task %u: attempt token "
                             "%lld would go back to %lld", (long long)run_id,
                             t->idx, (long long)token, (long long)t->fence);
    return s->ops->update_task(s, run_id, fence, token, t);
}

int sy_store_update_run(sy_store *s, int64_t run_id,
                        const sy_store_fence *fence, sy_run_state state,
                        const char *error, int64_t now)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, !fence || fence->owner, "update_run", "a fence names its owner");
    if ((unsigned)state >= SY_RUN_STATE_COUNT)
        return sy_store_fail(s, SY_EINVAL, "update_run: run %lld: bad state %d",
                             (long long)run_id, (int)state);
    return s->ops->update_run(s, run_id, fence, state, error, now);
}

int sy_store_add_event(sy_store *s, int64_t run_id,
                       const sy_store_fence *fence, int64_t token,
                       uint32_t idx, uint32_t attempt, const char *kind,
                       const char *detail, int64_t now)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, kind, "add_event", "kind is required");
    NEED(s, !fence || fence->owner, "add_event", "a fence names its owner");
    return s->ops->add_event(s, run_id, fence, token, idx, attempt, kind,
                             detail, now);
}

int sy_store_delete_finished(sy_store *s, int64_t before, size_t max,
                             size_t *deleted)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, deleted, "delete_finished", "deleted is NULL");
    NEED(s, max > 0 && max <= INT32_MAX, "delete_finished",
         "max must be between 1 and 2147483647");
    *deleted = 0;
    return s->ops->delete_finished(s, before, max, deleted);
}

int sy_store_list_events(sy_store *s, int64_t run_id,
                         int (*cb)(void *arg, uint32_t idx, uint32_t attempt,
                                   const char *kind, const char *detail,
                                   int64_t at),
                         void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_events", "the callback is required");
    return s->ops->list_events(s, run_id, cb, arg);
}

int sy_store_record_process(sy_store *s, int64_t run_id,
                            const sy_store_fence *fence, int64_t token,
                            const sy_process_record *p)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, p, "record_process", "the record is required");
    NEED(s, !fence || fence->owner, "record_process", "a fence names its owner");
    NEED(s, p->pgid > 1, "record_process", "pgid must be above 1");
    NEED(s, p->start_time <= INT64_MAX, "record_process", "start_time out of range");
    return s->ops->record_process(s, run_id, fence, token, p);
}

int sy_store_list_processes(sy_store *s, int64_t run_id,
                            int (*cb)(void *arg, const sy_process_record *p),
                            void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_processes", "the callback is required");
    return s->ops->list_processes(s, run_id, cb, arg);
}

/* --- schedules ------------------------------------------------------------------ */

int sy_store_fire_tick(sy_store *s, const char *hash, const char *tenant,
                       const char *workflow, int64_t tick, const char *context,
                       size_t n_tasks, const char *const *task_ids,
                       const char *const *ns, int64_t now, bool *fired,
                       int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, hash && tenant && workflow && fired, "fire_tick",
         "hash, tenant, workflow and fired are required");
    NEED(s, n_tasks <= UINT32_MAX, "fire_tick", "too many tasks");
    int rc = check_names(s, "fire_tick", "task_ids", task_ids, n_tasks);
    if (rc == SY_OK)
        rc = check_names(s, "fire_tick", "ns", ns, n_tasks);
    if (rc != SY_OK)
        return rc;
    *fired = false;
    int64_t id = 0;
    rc = s->ops->fire_tick(s, hash, tenant, workflow, tick, context, n_tasks, task_ids, ns,
                           now, fired, &id);
    if (run_id)
        *run_id = rc == SY_OK && *fired ? id : 0;
    return rc;
}

int sy_store_last_tick(sy_store *s, const char *tenant, const char *workflow,
                       int64_t *tick, int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, tenant && workflow && tick, "last_tick", "tenant, workflow and tick are required");
    int64_t id = 0;
    *tick = 0;
    int rc = s->ops->last_tick(s, tenant, workflow, tick, &id);
    if (run_id)
        *run_id = id;
    return rc;
}

int sy_store_add_log(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                     int64_t token, const sy_log_record *log)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, log && log->stream && log->text, "add_log",
         "the log, its stream and its text are required");
    NEED(s, !fence || fence->owner, "add_log", "a fence names its owner");
    return s->ops->add_log(s, run_id, fence, token, log);
}

int sy_store_list_logs(sy_store *s, int64_t run_id, int64_t since,
                       int (*cb)(void *arg, const sy_log_record *log),
                       void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_logs", "the callback is required");
    return s->ops->list_logs(s, run_id, since, cb, arg);
}

int sy_store_reopen_run(sy_store *s, int64_t run_id, const uint32_t *idx,
                        size_t n, bool no_cache, int64_t now)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, idx || !n, "reopen_run", "idx is NULL with entries");
    return s->ops->reopen_run(s, run_id, idx, n, no_cache, now);
}

int sy_store_listen(sy_store *s, int *fd)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, fd, "listen", "fd is NULL");
    *fd = -1;
    return s->ops->listen ? s->ops->listen(s, fd) : SY_OK;
}

int sy_store_wakeups(sy_store *s, size_t *n)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, n, "wakeups", "n is NULL");
    *n = 0;
    return s->ops->wakeups ? s->ops->wakeups(s, n) : SY_OK;
}
