/*
 * tz.h -- time zones as tables of UTC offsets, read from the system's
 * compiled zone files (TZif, RFC 8536, under /usr/share/zoneinfo or
 * $TZDIR).
 *
 * Schedules are evaluated in a workflow's zone while the process runs in
 * another, and plugin threads may read the environment at any moment, so
 * the zone is never switched with setenv("TZ") and tzset(): a loaded zone
 * is a plain table (the file's transitions, and its POSIX rule for the
 * years after them, unrolled to 2200), and every question about it is a
 * pure function of that table.
 *
 * A loaded sy_tz is immutable: any thread may read it.
 */
#ifndef SY_TZ_H
#define SY_TZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct sy_tz {
    char *name;        /* owned: "Europe/Berlin", "UTC" */
    int64_t *at;       /* owned: transition instants (s since the epoch),
                          increasing */
    int32_t *off;      /* owned: off[i] is the UTC offset (s) from at[i] on */
    size_t n;
    int32_t off0;      /* the offset before the first transition */
    int32_t off_min, off_max; /* over every offset of the table */
} sy_tz;

/* Loads zone `name` ("Europe/Berlin").  NULL or "UTC" needs no file.  A
 * name with "..", a leading '/', or characters a zone name never holds is
 * refused, as is a missing or malformed file; NULL with the reason in err. */
sy_tz *sy_tz_load(const char *name, char *err, size_t err_len);

/* A zone built from a table (tests; the arrays are copied). */
sy_tz *sy_tz_from_table(const char *name, int32_t off0, const int64_t *at,
                        const int32_t *off, size_t n);

void sy_tz_free(sy_tz *tz);

/* The UTC offset in force at instant `t` (seconds). */
int32_t sy_tz_offset(const sy_tz *tz, int64_t t);

/* The first transition strictly after `t`; INT64_MAX when none. */
int64_t sy_tz_next_transition(const sy_tz *tz, int64_t t);

/* `sec` (since the epoch) as ISO 8601 at UTC offset `off`:
 * "2026-03-29T01:00:00Z" for 0, else "2026-03-29T03:00:00+02:00". */
void sy_time_format(int64_t sec, int32_t off, char *buf, size_t len);

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t sy_days_from_civil(int64_t y, unsigned m, unsigned d);
void sy_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
