#include "base/clock.h"
#include "base/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

static atomic_int log_level = SY_LOG_INFO;

void sy_log_set_level(sy_log_level level) { atomic_store(&log_level, (int)level); }

sy_log_level sy_log_get_level(void) { return (sy_log_level)atomic_load(&log_level); }

void sy_log_init_from_env(void)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *v = getenv("SWITCHYARD_LOG");
    if (!v)
        return;
    for (size_t i = 0; i < SY_ARRAY_LEN(names); i++)
        if (strcmp(v, names[i]) == 0)
            sy_log_set_level((sy_log_level)i);
}

void sy_vlog(sy_log_level level, const char *who, const char *fmt, va_list ap)
{
    static const char *const tags[] = {"error", "warn", "info", "debug"};
    if ((int)level > atomic_load(&log_level))
        return;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int64_t now = sy_clock_now_ms();
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    unsigned li = (unsigned)level < SY_ARRAY_LEN(tags) ? (unsigned)level : 3u;
    /* One fprintf per line: stdio locks the stream, so lines from plugin
     * threads never interleave. */
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s%s%s\n",
            tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
            tm.tm_min, tm.tm_sec, (long)(now % 1000), tags[li],
            who ? who : "", who ? ": " : "", msg);
}

void sy_log(sy_log_level level, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_vlog(level, who, fmt, ap);
    va_end(ap);
}
