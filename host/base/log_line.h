/*
 * log_line.h -- one log event as the line written for it: the human form
 * for a terminal, the journal's (a "<N>" syslog priority before each line,
 * no timestamp: the journal keeps its own), or a JSON object per line.
 * Pure; for base/log.c and its tests.
 */
#ifndef SY_LOG_LINE_H
#define SY_LOG_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

typedef enum sy_log_format {
    SY_LOG_FORMAT_TEXT,    /* "2026-01-02T03:04:05.678Z info  who: message" */
    SY_LOG_FORMAT_JOURNAL, /* "<6>who: message" (sd-daemon(3)) */
    SY_LOG_FORMAT_JSON,    /* {"time":..,"level":..,"source":..,"message":..} */
} sy_log_format;

/* What an event is about, where the caller knows: each part left out when
 * NULL or 0.  JSON lines carry them as fields of their own. */
typedef struct sy_log_fields {
    const char *instance; /* executor instance */
    int64_t run;          /* run id */
    const char *task;     /* task namespace or id */
    uint32_t attempt;
} sy_log_fields;

/* Writes the line(s) for one event into buf (NUL-terminated, ending in a
 * newline; a message too long is cut, a JSON line stays valid).  Returns
 * the length written.  `who` and `f` may be NULL; `now_ms` is the wall
 * clock in ms since the epoch. */
size_t sy_log_line(char *buf, size_t len, sy_log_format format, int64_t now_ms,
                   sy_log_level level, const char *who, const sy_log_fields *f,
                   const char *msg);

/* Whether JOURNAL_STREAM's value ("DEVICE:INODE") names the file `dev` and
 * `ino`: systemd sets it for the stream it connects stderr to, and a child
 * whose stderr was redirected elsewhere keeps the variable, so it is
 * checked rather than trusted (systemd.exec(5)). */
bool sy_log_journal_stream_is(const char *journal_stream, unsigned long long dev,
                              unsigned long long ino);

/* "text", "journal", "json" to a format; false for another word. */
bool sy_log_format_parse(const char *word, sy_log_format *out);

#endif
