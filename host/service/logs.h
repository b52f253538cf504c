/*
 * service/logs.h -- what attempts wrote on stdout and stderr, as data for
 * `switchyard logs`.  Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_SERVICE_LOGS_H
#define SY_SERVICE_LOGS_H

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

#endif
