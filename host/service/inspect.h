/*
 * service/inspect.h -- what `switchyard check` verifies beyond loading:
 * that the store can be opened where the config says (without creating
 * it), that the configured directories exist, and that every command
 * task's program can be found, each problem at its file and line.  What
 * would otherwise be a failure at the first run, at 3 a.m.
 */
#ifndef SY_INSPECT_H
#define SY_INSPECT_H

#include "base/diagnostics.h"
#include "service/setup.h"

/* Checks a loaded setup (the config, and the workflows when read) and adds
 * an error to d for each problem; returns how many. */
int sy_inspect(const sy_setup *s, sy_diags *d);

/* Whether the store URL names a store that lives only in this process
 * ("sqlite::memory:"): nothing submitted to it outlives the command. */
bool sy_inspect_store_is_memory(const char *url);

#endif
