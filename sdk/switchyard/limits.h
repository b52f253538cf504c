/*
 * switchyard/limits.h -- the bounds the host holds a plugin to, in one
 * place: the host enforces them and the conformance kit tests against
 * them, so a plugin the kit passes is not refused at run time for these.
 *
 * Constants only; a plugin may include it to stay inside them.
 */
#ifndef SWITCHYARD_LIMITS_H
#define SWITCHYARD_LIMITS_H

#include <stddef.h>

/* The longest a call into a plugin on the host's loop (submit(), cancel(),
 * capacity(), resume()) may take, in milliseconds, before the host's
 * watchdog reports it stuck and takes the instance out of dispatch.  An
 * instance's call_timeout_ms overrides it; this is the default. */
#define SY_CALL_BOUND_MS 1000

/* The default max_context_bytes: an output longer than this fails the
 * attempt by its length alone (the host never reads it). */
#define SY_MAX_CONTEXT_BYTES_DEFAULT ((size_t)16 << 20)

/* The most of sy_result.error the host keeps, in bytes; the rest is cut
 * (an error is a few lines saying why, kept in the store and shown). */
#define SY_RESULT_ERROR_MAX ((size_t)64 << 10)

/* The most of sy_result.note the host keeps, in bytes (the ABI says
 * 1 KiB). */
#define SY_RESULT_NOTE_MAX ((size_t)1024)

#endif
