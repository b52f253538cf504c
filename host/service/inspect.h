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

/* Checks a loaded setup's config (store, directories) and adds an error to
 * d for each problem; returns how many. */
int sy_inspect(const sy_setup *s, sy_diags *d);

/* Checks that the program of task `t` (its `command` parameter's first
 * element, if any) can be found as an executor would find it: a name
 * with a '/' relative to the task's directory (`cwd`, else the workflow
 * file's), else on PATH.  An error at file:line when not; returns 0 or 1.
 * Called while the workflow loads (SY_SETUP_CHECK_COMMANDS), so a file
 * with other errors is still looked at. */
int sy_inspect_command(const sy_workflow *wf, const sy_task_def *t, const char *file,
                       int line, sy_diags *d);

/* Whether the store URL names a store that lives only in this process
 * ("sqlite::memory:"): nothing submitted to it outlives the command. */
bool sy_inspect_store_is_memory(const char *url);

#endif
