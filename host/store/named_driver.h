/*
 * store/named_driver.h -- what a store implementation provides behind
 * store/named_events.h: a table of its own, reached from sy_store_ops's
 * `named`, with the contract of the public function of the same name
 * (store/named_events.c checks the arguments first).
 */
#ifndef SY_STORE_NAMED_DRIVER_H
#define SY_STORE_NAMED_DRIVER_H

#include "store/named_events.h"

typedef int (*sy_store_run_item_cb)(void *arg, const sy_finished_run *r);
typedef int (*sy_store_passed_cb)(void *arg, sy_item_source source, int64_t id,
                                  const char *reason, int64_t at);

struct sy_store_named_ops {
    int (*emit)(sy_store *s, const char *name, const char *key, const char *data,
                int64_t window_ms, int64_t now, int64_t *id, bool *duplicate);
    int (*list)(sy_store *s, const char *name, size_t limit, sy_named_event_cb cb,
                void *arg);
    int (*trigger_open)(sy_store *s, const char *key, int64_t now, sy_trigger_record *out);
    int (*trigger_events)(sy_store *s, const char *key, const char *name, int64_t since,
                          size_t limit, sy_named_event_cb cb, void *arg);
    int (*trigger_runs)(sy_store *s, const char *key, const char *tenant,
                        const char *workflow, unsigned states, int64_t since, size_t limit,
                        sy_store_run_item_cb cb, void *arg);
    int (*fire)(sy_store *s, const sy_trigger_firing *f, int64_t now,
                sy_fire_outcome *outcome, int64_t *run_id);
    int (*trigger_passed)(sy_store *s, const char *key, size_t limit, sy_store_passed_cb cb,
                          void *arg);
    int (*settlements)(sy_store *s, int64_t from, int64_t to, sy_event_settlement_cb cb,
                       void *arg);
};

/* store/sqlite/named_events.c, store/postgres/named_events.c */
extern const struct sy_store_named_ops sy_sqlite_named_ops;
extern const struct sy_store_named_ops sy_pg_named_ops;

/* store/sqlite/settlements.c, store/postgres/settlements.c */
int sy_sqlite_event_settlements(sy_store *s, int64_t from, int64_t to,
                                sy_event_settlement_cb cb, void *arg);
int sy_pg_event_settlements(sy_store *s, int64_t from, int64_t to, sy_event_settlement_cb cb,
                            void *arg);

#endif
