/*
 * store/driver.h -- what a store implementation provides behind store.h.
 *
 * Internal to the host.  An implementation is known to store.c only by its
 * driver descriptor (struct sy_store_driver): the URL prefixes it serves
 * and how to open one.  The handle it opens carries its table of
 * operations (struct sy_store_ops).  store.c checks the arguments every
 * implementation would check the same way (NULL pointers, state ranges),
 * then calls through that table, so an implementation may assume them
 * valid.  An implementation embeds `struct sy_store` as its first member
 * and casts the handle back to its own type.
 *
 * Every op has the meaning, the threading rule and the error contract of
 * the public function of the same name in store.h; on failure it writes
 * the reason to s->err (sy_store_fail) and returns a negative sy_status.
 *
 * Adding an implementation (store/postgres/postgres.c): define its ops and its
 * descriptor, declare the descriptor below, list it in store.c's drivers.
 */
#ifndef SY_STORE_IMPL_H
#define SY_STORE_IMPL_H

#include "store/cache.h"
#include "store/keyed.h"
#include "store/audit.h"
#include "store/slots.h"
#include "store/rates.h"
#include "store/preempt.h"
#include "store/store.h"

typedef int (*sy_store_run_cb)(void *arg, const sy_run_record *r);
typedef int (*sy_store_task_cb)(void *arg, const sy_task_record *t);
typedef int (*sy_store_map_cb)(void *arg, const sy_map_record *m);
typedef int (*sy_store_element_cb)(void *arg, int64_t elem,
                                   const sy_task_record *t);
typedef int (*sy_store_owner_cb)(void *arg, const char *owner);
typedef int (*sy_store_id_cb)(void *arg, int64_t run_id);
typedef int (*sy_store_log_cb)(void *arg, const sy_log_record *log);
typedef int (*sy_store_audit_cb)(void *arg, const sy_audit_record *r);
typedef int (*sy_store_event_cb)(void *arg, uint32_t idx, uint32_t attempt,
                                 const char *kind, const char *detail,
                                 int64_t at);

struct sy_store_ops {
    /* Frees the handle and everything it holds; an open batch is rolled
     * back. */
    void (*close)(sy_store *s);

    int (*put_definition)(sy_store *s, const char *hash, const char *tenant,
                          const char *workflow, const char *definition);
    int (*get_definition)(sy_store *s, const char *hash, char **out);

    int (*create_run)(sy_store *s, const sy_store_new_run *r, int64_t now,
                      int64_t *run_id);
    int (*get_run)(sy_store *s, int64_t run_id, sy_run_record *out);
    int (*list_runs)(sy_store *s, size_t limit, sy_store_run_cb cb,
                     void *arg);
    int (*list_tasks)(sy_store *s, int64_t run_id, sy_store_task_cb cb,
                      void *arg);

    int (*claim_run)(sy_store *s, int64_t run_id, const char *owner,
                     int64_t lease_until, int64_t now,
                     const char *const *stale, size_t n_stale,
                     bool *claimed);
    int (*claim_runs)(sy_store *s, const char *owner, int64_t lease_until,
                      int64_t now, const char *const *stale, size_t n_stale,
                      size_t max, int64_t *ids, size_t *n);
    int (*list_owners)(sy_store *s, sy_store_owner_cb cb, void *arg);
    int (*renew)(sy_store *s, const char *owner, int64_t lease_until,
                 int64_t now, sy_store_id_cb cb, void *arg);
    int (*release)(sy_store *s, const char *owner);
    int (*request_cancel)(sy_store *s, int64_t run_id, int64_t now);
    int (*cancel_requests)(sy_store *s, const char *owner, sy_store_id_cb cb,
                           void *arg);

    int (*begin)(sy_store *s);
    int (*commit)(sy_store *s);
    void (*rollback)(sy_store *s);
    int (*update_task)(sy_store *s, int64_t run_id,
                       const sy_store_fence *fence, int64_t token,
                       const sy_task_record *t);
    /* May be NULL: store/task_writes.c then makes each write with
     * update_task.  Called with every write checked valid. */
    int (*update_tasks)(sy_store *s, const sy_store_task_write *w, size_t n,
                        sy_store_refused_cb refused, void *arg);
    int (*update_run)(sy_store *s, int64_t run_id,
                      const sy_store_fence *fence, sy_run_state state,
                      const char *error, int64_t now);
    int (*add_event)(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                     int64_t token, uint32_t idx, uint32_t attempt,
                     const char *kind, const char *detail, int64_t now);
    int (*list_events)(sy_store *s, int64_t run_id, sy_store_event_cb cb,
                       void *arg);
    int (*delete_finished)(sy_store *s, int64_t before, size_t max,
                           size_t *deleted);
    int (*record_process)(sy_store *s, int64_t run_id,
                          const sy_store_fence *fence, int64_t token,
                          const sy_process_record *p);
    int (*list_processes)(sy_store *s, int64_t run_id,
                          int (*cb)(void *arg, const sy_process_record *p),
                          void *arg);

    int (*fire_tick)(sy_store *s, const char *hash, const char *tenant,
                     const char *workflow, int64_t tick, const char *context,
                     size_t n_tasks, const char *const *task_ids,
                     const char *const *ns, int64_t now, bool *fired,
                     int64_t *run_id);
    int (*last_tick)(sy_store *s, const char *tenant, const char *workflow,
                     int64_t *tick, int64_t *run_id);
    int (*add_log)(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                   int64_t token, const sy_log_record *log);
    int (*list_logs)(sy_store *s, int64_t run_id, int64_t since,
                     sy_store_log_cb cb, void *arg);
    int (*reopen_run)(sy_store *s, int64_t run_id, const uint32_t *idx,
                      size_t n, bool no_cache, int64_t now);
    /* Mapped tasks (store/elements.c checks the arguments). */
    int (*put_map)(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                   uint32_t idx, int64_t size);
    int (*update_element)(sy_store *s, int64_t run_id,
                          const sy_store_fence *fence, int64_t token,
                          int64_t elem, const sy_task_record *t);
    /* May be NULL: store/elements.c then makes each write with
     * update_element.  Called with every write checked valid. */
    int (*update_elements)(sy_store *s, const sy_store_element_write *w, size_t n,
                           sy_store_refused_cb refused, void *arg);
    int (*list_maps)(sy_store *s, int64_t run_id, sy_store_map_cb cb,
                     void *arg);
    int (*list_elements)(sy_store *s, int64_t run_id, uint32_t idx,
                         bool open_only, sy_store_element_cb cb, void *arg);

    /* Runs recorded under a key (store/keyed.c checks the arguments). */
    int (*create_run_keyed)(sy_store *s, const sy_store_new_run *r, const char *key,
                            int64_t window_ms, int64_t now, int64_t *run_id, bool *created);
    int (*backfill_tick)(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                         bool *fired, int64_t *run_id);
    int (*tick_run)(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                    bool *claimed, int64_t *run_id);
    /* Cached results (store/keyed.c checks the arguments). */
    int (*cache_put)(sy_store *s, const char *ns, const char *key, const char *output,
                     int64_t run_id, uint32_t idx, int64_t now);
    int (*cache_get)(sy_store *s, const char *ns, const char *key, int64_t since,
                     char **output, int64_t *run_id);

    /* May be NULL: a store whose hosts only poll (sy_store_listen gives
     * fd -1, sy_store_wakeups none). */
    int (*listen)(sy_store *s, int *fd);
    int (*wakeups)(sy_store *s, size_t *n);

    /* The audit trail (store/audit.h; store/audit.c checks the
     * arguments, strings already cut to SY_AUDIT_TEXT_MAX). */
    int (*add_audit)(sy_store *s, const sy_audit_record *r);
    int (*list_audit)(sy_store *s, const sy_audit_filter *f, sy_store_audit_cb cb, void *arg);
    int (*delete_audit)(sy_store *s, int64_t before, size_t *deleted);
    /* Flow-control slots (store/slots.c checks the arguments). */
    int (*take_slots)(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                      const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                      size_t *full, int64_t *held);
    int (*slot_room)(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                     int64_t now, int64_t *held);
    int (*put_slots)(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                     int64_t now, bool *put);
    int (*return_takes)(sy_store *s, const char *owner, const sy_slot_take *t, size_t n);
    int (*return_slots)(sy_store *s, const sy_slot_holder *h, size_t n);
    int (*reap_slots)(sy_store *s, int64_t now, size_t *n);
    int (*list_slots)(sy_store *s, int64_t now,
                      int (*cb)(void *arg, const sy_slot_record *r), void *arg);
    /* Named events and triggers (store/named_driver.h). */
    const struct sy_store_named_ops *named;
    /* Slot waiters (store/waiters.h). */
    const struct sy_store_waiter_ops *waiters;
    /* Rate limits' buckets (store/rates.c checks the arguments). */
    int (*take_rates)(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                      const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                      size_t *empty, int64_t *wait_ms);
    int (*rate_bucket)(sy_store *s, const char *key, sy_rate_bucket *b, bool *found);
    int (*list_rate_buckets)(sy_store *s, sy_rate_bucket_cb cb, void *arg);
    /* Cancel requests on slot rows (store/preempt.c checks the arguments). */
    int (*request_slot_cancel)(sy_store *s, const char *key, int64_t now, const char *why,
                          bool *asked);
    int (*list_cancel_requests)(sy_store *s, const char *owner, int64_t now,
                                int (*cb)(void *arg, const sy_cancel_request *r), void *arg);
};

/* The common head of every handle.  `ops` is set by the implementation's
 * open and never changes; `err` holds the last failure's one-line reason
 * (empty until the first failure). */
struct sy_store {
    const struct sy_store_ops *ops;
    char err[512];
};

/* Writes the formatted reason into s->err and returns `status`
 * (store/driver.c). */
int sy_store_fail(sy_store *s, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether the run's row, read as (`owner`, `epoch`), is still held by
 * `fence`'s claim: SY_OK, or SY_STORE_EFENCED with the reason (who holds
 * it, under which claim) in s->err, for the write `what`.  Both backends
 * explain a refused write the same way (store/driver.c). */
int sy_store_fence_check(sy_store *s, const char *what, int64_t run_id, const char *owner,
                         int64_t epoch, const sy_store_fence *fence);

/* An implementation as store.c knows it. */
struct sy_store_driver {
    const char *name;            /* "SQLite", in messages */
    const char *const *prefixes; /* the URLs it serves start with one of
                                    these; NULL-terminated */
    /* Opens the store at `target`, the URL after its prefix, with the
     * contract of sy_store_open.  NULL while this build lacks it. */
    int (*open)(const char *target, const char *base_dir, sy_store **out,
                char *err, size_t err_len);
};

/* The schema version each store writes (store/sqlite/schema.c,
 * store/postgres/schema.c): the length of its list of migration steps. */
extern const int sy_store_sqlite_schema_version;
extern const int sy_store_postgres_schema_version;

/* store/sqlite/sqlite.c: "sqlite:PATH", "sqlite::memory:". */
extern const struct sy_store_driver sy_store_sqlite_driver;

/* store/postgres/postgres.c: "postgresql://...", "postgres://...", or any libpq
 * connection string after "postgresql:" (built with libpq only). */
extern const struct sy_store_driver sy_store_postgres_driver;

#endif
