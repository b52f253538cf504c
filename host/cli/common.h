/* cli/common.h -- helpers shared by the commands (CLI thread only). */
#ifndef SY_CLI_COMMON_H
#define SY_CLI_COMMON_H

#include "cli/cli.h"
#include "service/service.h"

/* Opens the service: the setup with `flags` and, with `store`, the store.
 * Prints every diagnostic.  SY_EXIT_OK, or SY_EXIT_USAGE (nothing left
 * open). */
int sy_cli_open(const sy_cli *cli, unsigned flags, bool store, sy_service *sv);

/* A --context argument (JSON text or @FILE) as compact JSON text, malloc'd;
 * "{}" for NULL.  NULL with a reason when it is not a JSON object. */
char *sy_cli_context(const char *arg, char *err, size_t err_len);

/* A run id argument; -1 (after printing a usage error) when malformed. */
int64_t sy_cli_run_id(const char *cmd, const char *arg);

#endif
