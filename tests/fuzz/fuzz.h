/*
 * fuzz.h -- what every fuzz target shares.
 *
 * Each target is one file defining LLVMFuzzerTestOneInput.  It is linked
 * twice: with libFuzzer by `make fuzz` (configure --enable-fuzz, clang),
 * and with replay.c by `make check`, which feeds it every file of its
 * corpus, so a compiler without libFuzzer (gcc, valgrind) still runs each
 * seed and each past crash through the very same entry point.
 *
 * A target checks properties of the code under test with SY_FUZZ_CHECK:
 * a broken property aborts, which both libFuzzer and the replay report.
 */
#ifndef SY_FUZZ_H
#define SY_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SY_FUZZ_CHECK(cond, ...)                                              \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__,         \
                    __LINE__, #cond);                                         \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
            abort();                                                          \
        }                                                                     \
    } while (0)

/* The input as a NUL-terminated string (an embedded NUL ends it, as it
 * would for a C caller).  Malloc'd; the caller frees it. */
char *sy_fuzz_str(const uint8_t *data, size_t size);

/* Splits the input at the first `sep` byte: [*a, *a + *an) before it and
 * [*b, *b + *bn) after it (empty when there is none). */
void sy_fuzz_split(const uint8_t *data, size_t size, uint8_t sep,
                   const uint8_t **a, size_t *an, const uint8_t **b,
                   size_t *bn);

/* Writes the bytes into `name` inside a private directory made once per
 * process (removed at exit) and returns the file's path (static storage,
 * valid until the next call).  Aborts when the file cannot be written: a
 * full disk must not pass for a clean run. */
const char *sy_fuzz_write(const char *name, const uint8_t *data, size_t size);

/* The private directory sy_fuzz_write writes into. */
const char *sy_fuzz_dir(void);

/* Whether a configuration text could make libconfig or our loaders read
 * outside the private directory: device and proc files (/dev/zero never
 * ends) and `@include` of absolute paths or globs.  Such inputs are
 * skipped: they test the machine, not the parser. */
bool sy_fuzz_reads_outside(const uint8_t *data, size_t size);

/* Renders every diagnostic of a list the way the CLI would, into a
 * scratch buffer: formatting is part of what a bad input reaches. */
struct sy_diags;
void sy_fuzz_render(const struct sy_diags *d);

#endif
