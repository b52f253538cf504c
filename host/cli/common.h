/* cli/common.h -- helpers shared by the commands (CLI thread only). */
#ifndef SY_CLI_COMMON_H
#define SY_CLI_COMMON_H

#include "cli/cli.h"
#include "engine/engine.h"
#include "service/setup.h"
#include "store/store.h"

/* Opens the setup with `flags` and, when `store` is not NULL, the store.
 * Prints every diagnostic.  SY_EXIT_OK, or SY_EXIT_USAGE (nothing left
 * open). */
int sy_cli_open(const sy_cli *cli, unsigned flags, sy_setup *s, sy_store **store);

/* A --context argument (JSON text or @FILE) as compact JSON text, malloc'd;
 * "{}" for NULL.  NULL with a reason when it is not a JSON object. */
char *sy_cli_context(const char *arg, char *err, size_t err_len);

/* A run id argument; -1 (after printing a usage error) when malformed. */
int64_t sy_cli_run_id(const char *cmd, const char *arg);

/* Stores the definition and a new Pending run of `wf`. */
int sy_cli_record_run(sy_store *st, const sy_workflow *wf, const char *context,
                      int64_t *run_id, char *err, size_t err_len);

/* The engine options every command starts from: the store, the setup and
 * what its config says (context bound, lease, recoveries). */
sy_engine_opts sy_cli_engine_opts(sy_setup *s, sy_store *st, const char *owner);

#endif
