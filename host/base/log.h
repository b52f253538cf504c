/*
 * log.h -- the host's log: one line per event on stderr, with a timestamp
 * and a level.  Thread-safe: each line is written with one stdio call.
 */
#ifndef SY_LOG_H
#define SY_LOG_H

#include <stdarg.h>

#include <switchyard/executor.h>

/* Lines above this level are dropped (default SY_LOG_INFO; the environment
 * variable SWITCHYARD_LOG=error|warn|info|debug sets it at start). */
void sy_log_set_level(sy_log_level level);
sy_log_level sy_log_get_level(void);

/* Reads SWITCHYARD_LOG. */
void sy_log_init_from_env(void);

/* `who` tags the line (a module or an instance name); may be NULL. */
void sy_log(sy_log_level level, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sy_vlog(sy_log_level level, const char *who, const char *fmt,
             va_list ap);

#endif
