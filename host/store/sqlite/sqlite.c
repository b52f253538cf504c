/*
 * store/sqlite/sqlite.c -- the embedded store: one SQLite file in WAL mode.
 *
 * This file reads the URL's options, opens the file (creating its
 * directory), sets the pragmas, brings the schema up to date, prepares the
 * statements, and hands store.c the driver table; closing undoes it.  The
 * operations live in the files store/sqlite/internal.h lists.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/util.h"
#include "store/named_driver.h"
#include "store/waiters.h"
#include "store/sqlite/internal.h"

#define DEFAULT_BUSY_TIMEOUT_MS 5000

/* --- the URL: "sqlite:PATH?key=value&..." ---------------------------------- */

typedef struct open_opts {
    bool sync_full;
    int busy_timeout_ms;
} open_opts;

static int parse_option(const char *opt, size_t len, open_opts *o,
                        char *err, size_t err_len)
{
    const char *eq = memchr(opt, '=', len);
    size_t klen = eq ? (size_t)(eq - opt) : len;
    const char *val = eq ? eq + 1 : "";
    int vlen = eq ? (int)(len - klen - 1) : 0;
    if (klen == 4 && memcmp(opt, "sync", 4) == 0) {
        if (vlen == 4 && memcmp(val, "full", 4) == 0)
            o->sync_full = true;
        else if (vlen == 6 && memcmp(val, "normal", 6) == 0)
            o->sync_full = false;
        else
            goto bad_value;
        return SY_OK;
    }
    if (klen == 12 && memcmp(opt, "busy_timeout", 12) == 0) {
        long ms = 0;
        for (int i = 0; i < vlen; i++) {
            if (val[i] < '0' || val[i] > '9' || ms > INT_MAX / 10)
                goto bad_value;
            ms = ms * 10 + (val[i] - '0');
        }
        if (vlen == 0 || ms > INT_MAX)
            goto bad_value;
        o->busy_timeout_ms = (int)ms;
        return SY_OK;
    }
    sy_errf(err, err_len,
            "unknown option \"%.*s\" (known: sync=full|normal, "
            "busy_timeout=MILLISECONDS)", (int)klen, opt);
    return SY_EINVAL;
bad_value:
    sy_errf(err, err_len, "bad value \"%.*s\" for option \"%.*s\"", vlen, val,
            (int)klen, opt);
    return SY_EINVAL;
}

static int parse_query(const char *query, open_opts *o, char *err,
                       size_t err_len)
{
    while (*query) {
        size_t len = strcspn(query, "&");
        int status = parse_option(query, len, o, err, err_len);
        if (status != SY_OK)
            return status;
        query += len + (query[len] == '&');
    }
    return SY_OK;
}

/* Splits "PATH?QUERY" and resolves PATH; *path is malloc'd. */
static int parse_target(const char *target, const char *base_dir, char **path,
                        open_opts *o, char *err, size_t err_len)
{
    const char *q = strchr(target, '?');
    size_t len = q ? (size_t)(q - target) : strlen(target);
    if (len == 0) {
        sy_errf(err, err_len, "store \"sqlite:%s\": no file path (write "
                "\"sqlite:PATH\" or \"sqlite::memory:\")", target);
        return SY_EINVAL;
    }
    if (len >= 2 && target[0] == '/' && target[1] == '/') {
        sy_errf(err, err_len, "store \"sqlite:%s\": write \"sqlite:PATH\" "
                "without \"//\" (e.g. \"sqlite:/var/lib/switchyard.db\")",
                target);
        return SY_EINVAL;
    }
    o->sync_full = false;
    o->busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS;
    char qerr[256];
    if (q && parse_query(q + 1, o, qerr, sizeof qerr) != SY_OK) {
        sy_errf(err, err_len, "store \"sqlite:%s\": %s", target, qerr);
        return SY_EINVAL;
    }
    char *p = sy_xmalloc(len + 1);
    memcpy(p, target, len);
    p[len] = '\0';
    if (strcmp(p, ":memory:") == 0) {
        *path = p;
        return SY_OK;
    }
    *path = sy_path_join(base_dir, p);
    free(p);
    return SY_OK;
}

/* --- opening and closing ------------------------------------------------------ */

/* mkdir -p of the directory that holds `path`. */
static int make_parents(const char *path, char *err, size_t err_len)
{
    char *dir = sy_path_dirname(path);
    int status = SY_OK;
    for (char *p = dir + 1; status == SY_OK; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        struct stat sb;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            sy_errf(err, err_len, "cannot create directory %s: %s", dir,
                    strerror(errno));
            status = SY_EIO;
        } else if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            sy_errf(err, err_len, "%s is not a directory", dir);
            status = SY_EIO;
        }
        *p = c;
        if (!c)
            break;
    }
    free(dir);
    return status;
}

static int configure(sy_store_sqlite *q, const open_opts *o)
{
    sqlite3_extended_result_codes(q->db, 1);
    sqlite3_busy_timeout(q->db, o->busy_timeout_ms);
    /* The log file outlives the connection: the last close still copies
     * every frame into the database and syncs it, but leaves the file to
     * the next open instead of deleting it.  Deleting a file whose blocks
     * were synced frees them, and on a filesystem mounted with `discard`
     * (common on virtual disks) that took 7-9 ms of every host's exit for
     * a log of 4 MB; the next open reads the log back in under 1 ms.  (No
     * such file for "sqlite::memory:": SQLITE_NOTFOUND, nothing to do.) */
    int persist = 1;
    sqlite3_file_control(q->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    int status = sy_sqlite_exec(q, "PRAGMA journal_mode = WAL",
                                "set WAL mode");
    if (status == SY_OK)
        status = sy_sqlite_exec(q,
                                o->sync_full ? "PRAGMA synchronous = FULL"
                                             : "PRAGMA synchronous = NORMAL",
                                "set synchronous");
    if (status == SY_OK)
        status = sy_sqlite_exec(q, "PRAGMA foreign_keys = ON",
                                "enable foreign keys");
    return status;
}

/* Hosts started together on a new file race to set WAL mode and create
 * the schema.  Changing the journal mode takes an exclusive lock that
 * SQLite's busy handler does not wait for, so "database is locked" comes
 * back at once; the whole setup is idempotent and is tried again, with a
 * growing pause, until busy_timeout has passed. */
static int configure_and_migrate(sy_store_sqlite *q, const open_opts *o)
{
    int64_t start = sy_clock_now_ms();
    int pause_ms = 1, tries = 1;
    for (;; tries++) {
        int status = configure(q, o);
        if (status == SY_OK)
            status = sy_sqlite_migrate(q);
        if (status != SY_EBUSY)
            return status;
        int64_t waited = sy_clock_now_ms() - start;
        if (waited >= o->busy_timeout_ms) {
            char why[sizeof q->base.err];
            snprintf(why, sizeof why, "%s", q->base.err);
            return sy_store_fail(&q->base, SY_EBUSY,
                                 "%s (still locked after %d tries in %lld "
                                 "ms; busy_timeout=%d)", why, tries,
                                 (long long)waited, o->busy_timeout_ms);
        }
        sqlite3_sleep(pause_ms);
        pause_ms = pause_ms < 64 ? pause_ms * 2 : 100;
    }
}

static int open_db(sy_store_sqlite *q, const char *path, const open_opts *o)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(path, &q->db, flags, NULL);
    if (rc != SQLITE_OK) {
        if (!q->db)
            return sy_store_fail(&q->base, SY_ENOMEM, "%s: out of memory",
                                 q->where);
        return sy_sqlite_fail(q, rc, "open");
    }
    int status = configure_and_migrate(q, o);
    if (status == SY_OK)
        status = sy_sqlite_prepare_all(q);
    return status;
}

static void sqlite_close(sy_store *s)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sy_ckpt_stop(q->ckpt);
    for (int i = 0; i < SY_SQL_COUNT; i++)
        sqlite3_finalize(q->st[i]);
    /* With every statement finalized this cannot fail with SQLITE_BUSY; an
     * open batch is rolled back. */
    sqlite3_close(q->db);
    sy_sqlite_holds_free(q);
    sy_sqlite_counts_free(q);
    free(q->where);
    free(q);
}

static const struct sy_store_ops sqlite_ops = {
    .close = sqlite_close,
    .put_definition = sy_sqlite_put_definition,
    .get_definition = sy_sqlite_get_definition,
    .create_run = sy_sqlite_create_run,
    .get_run = sy_sqlite_get_run,
    .list_runs = sy_sqlite_list_runs,
    .list_tasks = sy_sqlite_list_tasks,
    .claim_run = sy_sqlite_claim_run,
    .claim_runs = sy_sqlite_claim_runs,
    .list_owners = sy_sqlite_list_owners,
    .renew = sy_sqlite_renew,
    .release = sy_sqlite_release,
    .request_cancel = sy_sqlite_request_cancel,
    .cancel_requests = sy_sqlite_cancel_requests,
    .begin = sy_sqlite_begin,
    .commit = sy_sqlite_commit,
    .rollback = sy_sqlite_rollback,
    .update_task = sy_sqlite_update_task,
    .update_run = sy_sqlite_update_run,
    .add_event = sy_sqlite_add_event,
    .list_events = sy_sqlite_list_events,
    .delete_finished = sy_sqlite_delete_finished,
    .record_process = sy_sqlite_record_process,
    .list_processes = sy_sqlite_list_processes,
    .fire_tick = sy_sqlite_fire_tick,
    .last_tick = sy_sqlite_last_tick,
    .create_run_keyed = sy_sqlite_create_run_keyed,
    .backfill_tick = sy_sqlite_backfill_tick,
    .tick_run = sy_sqlite_tick_run,
    .cache_put = sy_sqlite_cache_put,
    .cache_get = sy_sqlite_cache_get,
    .add_log = sy_sqlite_add_log,
    .list_logs = sy_sqlite_list_logs,
    .reopen_run = sy_sqlite_reopen_run,
    .put_map = sy_sqlite_put_map,
    .update_element = sy_sqlite_update_element,
    .list_maps = sy_sqlite_list_maps,
    .list_elements = sy_sqlite_list_elements,
    .add_audit = sy_sqlite_add_audit,
    .list_audit = sy_sqlite_list_audit,
    .delete_audit = sy_sqlite_delete_audit,
    .take_slots = sy_sqlite_take_slots,
    .slot_room = sy_sqlite_slot_room,
    .put_slots = sy_sqlite_put_slots,
    .return_takes = sy_sqlite_return_takes,
    .return_slots = sy_sqlite_return_slots,
    .reap_slots = sy_sqlite_reap_slots,
    .list_slots = sy_sqlite_list_slots,
    .named = &sy_sqlite_named_ops,
    .waiters = &sy_sqlite_waiter_ops,
    .take_rates = sy_sqlite_take_rates,
    .rate_bucket = sy_sqlite_rate_bucket,
    .list_rate_buckets = sy_sqlite_list_rate_buckets,
    .request_slot_cancel = sy_sqlite_request_slot_cancel,
    .list_cancel_requests = sy_sqlite_list_cancel_requests,
};


/* The store at `target`, the URL after "sqlite:": a path relative to
 * base_dir, or ":memory:", with an optional "?key=value&..." query. */
static int sqlite_open(const char *target, const char *base_dir,
                       sy_store **out, char *err, size_t err_len)
{
    char *path = NULL;
    open_opts o;
    int status = parse_target(target, base_dir, &path, &o, err, err_len);
    if (status != SY_OK)
        return status;
    bool memory = strcmp(path, ":memory:") == 0;
    if (!memory && (status = make_parents(path, err, err_len)) != SY_OK) {
        free(path);
        return status;
    }
    sy_store_sqlite *q = calloc(1, sizeof *q);
    if (q)
        q->where = sy_asprintf("sqlite:%s", path);
    if (!q || !q->where) {
        free(q);
        free(path);
        sy_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    q->base.ops = &sqlite_ops;
    status = open_db(q, path, &o);
    if (status == SY_OK && !memory)
        q->ckpt = sy_ckpt_start(q->db, path, o.busy_timeout_ms);
    free(path);
    if (status != SY_OK) {
        sy_errf(err, err_len, "%s", q->base.err);
        sqlite_close(&q->base);
        return status;
    }
    *out = &q->base;
    return SY_OK;
}

static const char *const sqlite_prefixes[] = {"sqlite:", NULL};

const struct sy_store_driver sy_store_sqlite_driver = {
    .name = "SQLite",
    .prefixes = sqlite_prefixes,
    .open = sqlite_open,
};
