/*
 * workflow/cron.h -- a workflow's `schedule`: five-field cron expressions
 * (minute hour day-of-month month day-of-week) with lists, ranges, steps,
 * month and weekday names, and the macros @yearly (@annually), @monthly,
 * @weekly, @daily (@midnight), @hourly; and when one next fires in a time
 * zone.
 *
 * Fire times follow cron (Vixie cron, cronie) where it decides:
 *  - day-of-month and day-of-week are OR'ed when both are restricted, and
 *    AND'ed when either begins with '*';
 *  - a change of the clocks: a job is "wildcard" when its minute or hour
 *    field begins with '*', "fixed" otherwise.  A fixed job whose time
 *    falls in the hour skipped by a spring-forward fires once, at the
 *    instant of the jump; in the hour repeated by a fall-back it fires once,
 *    at the first pass.  A wildcard job fires by the clock as it reads:
 *    nothing in a skipped hour, and in both passes of a repeated one.
 *
 * Pure functions: any thread.
 */
#ifndef SY_CRON_H
#define SY_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/tz.h"

typedef struct sy_cron {
    uint64_t minute;  /* bit i: minute i (0-59) */
    uint32_t hour;    /* bits 0-23 */
    uint32_t dom;     /* bits 1-31 */
    uint32_t month;   /* bits 1-12 */
    uint32_t dow;     /* bits 0-6, Sunday 0 (7 is read as 0) */
    bool dom_star, dow_star; /* the field began with '*' */
    bool wild;        /* the minute or the hour field began with '*' */
} sy_cron;

/* Parses `expr`; NULL when valid, else the reason in buf (returned). */
const char *sy_cron_parse(const char *expr, sy_cron *out, char *buf, size_t len);

/* How far ahead sy_cron_next looks before it gives up (a schedule such as
 * "0 0 30 2 *" never fires): eight years, past the longest gap between two
 * 29ths of February. */
#define SY_CRON_HORIZON_S ((int64_t)8 * 366 * 86400)

/* The first instant strictly after `t` (seconds since the epoch) when `c`
 * fires in zone `tz`; INT64_MAX when it does not fire within the horizon. */
int64_t sy_cron_next(const sy_cron *c, const sy_tz *tz, int64_t t);

#endif
