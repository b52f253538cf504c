/*
 * diag.h -- diagnostics: errors and warnings that name a file and a line.
 *
 * Every module that reads user input reports through a sy_diags list rather
 * than printing, so `switchyard check` can show every problem at once and a
 * reload can refuse a bad configuration without having touched the running
 * one.  Single-threaded: a list belongs to whoever is loading.
 */
#ifndef SY_DIAG_H
#define SY_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef enum sy_diag_level { SY_DIAG_ERROR, SY_DIAG_WARNING } sy_diag_level;

typedef struct sy_diag {
    sy_diag_level level;
    char *file; /* owned; NULL when the problem has no file */
    int line;   /* 1-based; 0 when unknown */
    char *msg;  /* owned, one line, no trailing newline */
} sy_diag;

typedef struct sy_diags {
    sy_diag *v; /* owned array of n entries, in the order reported */
    size_t n, cap;
    size_t errors, warnings;
} sy_diags;

void sy_diags_init(sy_diags *d);
void sy_diags_free(sy_diags *d);

/* Appends one diagnostic; `file` may be NULL, `line` 0.  Out of memory is
 * reported on stderr and the entry counted but not kept. */
void sy_diag_add(sy_diags *d, sy_diag_level level, const char *file,
                 int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void sy_diag_vadd(sy_diags *d, sy_diag_level level, const char *file,
                  int line, const char *fmt, va_list ap);

#define sy_error(d, file, line, ...) \
    sy_diag_add((d), SY_DIAG_ERROR, (file), (line), __VA_ARGS__)
#define sy_warn(d, file, line, ...) \
    sy_diag_add((d), SY_DIAG_WARNING, (file), (line), __VA_ARGS__)

/* Prints each as "FILE:LINE: error: MSG" ("FILE: ...", "switchyard: ..."
 * when the line or file is unknown), one per line. */
void sy_diags_print(const sy_diags *d, FILE *out);

/* Renders one diagnostic the way sy_diags_print does, without the
 * newline, into buf (truncating).  Returns buf. */
char *sy_diag_format(const sy_diag *g, char *buf, size_t len);

#endif
