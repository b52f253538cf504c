/*
 * duration.h -- durations as operators write them: "250ms", "5s", "1.5m",
 * "2h", "1d", compounds such as "1h30m", or integer milliseconds.
 */
#ifndef SY_DURATION_H
#define SY_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parses `s` into milliseconds.  Returns 0, or -1 with a reason in err
 * (empty, no unit, unknown unit, negative, overflow).  Fractions are
 * rounded to the nearest millisecond. */
int sy_duration_parse(const char *s, int64_t *ms, char *err, size_t err_len);

/* Formats `ms` compactly ("1h30m", "250ms", "0s") into buf. */
char *sy_duration_format(int64_t ms, char *buf, size_t len);

#endif
