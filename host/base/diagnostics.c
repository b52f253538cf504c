#include "base/diagnostics.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

void sy_diags_init(sy_diags *d) { memset(d, 0, sizeof *d); }

void sy_diags_free(sy_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].msg);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

void sy_diag_vadd(sy_diags *d, sy_diag_level level, const char *file,
                  int line, const char *fmt, va_list ap)
{
    if (level == SY_DIAG_ERROR)
        d->errors++;
    else
        d->warnings++;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        sy_diag *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            fputs("switchyard: out of memory recording a diagnostic\n", stderr);
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    char *msg = sy_vasprintf(fmt, ap);
    char *f = file ? strdup(file) : NULL;
    if (!msg || (file && !f)) {
        free(msg);
        free(f);
        fputs("switchyard: out of memory recording a diagnostic\n", stderr);
        return;
    }
    /* One diagnostic is one line, whatever a plugin put in its message
     * and whatever a path written in a config file holds (`routes =
     * "a\nb"` names a file that cannot exist, and says so on one line). */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    for (char *p = f; p && *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    d->v[d->n++] = (sy_diag){level, f, line, msg};
}

void sy_diag_add(sy_diags *d, sy_diag_level level, const char *file,
                 int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_diag_vadd(d, level, file, line, fmt, ap);
    va_end(ap);
}

char *sy_diag_format(const sy_diag *g, char *buf, size_t len)
{
    const char *lvl = g->level == SY_DIAG_ERROR ? "error" : "warning";
    if (g->file && g->line > 0)
        snprintf(buf, len, "%s:%d: %s: %s", g->file, g->line, lvl, g->msg);
    else if (g->file)
        snprintf(buf, len, "%s: %s: %s", g->file, lvl, g->msg);
    else
        snprintf(buf, len, "switchyard: %s: %s", lvl, g->msg);
    return buf;
}

void sy_diags_print(const sy_diags *d, FILE *out)
{
    char line[4096];
    /* On stderr in the journal's or the JSON form, a diagnostic is an
     * event of the log with its level: `journalctl -p err` shows the
     * configuration error that stopped a start. */
    bool as_log = out == stderr && sy_log_get_format() != SY_LOG_FORMAT_TEXT;
    for (size_t i = 0; i < d->n; i++) {
        sy_diag_format(&d->v[i], line, sizeof line);
        if (as_log)
            sy_log(d->v[i].level == SY_DIAG_ERROR ? SY_LOG_ERROR : SY_LOG_WARN, NULL, "%s", line);
        else
            fprintf(out, "%s\n", line);
    }
}
