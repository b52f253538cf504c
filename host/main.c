/* switchyard: the command-line entry point. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef SY_MIMALLOC
#include <mimalloc.h>
#endif

#include <jansson.h>
#include <uv.h>

#include <switchyard/executor.h>

#include "cli/cli.h"
#include "config/config.h"
#include "base/log.h"
#include "base/util.h"

#ifdef SY_MIMALLOC
/* The delay stays 0 for the rest of the process: restoring it after the
 * collect keeps the freed tree resident again (147 MiB, not 116, for
 * submit of 100,000 tasks), so a host that loaded a big workflow decommits
 * freed pages at once from then on. */
static void release_freed(void)
{
    mi_option_set(mi_option_decommit_delay, 0);
    mi_collect(true);
}
#endif

/* jansson and libuv allocate through these: memory they cannot get ends
 * the process with the host's one line (sy_oom), as the host's own does.
 * Left to them, jansson's NULL reached code that read it as bad text or
 * dereferenced it, and libuv aborts without a word where it cannot go on
 * (docs/reliability.md, "Allocation failures").  SQLite keeps its own: it
 * reports SQLITE_NOMEM, which the store turns into a clear error and a
 * rolled-back transaction. */
static void *json_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        sy_oom("(jansson, %zu bytes)", n);
    return p;
}

static void *uv_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p && n)
        sy_oom("(libuv, %zu bytes)", n);
    return p;
}

static void *uv_realloc_or_die(void *q, size_t n)
{
    void *p = realloc(q, n);
    if (!p && n)
        sy_oom("(libuv, %zu bytes)", n);
    return p;
}

static void *uv_calloc_or_die(size_t k, size_t n)
{
    void *p = calloc(k, n);
    if (!p && k && n)
        sy_oom("(libuv, %zu bytes)", k * n);
    return p;
}

/* `switchyard CMD --help` (or -h) anywhere after the command: help, not
 * a run.  Values of options never start with "-h". */
static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

/* Where a file option of --host's TLS goes ("--ca-file FILE" or
 * "--ca-file=FILE", likewise --cert and --key); NULL for another
 * argument. */
static const char **file_option(const char *arg, sy_cli *cli)
{
    static const struct {
        const char *name;
        size_t off;
    } opts[] = {{"--ca-file", offsetof(sy_cli, ca_file)},
                {"--cert", offsetof(sy_cli, cert_file)},
                {"--key", offsetof(sy_cli, key_file)}};
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        size_t n = strlen(opts[k].name);
        if (strncmp(arg, opts[k].name, n) == 0 && (arg[n] == '\0' || arg[n] == '='))
            return (const char **)((char *)cli + opts[k].off);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    sy_cli cli = {.prog = argv[0]};
    json_set_alloc_funcs(json_alloc, free);
    uv_replace_allocator(uv_alloc, uv_realloc_or_die, uv_calloc_or_die, free);
    sy_log_init_from_env();
#ifdef SY_MIMALLOC
    sy_memory_release_hook(release_freed);
#endif
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
        } else if (strcmp(argv[i], "--host") == 0 || strcmp(argv[i], "--token-file") == 0) {
            if (i + 1 >= argc)
                return sy_cli_usage_error(argv[i], "needs a %s",
                                          argv[i][2] == 'h' ? "URL" : "file name");
            *(argv[i][2] == 'h' ? &cli.host : &cli.token_file) = argv[i + 1];
            i++;
        } else if (strncmp(argv[i], "--host=", 7) == 0) {
            cli.host = argv[i] + 7;
        } else if (strncmp(argv[i], "--token-file=", 13) == 0) {
            cli.token_file = argv[i] + 13;
        } else if (file_option(argv[i], &cli)) {
            const char **to = file_option(argv[i], &cli);
            const char *eq = strchr(argv[i], '=');
            if (!eq && i + 1 >= argc)
                return sy_cli_usage_error(argv[i], "needs a file name");
            *to = eq ? eq + 1 : argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            sy_cli_usage(stdout);
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
            sy_cli_usage(stderr);
            return sy_cli_usage_error(argv[i], "unknown option");
        }
    }
    if (i >= argc) {
        sy_cli_usage(stderr);
        return SY_EXIT_USAGE;
    }
    const sy_cli_command *c = sy_cli_find(argv[i]);
    if (!c) {
        sy_cli_usage(stderr);
        return sy_cli_usage_error(argv[i], "unknown command");
    }
    if (wants_help(argc - i - 1, argv + i + 1)) {
        sy_cli_command_help(c, stdout);
        return SY_EXIT_OK;
    }
    if (cli.host && !c->remote) {
        char names[512];
        sy_cli_remote_names(names, sizeof names);
        return sy_cli_usage_error(c->name, "--host: this command runs here only (over the "
                                  "admin API: %s)", names);
    }
    sy_oom_context(c->name);
    return c->fn(&cli, argc - i - 1, argv + i + 1);
}
