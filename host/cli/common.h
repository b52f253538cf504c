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
/* The same for option `opt` ("--data"). */
char *sy_cli_json_object(const char *opt, const char *arg, char *err, size_t err_len);

/* The value of option `opt` of command `cmd` as a whole number from min
 * to max: digits only, no sign, no overflow.  SY_EXIT_OK, or SY_EXIT_USAGE
 * after printing an error that names the option, the value and the
 * range. */
int sy_cli_number(const char *cmd, const char *opt, const char *arg, uint64_t min,
                  uint64_t max, uint64_t *out);

/* A run id argument; -1 (after printing a usage error) when malformed. */
int64_t sy_cli_run_id(const char *cmd, const char *arg);

/* An error for a table or a progress line: its last line (what ended the
 * attempt, and for a command the last line of its stderr), cut to its
 * last 200 bytes, so an error never floods a screen.  `status RUN --task
 * T` shows it whole, `logs RUN T` what the attempts wrote. */
void sy_cli_error_summary(const char *error, char *buf, size_t len);

/* Claims run `id` and runs it to its end in this process, with progress
 * (cli/run.c; `run` and `retry`): the service opened with the instances
 * created.  The exit status: 0 completed, 1 failed or lost, 130 when a
 * second signal cancelled it.  `cmd` names the command in messages.
 * With `taken`, a run another host claimed first is not an error to
 * print: *taken says so. */
int sy_cli_drive(sy_service *sv, const char *cmd, int64_t id, bool quiet, uint64_t every_s,
                 bool *taken);

#endif
