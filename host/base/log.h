/*
 * log.h -- the host's log: one event per line on stderr, with a level, in
 * the form that suits where stderr goes (base/log_line.h): the human one
 * with a timestamp for a terminal or a file, "<N>"-prefixed lines for the
 * journal, or JSON lines.  Thread-safe: each event is written with one
 * stdio call.
 */
#ifndef SY_LOG_H
#define SY_LOG_H

#include <stdarg.h>

#include <switchyard/executor.h>

#include "base/log_line.h"

/* Lines above this level are dropped (default SY_LOG_INFO; the environment
 * variable SWITCHYARD_LOG=error|warn|info|debug sets it at start). */
void sy_log_set_level(sy_log_level level);
sy_log_level sy_log_get_level(void);

/* Reads SWITCHYARD_LOG, and picks the format for "auto" (sy_log_auto). */
void sy_log_init_from_env(void);

/* The form of the lines from now on (default: sy_log_auto()'s). */
void sy_log_set_format(sy_log_format format);
sy_log_format sy_log_get_format(void);

/* The journal's form when stderr is the stream systemd's JOURNAL_STREAM
 * names, else text. */
sy_log_format sy_log_auto(void);

/* `who` tags the line (a module or an instance name); may be NULL. */
void sy_log(sy_log_level level, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sy_vlog(sy_log_level level, const char *who, const char *fmt,
             va_list ap);

/* The same with what the event is about (may be NULL): fields of their
 * own in JSON lines; the other forms print the message alone. */
void sy_logf(sy_log_level level, const char *who, const sy_log_fields *f,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void sy_vlogf(sy_log_level level, const char *who, const sy_log_fields *f,
              const char *fmt, va_list ap);

#endif
