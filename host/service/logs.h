/*
 * service/logs.h -- what attempts wrote on stdout and stderr, as data for
 * `switchyard logs`.  Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_SERVICE_LOGS_H
#define SY_SERVICE_LOGS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

/* The logs of run `run_id` recorded at `since` or later (0: all; of task
 * `task_id` alone when not NULL, of attempt `attempt` alone when not 0),
 * in task, attempt, stream order:
 * {"run_id", "status", "logs": [{"task", "attempt", "stream", "text",
 * "size", "dropped", "at"}]}.  SY_ENOENT: no such run or task (err says
 * which). */
int sy_logs_read(sy_store *st, int64_t run_id, int64_t since, const char *task_id,
                 uint32_t attempt, json_t **out, char *err, size_t err_len);

/* Where a reader following a run's logs is: what it has seen. */
typedef struct sy_logs_cursor {
    json_t *seen;     /* owned: "task/attempt/stream" keys */
    int64_t newest;   /* the newest "at" seen */
} sy_logs_cursor;

/* The logs of run `run_id` (task, attempt as sy_logs_read) that the
 * cursor has not seen yet, as an array in *fresh (owned by the caller),
 * and whether the run had ended before they were read (then no more
 * come).  Start with a zeroed cursor; clear it after. */
int sy_logs_next(sy_store *st, int64_t run_id, const char *task_id, uint32_t attempt,
                 sy_logs_cursor *c, json_t **fresh, bool *over, char *err, size_t err_len);

void sy_logs_cursor_clear(sy_logs_cursor *c);

#endif
