/* When a schedule fires next: the wall-clock times the expression names,
 * mapped to instants through the zone's offsets, with cron's rules for a
 * change of the clocks (workflow/cron.h). */
#include "workflow/cron.h"

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static bool day_ok(const sy_cron *c, unsigned d, unsigned wday)
{
    bool dm = c->dom >> d & 1, dw = c->dow >> wday & 1;
    return c->dom_star || c->dow_star ? dm && dw : dm || dw;
}

/* The first wall-clock minute at or after L (seconds, read as if UTC) that
 * `c` names; INT64_MAX past `limit`. */
static int64_t next_wall(const sy_cron *c, int64_t L, int64_t limit)
{
    while (L <= limit) {
        int64_t days = floor_div(L, 86400), sod = L - days * 86400;
        int64_t y;
        unsigned m, d;
        sy_civil_from_days(days, &y, &m, &d);
        if (!(c->month >> m & 1)) {
            L = sy_days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1) * 86400;
            continue;
        }
        unsigned wday = (unsigned)(((days % 7) + 11) % 7); /* 1970-01-01: Thursday */
        if (!day_ok(c, d, wday)) {
            L = (days + 1) * 86400;
            continue;
        }
        unsigned h = (unsigned)(sod / 3600), mi = (unsigned)(sod % 3600 / 60);
        uint64_t later = c->minute >> mi << mi;
        if (!(c->hour >> h & 1) || !later) {
            L = days * 86400 + (int64_t)(h + 1) * 3600;
            continue;
        }
        return days * 86400 + h * 3600 + (int64_t)__builtin_ctzll(later) * 60;
    }
    return INT64_MAX;
}

/* The instants at which the clock reads L, in order: 0 (skipped by a
 * spring-forward: *jump is then that transition), 1, or 2 (repeated by a
 * fall-back).  Every such instant u lies in [L - off_max, L - off_min], so
 * the offsets of the zone's intervals across that window are the only
 * candidates. */
static int instants(const sy_tz *tz, int64_t L, int64_t u[2], int64_t *jump)
{
    int n = 0;
    int64_t from = L - tz->off_max, to = L - tz->off_min;
    *jump = INT64_MAX;
    for (int64_t at = from; at <= to;) {
        int32_t o = sy_tz_offset(tz, at);
        int64_t cand = L - o;
        if (cand >= from && cand <= to && sy_tz_offset(tz, cand) == o && n < 2 &&
            (n == 0 || u[n - 1] != cand))
            u[n++] = cand;
        int64_t next = sy_tz_next_transition(tz, at);
        if (next > to)
            break;
        /* A jump forward over L: the clock read less than L just before
         * it, more than L just after. */
        int32_t after = sy_tz_offset(tz, next);
        if (*jump == INT64_MAX && after > o && next + o <= L && next + after > L)
            *jump = next;
        at = next;
    }
    return n;
}

int64_t sy_cron_next(const sy_cron *c, const sy_tz *tz, int64_t t)
{
    int64_t best = INT64_MAX;
    int64_t L = floor_div(t + tz->off_min, 60) * 60;
    int64_t limit = t + tz->off_max + SY_CRON_HORIZON_S;
    for (;; L += 60) {
        L = next_wall(c, L, limit);
        /* Every instant of this wall time and of later ones comes after
         * L - off_max. */
        if (L == INT64_MAX || L - tz->off_max > best)
            break;
        int64_t u[2], jump;
        int n = instants(tz, L, u, &jump);
        if (n == 0 && !c->wild)
            u[n++] = jump;
        else if (n == 2 && !c->wild)
            n = 1; /* the first pass of a repeated hour only */
        for (int i = 0; i < n; i++)
            if (u[i] > t && u[i] < best)
                best = u[i];
    }
    return best;
}
