/*
 * cli/remote.h -- the commands that can talk to a serving host through its
 * admin API instead of opening the store (`switchyard --host URL ...`):
 * status, runs, submit, cancel, retry, logs.  libcurl, one request at a
 * time; CLI thread only.
 */
#ifndef SY_CLI_REMOTE_H
#define SY_CLI_REMOTE_H

#include <jansson.h>

#include "cli/cli.h"

/* `method` `path` (under the host's URL) with `body` (NULL: none), the
 * reply's JSON in *out.  Prints "switchyard: CMD: ..." and returns
 * SY_EXIT_FAIL when the host answers an error (its message), or cannot be
 * reached; SY_EXIT_USAGE for a bad --host or token file. */
int sy_remote_json(const sy_cli *cli, const char *cmd, const char *method, const char *path,
                   const json_t *body, json_t **out);

/* sy_remote_json with one more request header, "Name: value" (NULL:
 * none). */
int sy_remote_json_header(const sy_cli *cli, const char *cmd, const char *method,
                          const char *path, const char *header, const json_t *body,
                          json_t **out);

/* GET `path`, calling line() for each line of a streamed reply until the
 * host ends it.  The exit status as sy_remote_json. */
int sy_remote_lines(const sy_cli *cli, const char *cmd, const char *path,
                    void (*line)(const char *text, void *arg), void *arg);

/* Percent-encodes s into buf (for a query value). */
const char *sy_remote_escape(const char *s, char *buf, size_t len);

#endif
