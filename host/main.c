/* switchyard: the command-line entry point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef SY_MIMALLOC
#include <mimalloc.h>
#endif

#include <switchyard/executor.h>

#include "cli/cli.h"
#include "config/config.h"
#include "base/log.h"

static const struct {
    const char *name;
    int (*fn)(const sy_cli *, int, char **);
    const char *args;
    const char *help;
} commands[] = {
    {"check", sy_cmd_check, "",
     "validate the config, routes, plugins and instances"},
    {"route", sy_cmd_route, "NAMESPACE [--quiet]",
     "show which executor instance gets NAMESPACE, and why"},
    {"plugins", sy_cmd_plugins, "[-v]",
     "list every plugin found: loaded, or refused and why"},
    {"run", sy_cmd_run, "WORKFLOW [--context JSON|@FILE]",
     "run one workflow to its end here, with progress"},
    {"submit", sy_cmd_submit, "WORKFLOW [--context JSON|@FILE]",
     "record a run for a host (`serve`) to pick up"},
    {"status", sy_cmd_status, "RUN_ID [--json]", "a run and each of its tasks"},
    {"runs", sy_cmd_runs, "[--limit N | --all]", "the latest runs"},
    {"cancel", sy_cmd_cancel, "RUN_ID", "cancel a run"},
    {"graph", sy_cmd_graph, "WORKFLOW", "the workflow's DAG in Graphviz DOT"},
    {"serve", sy_cmd_serve, "[--exit-when-idle]",
     "the long-running host: runs submitted work, resumes after restarts"},
    {"migrate", sy_cmd_migrate, "",
     "create the store's tables, or bring them to this build's schema"},
    {"gc", sy_cmd_gc, "--older-than DURATION [--batch N]",
     "delete runs that ended longer ago than DURATION"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: switchyard [--config FILE] COMMAND [ARGS]\n\n"
            "  --config FILE  the configuration (default: $SWITCHYARD_CONFIG, "
            "else ./switchyard.cfg)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %-34s %s\n", commands[i].name, commands[i].args,
                commands[i].help);
}

int main(int argc, char **argv)
{
    sy_cli cli = {.prog = argv[0]};
    sy_log_init_from_env();
    const char *env = getenv("SWITCHYARD_CONFIG");
    cli.config = env && *env ? env : "switchyard.cfg";
    cli.config_explicit = env && *env;

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) {
            if (i + 1 >= argc)
                return sy_cli_usage_error("--config", "needs a file name");
            cli.config = argv[++i];
            cli.config_explicit = true;
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            cli.config = argv[i] + 9;
            cli.config_explicit = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return SY_EXIT_OK;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("switchyard %s (executor ABI %d.%d)\n", PACKAGE_VERSION,
                   SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
#ifdef SY_MIMALLOC
            int mv = mi_version();
            printf("malloc: mimalloc %d.%d.%d\n", mv / 100, mv / 10 % 10, mv % 10);
#else
            printf("malloc: the C library's\n");
#endif
            return SY_EXIT_OK;
        } else {
            usage(stderr);
            return sy_cli_usage_error(argv[i], "unknown option");
        }
    }
    if (i >= argc) {
        usage(stderr);
        return SY_EXIT_USAGE;
    }
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return commands[c].fn(&cli, argc - i - 1, argv + i + 1);
    usage(stderr);
    return sy_cli_usage_error(argv[i], "unknown command");
}
