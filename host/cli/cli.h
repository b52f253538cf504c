/*
 * cli.h -- the `switchyard` commands.  Each takes the arguments after its
 * name and returns the process exit status.
 */
#ifndef SY_CLI_H
#define SY_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses shared by the commands. */
enum { SY_EXIT_OK = 0, SY_EXIT_FAIL = 1, SY_EXIT_USAGE = 2 };

typedef struct sy_cli {
    const char *config;     /* the config file to use */
    bool config_explicit;   /* given by --config or $SWITCHYARD_CONFIG */
    const char *prog;       /* argv[0] for messages */
    const char *host;       /* --host URL: a serving host's admin API to
                               talk to instead of the store; NULL */
    const char *token_file; /* --token-file: its bearer token; NULL */
    const char *ca_file;    /* --ca-file: the CA (PEM) an https --host is
                               verified against instead of the system's;
                               NULL */
    const char *cert_file;  /* --cert: the client certificate (PEM) shown
                               to an https --host whose admin.tls_client_ca
                               asks for one; NULL: none */
    const char *key_file;   /* --key: its key (PEM, this user's, mode 0600
                               or 0400); NULL: in cert_file */
} sy_cli;

int sy_cmd_check(const sy_cli *cli, int argc, char **argv);
int sy_cmd_route(const sy_cli *cli, int argc, char **argv);
int sy_cmd_plugins(const sy_cli *cli, int argc, char **argv);
int sy_cmd_run(const sy_cli *cli, int argc, char **argv);
int sy_cmd_submit(const sy_cli *cli, int argc, char **argv);
int sy_cmd_emit(const sy_cli *cli, int argc, char **argv);
int sy_cmd_triggers(const sy_cli *cli, int argc, char **argv);
int sy_cmd_status(const sy_cli *cli, int argc, char **argv);
int sy_cmd_runs(const sy_cli *cli, int argc, char **argv);
int sy_cmd_cancel(const sy_cli *cli, int argc, char **argv);
int sy_cmd_graph(const sy_cli *cli, int argc, char **argv);
int sy_cmd_serve(const sy_cli *cli, int argc, char **argv);
int sy_cmd_migrate(const sy_cli *cli, int argc, char **argv);
int sy_cmd_gc(const sy_cli *cli, int argc, char **argv);
int sy_cmd_limits(const sy_cli *cli, int argc, char **argv);
int sy_cmd_token(const sy_cli *cli, int argc, char **argv);
int sy_cmd_audit(const sy_cli *cli, int argc, char **argv);
int sy_cmd_drain(const sy_cli *cli, int argc, char **argv);
int sy_cmd_workflows(const sy_cli *cli, int argc, char **argv);
int sy_cmd_schedules(const sy_cli *cli, int argc, char **argv);
int sy_cmd_backfill(const sy_cli *cli, int argc, char **argv);
int sy_cmd_help(const sy_cli *cli, int argc, char **argv);
int sy_cmd_retry(const sy_cli *cli, int argc, char **argv);
int sy_cmd_logs(const sy_cli *cli, int argc, char **argv);

/* A command: its name, what runs it, its arguments, one line on what it
 * does and its help (options, one a line, and the exit statuses). */
typedef struct sy_cli_command {
    const char *name;
    int (*fn)(const sy_cli *, int, char **);
    const char *args;
    const char *summary;
    const char *details;
    bool remote;            /* also runs against --host */
} sy_cli_command;

/* The command called `name`, or NULL. */
const sy_cli_command *sy_cli_find(const char *name);
/* The commands that run over --host, ", "-separated into buf (cut at
 * len), read from the command table so that no list of them goes stale. */
void sy_cli_remote_names(char *buf, size_t len);

/* The program's usage: global options and every command. */
void sy_cli_usage(FILE *out);

/* One command's help. */
void sy_cli_command_help(const sy_cli_command *c, FILE *out);

/* Prints "switchyard: CMD: MSG" and returns SY_EXIT_USAGE. */
int sy_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
