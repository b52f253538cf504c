#include "base/clock.h"
#include "base/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

static atomic_int log_level = SY_LOG_INFO;
static atomic_int log_format = SY_LOG_FORMAT_TEXT;

void sy_log_set_level(sy_log_level level) { atomic_store(&log_level, (int)level); }

sy_log_level sy_log_get_level(void) { return (sy_log_level)atomic_load(&log_level); }

void sy_log_set_format(sy_log_format format) { atomic_store(&log_format, (int)format); }

sy_log_format sy_log_get_format(void) { return (sy_log_format)atomic_load(&log_format); }

sy_log_format sy_log_auto(void)
{
    struct stat st;
    const char *js = getenv("JOURNAL_STREAM");
    if (js && fstat(STDERR_FILENO, &st) == 0 &&
        sy_log_journal_stream_is(js, (unsigned long long)st.st_dev,
                                 (unsigned long long)st.st_ino))
        return SY_LOG_FORMAT_JOURNAL;
    return SY_LOG_FORMAT_TEXT;
}

void sy_log_init_from_env(void)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    sy_log_set_format(sy_log_auto());
    const char *v = getenv("SWITCHYARD_LOG");
    if (!v)
        return;
    for (size_t i = 0; i < SY_ARRAY_LEN(names); i++)
        if (strcmp(v, names[i]) == 0)
            sy_log_set_level((sy_log_level)i);
}

void sy_vlogf(sy_log_level level, const char *who, const sy_log_fields *f, const char *fmt,
              va_list ap)
{
    if ((int)level > atomic_load(&log_level))
        return;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* Room for a message whose every byte JSON escapes. */
    char line[8192];
    size_t n = sy_log_line(line, sizeof line, sy_log_get_format(), sy_clock_now_ms(), level,
                           who, f, msg);
    /* One call per event: stdio locks the stream, so lines from plugin
     * threads never interleave. */
    fwrite(line, 1, n, stderr);
}

void sy_vlog(sy_log_level level, const char *who, const char *fmt, va_list ap)
{
    sy_vlogf(level, who, NULL, fmt, ap);
}

void sy_log(sy_log_level level, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_vlogf(level, who, NULL, fmt, ap);
    va_end(ap);
}

void sy_logf(sy_log_level level, const char *who, const sy_log_fields *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_vlogf(level, who, f, fmt, ap);
    va_end(ap);
}
