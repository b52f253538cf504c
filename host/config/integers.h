/*
 * config/integers.h -- integers libconfig would not read as written.
 *
 * libconfig 1.5 (Debian 12) reads an integer literal without the L suffix
 * as a 32-bit int and wraps it silently: `timeout = 3000000000` becomes
 * -1294967296, `mask = 0xFFFFFFFF` becomes -1.  Every configuration file
 * is read through libconfig, so each is scanned once after a successful
 * parse, with the files it includes, and each such literal is an error at
 * its line that says how to write it (`3000000000L`).
 *
 * Threading: no shared state; any thread.
 */
#ifndef SY_CFGINT_H
#define SY_CFGINT_H

#include <libconfig.h>

#include "base/diagnostics.h"

/* Scans `path`, just read into `lc`, and every file a setting of `lc`
 * came from (its @includes, found in lc's include directory).  Returns the
 * number of errors added to `d`. */
int sy_cfg_check_ints(const config_t *lc, const char *path, sy_diags *d);

/* The same for one text (for tests and for files already in memory):
 * `file` names it in messages. */
int sy_cfg_check_ints_text(const char *text, const char *file, sy_diags *d);

#endif
