/* The audit trail's writer and its retention. */
#include "service/audit.h"

#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "base/clock.h"
#include "service/events_keep.h"
#include "base/log.h"
#include "service/service.h"

void sy_service_audit(sy_service *sv, const sy_audit_record *r)
{
    if (!sv->store)
        return;
    sy_audit_record c = *r;
    if (!c.at)
        c.at = sy_clock_now_ms();
    if (sy_store_add_audit(sv->store, &c) != SY_OK)
        sy_log(SY_LOG_ERROR, "audit", "%s by %s not recorded in the audit trail: %s", r->action,
               r->who, sy_store_errmsg(sv->store));
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

json_t *sy_audit_json(const sy_audit_record *r)
{
    return json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:s, s:b, s:i, s:o}", "id",
                     (json_int_t)r->id, "at", (json_int_t)r->at, "who", r->who, "role", r->role,
                     "action", r->action, "target", str_or_null(r->target), "origin",
                     r->origin, "ok", r->ok, "status", r->status, "detail",
                     str_or_null(r->detail));
}

void sy_audit_user(char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char scratch[1024];
    uid_t uid = geteuid();
    if (getpwuid_r(uid, &pw, scratch, sizeof scratch, &found) == 0 && found)
        snprintf(buf, len, "%s", found->pw_name);
    else
        snprintf(buf, len, "uid %u", (unsigned)uid);
}

void sy_service_audit_local(sy_service *sv, const char *action, const char *target, bool ok,
                            const char *detail)
{
    char user[256];
    sy_audit_user(user, sizeof user);
    sy_audit_record r = {.who = user, .role = "local", .action = action, .target = target,
                         .origin = "cli", .ok = ok, .detail = detail};
    sy_service_audit(sv, &r);
}

int sy_service_audit_prune(sy_service *sv, int64_t now, size_t *deleted, char *err,
                           size_t err_len)
{
    *deleted = 0;
    int64_t keep = sy_service_setup(sv)->cfg.audit_keep_ms;
    if (!sv->store || keep <= 0)
        return SY_OK;
    int rc = sy_store_delete_audit(sv->store, now - keep, deleted);
    if (rc != SY_OK)
        snprintf(err, err_len, "%s", sy_store_errmsg(sv->store));
    return rc;
}

static void on_prune(uv_timer_t *t)
{
    sy_service *sv = t->data;
    size_t n = 0;
    char err[512];
    if (sy_service_audit_prune(sv, sy_clock_now_ms(), &n, err, sizeof err) != SY_OK)
        sy_log(SY_LOG_WARN, "audit", "old audit rows not deleted: %s", err);
    else if (n)
        sy_log(SY_LOG_INFO, "audit", "%zu audit row%s older than audit_keep deleted", n,
               n == 1 ? "" : "s");
    /* The hourly timer serves both keep periods: one pass, one wake-up. */
    sy_service_events_prune_logged(sv);
}

void sy_service_audit_start(sy_service *sv)
{
    if (sv->audit_pruning || !sv->have_loop)
        return;
    uv_timer_init(&sv->loop, &sv->audit_prune);
    sv->audit_prune.data = sv;
    /* It never keeps the loop alive on its own: a host with nothing else
     * to do stops as it would without it. */
    uv_unref((uv_handle_t *)&sv->audit_prune);
    uv_timer_start(&sv->audit_prune, on_prune, 0, (uint64_t)SY_AUDIT_PRUNE_MS);
    sv->audit_pruning = true;
}

void sy_service_audit_stop(sy_service *sv)
{
    if (!sv->audit_pruning)
        return;
    uv_timer_stop(&sv->audit_prune);
    uv_close((uv_handle_t *)&sv->audit_prune, NULL);
    sv->audit_pruning = false;
}
