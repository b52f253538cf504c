/*
 * context.h -- the JSON context passed from task to task.
 *
 * A task's input is the run's initial context merged with the outputs of
 * all its ancestors, in topological order: later wins, objects merge
 * recursively, anything else (arrays included) replaces.  Pure functions.
 */
#ifndef SY_CONTEXT_H
#define SY_CONTEXT_H

#include <jansson.h>
#include <stddef.h>

/* Merges `src` into `dst` (both objects): for each key, two objects merge
 * recursively, otherwise src's value replaces dst's.  Returns 0, or -1 when
 * out of memory (dst is then partly merged). */
int sy_json_merge(json_t *dst, const json_t *src);

/* Parses a task's output: NULL or empty text is {}; anything but a JSON
 * object, or more than max_bytes, is an error with a clear reason in err
 * ("output is not a JSON object: got an array", "output is 17 MiB, more
 * than max_context_bytes 16 MiB", "output is not valid JSON: <jansson's
 * text> at line 1 column 5").  New reference or NULL. */
json_t *sy_output_parse(const char *text, size_t len, size_t max_bytes,
                        char *err, size_t err_len);

#endif
