/*
 * cli/plugins_remote.h -- `switchyard --host URL plugins [-v] [--json]`:
 * the serving host's instances with their health (and, with -v, every
 * figure their plugin's metrics() reports), then the plugins it found;
 * --json prints the admin API's answer as it came.  CLI thread only.
 */
#ifndef SY_CLI_PLUGINS_REMOTE_H
#define SY_CLI_PLUGINS_REMOTE_H

#include <stdbool.h>

#include "cli/cli.h"

/* The exit status: SY_EXIT_OK, or as sy_remote_json on an error. */
int sy_cli_plugins_remote(const sy_cli *cli, bool verbose, bool json);

#endif
