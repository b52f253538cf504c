/*
 * engine/map.h -- dynamic fan-out: a mapped task's elements.
 *
 * A mapped task (`map`, `map_range`) becomes Ready like any task; instead
 * of an attempt it starts its map: its input context gives the list (or
 * the range), checked against max_map, and the map's size is stored.  Its
 * own row stays Running while its elements run.  Elements live in the
 * map's slots (r->t past wf->n_tasks, SY_MAP_WINDOW of them): each slot
 * runs one element as a task of its own (attempts, retries, timeouts,
 * tokens), written to its element row; a slot written terminal is freed
 * (engine/batch.c) and the next turn gives it the next element.  So the
 * store holds rows only for elements started, and memory follows the
 * slots, not the size of the map.
 *
 * When every element has ended the map ends: Completed, with the output
 * {"<task id>": [each element's output, in element order]} read back
 * from the store; Failed when an element failed (the others still run);
 * Cancelled with its run.  An empty list or range skips the task.
 */
#ifndef SY_ENGINE_MAP_H
#define SY_ENGINE_MAP_H

#include "engine/internal.h"

/* Makes the run's maps and slots and loads what the store holds of maps
 * already started (their sizes, counts, open elements).  Called by
 * sy_live_load after the task rows, before anything points into r->t.
 * *hosts (NULL, or one entry per task: the host of an attempt found
 * Running, owned) grows to r->n_t entries with the elements' own when
 * there are slots.  Non-zero with a reason in err on a store failure. */
int sy_map_load(sy_live_run *r, char ***hosts, char *err, size_t err_len);

/* Once the loaded run is routed: goes on with the maps that had started
 * (their lists bound again from the input context). */
void sy_map_resume(sy_live_run *r);

/* Starts the map of Ready mapped task idx, inside the turn's batch. */
void sy_map_start(sy_live_run *r, size_t idx, int64_t now);

/* Once per turn, inside the batch, before deciding: fills the freed
 * slots of pending maps with their next elements and ends the maps whose
 * elements have all ended. */
void sy_map_turn(sy_engine *e);

/* Frees what the run's maps hold. */
void sy_map_free(sy_live_run *r);

#endif
