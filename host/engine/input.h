/* engine/input.h -- a task's input context, built from its ancestors. */
#ifndef SY_ENGINE_INPUT_H
#define SY_ENGINE_INPUT_H

#include "engine/internal.h"

/* The input of task idx, as JSON text.  Sets *borrowed when the text is
 * the run's own initial context.  NULL with err on failure (too large, out
 * of memory). */
char *sy_engine_input(sy_live_run *r, size_t idx, bool *borrowed, char *err,
                      size_t err_len);

/* The merged input context as a JSON object (new reference; values shared
 * with the outputs, read them only); NULL when out of memory. */
json_t *sy_engine_input_json(sy_live_run *r, size_t idx);

/* Frees what building inputs kept for the run. */
void sy_engine_input_free(sy_live_run *r);

#endif
