#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/tz.h"

int64_t sy_clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- the schedules' clock ------------------------------------------------------ */

static struct {
    bool fake;
    int64_t start, anchor;
    double rate;
} sched;
static pthread_once_t sched_once = PTHREAD_ONCE_INIT;

static bool parse_start(const char *s, char **end, int64_t *ms)
{
    int y, mo, d, h, mi, sec = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5) {
        s += n;
        if (*s == ':' && sscanf(s, ":%2d%n", &sec, &n) == 1)
            s += n;
        if (*s != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
            sec > 60)
            return false;
        *end = (char *)s + 1;
        *ms = (sy_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
               sec) * 1000;
        return true;
    }
    *ms = strtoll(s, end, 10);
    return *end != s;
}

bool sy_clock_fake_parse(const char *text, int64_t *start, double *rate, int64_t *anchor)
{
    char *p;
    if (!text || !parse_start(text, &p, start))
        return false;
    *rate = 1;
    *anchor = 0;
    if (*p == 'x') {
        char *e;
        *rate = strtod(p + 1, &e);
        if (e == p + 1 || !(*rate > 0 && *rate <= 1e6))
            return false;
        p = e;
    }
    if (*p == '@') {
        char *e;
        *anchor = strtoll(p + 1, &e, 10);
        if (e == p + 1 || *anchor <= 0)
            return false;
        p = e;
    }
    return *p == '\0';
}

static void sched_init(void)
{
    const char *v = getenv("SWITCHYARD_FAKE_CLOCK");
    sched.rate = 1;
    if (!v || !*v)
        return;
    if (!sy_clock_fake_parse(v, &sched.start, &sched.rate, &sched.anchor)) {
        fprintf(stderr, "switchyard: SWITCHYARD_FAKE_CLOCK=\"%s\" is not START[xRATE][@ANCHOR] "
                "(e.g. 2026-03-29T00:58:00Zx60); ignored\n", v);
        sched.rate = 1;
        return;
    }
    if (!sched.anchor)
        sched.anchor = sy_clock_now_ms();
    sched.fake = true;
}

int64_t sy_clock_schedule_ms(void)
{
    pthread_once(&sched_once, sched_init);
    int64_t now = sy_clock_now_ms();
    if (!sched.fake)
        return now;
    return sched.start + (int64_t)((double)(now - sched.anchor) * sched.rate);
}

double sy_clock_schedule_rate(void)
{
    pthread_once(&sched_once, sched_init);
    return sched.rate;
}
