/*
 * engine/attempt_log.h -- what an attempt wrote on stdout and stderr:
 * bounded where the plugin hands it over, recorded with the attempt.
 */
#ifndef SY_ENGINE_ATTEMPT_LOG_H
#define SY_ENGINE_ATTEMPT_LOG_H

#include "engine/internal.h"

/* log_limit when the options leave it 0. */
#define SY_LOG_LIMIT_DEFAULT ((size_t)64 * 1024)

/* The marker line kept in place of what was dropped. */
#define SY_LOG_MARKER_FORMAT "\n[... %lld bytes dropped ...]\n"

/* Keeps at most `limit` bytes of `text` (`len` bytes, where the plugin
 * left out `dropped` bytes at offset `cut`): all of it, or its head and
 * tail, with one marker line saying how many bytes were dropped in all
 * where they were.  Bytes that are not UTF-8 and NUL bytes become '?'.
 * Any thread: the plugin's, in the completion callback. */
void sy_attempt_log_keep(sy_attempt_log *out, const char *text, size_t len,
                         size_t dropped, size_t cut, size_t limit);

void sy_attempt_log_clear(sy_attempt_log *log);

/* Writes the kept streams of a current attempt to the store under the
 * run's claim and the task's attempt token.  Loop thread. */
void sy_attempt_log_write(sy_attempt *a);

#endif
