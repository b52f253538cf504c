/*
 * main.c -- switchyard-conformance PLUGIN.so [--params FILE] [--verbose]
 *
 * Prints one line per check (`PASS name`, `FAIL name: reason`, `SKIP name:
 * reason`) and a summary `N passed, N failed`.  Exit status: 0 when no
 * check failed, 1 when one did, 2 for a usage or params-file error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

#define EXIT_USAGE 2

static void usage(FILE *to)
{
    fprintf(to,
            "usage: switchyard-conformance PLUGIN.so [--params FILE] "
            "[--verbose]\n"
            "                              [--only CHECK[,CHECK...]] "
            "[--time-scale N] [--list]\n"
            "\n"
            "Loads an executor plugin the way the host does and runs the "
            "executor\n"
            "contract against it, one check per line; exit 0 when none "
            "fails.\n"
            "\n"
            "  --params FILE    libconfig: instance = {...}; task = {...}; "
            "long_task = {...};\n"
            "                   bad_instance = {...}; bad_task = {...}; "
            "input = \"{...}\";\n"
            "                   max_context_bytes = N; (the host's bound on "
            "an output)\n"
            "  --verbose, -v    details of every check, and the plugin's "
            "debug log\n"
            "  --only LIST      run only these checks (comma-separated)\n"
            "  --time-scale N   multiply every time limit by N (under "
            "valgrind: 20);\n"
            "                   default $SWITCHYARD_CONFORMANCE_TIME_SCALE "
            "or 1\n"
            "  --list           list the checks and exit\n");
}

static void list_checks(void)
{
    for (const kit_check *c = kit_checks; c->name; c++)
        printf("%-16s %s\n", c->name, c->about);
}

/* True when `name` is in the comma-separated `list` (NULL: all). */
static bool selected(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (end ? 1 : 0);
    }
    return false;
}

static bool known_checks(const char *list)
{
    if (!list)
        return true;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        bool found = false;
        for (const kit_check *c = kit_checks; c->name && !found; c++)
            found = strlen(c->name) == len && strncmp(p, c->name, len) == 0;
        if (!found) {
            fprintf(stderr, "switchyard-conformance: unknown check '%.*s' "
                    "(--list shows them)\n", (int)len, p);
            return false;
        }
        p += len + (end ? 1 : 0);
    }
    return true;
}

static bool parse_scale(const char *s, double *out)
{
    char *end = NULL;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || v < 1 || v > 1000)
        return false;
    *out = v;
    return true;
}

typedef struct options {
    const char *params;
    const char *only;
    bool list;
} options;

static int parse_args(int argc, char **argv, kit *k, options *o)
{
    static const struct option longs[] = {
        {"params", required_argument, NULL, 'p'},
        {"verbose", no_argument, NULL, 'v'},
        {"only", required_argument, NULL, 'o'},
        {"time-scale", required_argument, NULL, 's'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *env = getenv("SWITCHYARD_CONFORMANCE_TIME_SCALE");
    k->scale = 1;
    if (env && *env && !parse_scale(env, &k->scale)) {
        fprintf(stderr, "switchyard-conformance: "
                "SWITCHYARD_CONFORMANCE_TIME_SCALE must be a number from 1 "
                "to 1000, got \"%s\"\n", env);
        return EXIT_USAGE;
    }
    int c;
    while ((c = getopt_long(argc, argv, "p:vo:s:lh", longs, NULL)) != -1) {
        switch (c) {
        case 'p': o->params = optarg; break;
        case 'v': k->verbose = true; break;
        case 'o': o->only = optarg; break;
        case 'l': o->list = true; break;
        case 'h': usage(stdout); exit(0);
        case 's':
            if (parse_scale(optarg, &k->scale))
                break;
            fprintf(stderr, "switchyard-conformance: --time-scale must be a "
                    "number from 1 to 1000, got \"%s\"\n", optarg);
            return EXIT_USAGE;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (o->list)
        return 0;
    if (optind != argc - 1) {
        usage(stderr);
        return EXIT_USAGE;
    }
    k->plugin_path = argv[optind];
    return known_checks(o->only) ? 0 : EXIT_USAGE;
}

static void print_report(const kit *k, const kit_check *c,
                         const kit_report *r)
{
    static const char *const word[] = {"PASS", "FAIL", "SKIP"};
    if (r->verdict == KIT_PASS && !(k->verbose && r->msg[0]))
        printf("PASS %s\n", c->name);
    else
        printf("%s %s: %s\n", word[r->verdict], c->name, r->msg);
    if (!k->verbose || !r->detail[0])
        return;
    for (const char *p = r->detail; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        printf("    %.*s\n", (int)len, p);
        p += len + (nl ? 1 : 0);
    }
}

/* The verdict of the check a check needs, when it ran. */
static bool prerequisite_failed(const kit_check *c, const kit_verdict *v,
                                const bool *ran, const char **which)
{
    if (!c->needs)
        return false;
    for (int i = 0; kit_checks[i].name; i++)
        if (strcmp(kit_checks[i].name, c->needs) == 0 && ran[i] &&
            v[i] != KIT_PASS) {
            *which = v[i] == KIT_FAIL ? "failed" : "was skipped";
            return true;
        }
    return false;
}

static int run_all(const kit *k, const char *only)
{
    kit_verdict v[64];
    bool ran[64] = {false};
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; kit_checks[i].name && i < 64; i++) {
        const kit_check *c = &kit_checks[i];
        if (!selected(only, c->name))
            continue;
        kit_report r;
        const char *which = NULL;
        if (prerequisite_failed(c, v, ran, &which)) {
            memset(&r, 0, sizeof r);
            kit_skip(&r, "needs %s, which %s", c->needs, which);
        } else {
            kit_run_isolated(k, c, &r);
        }
        v[i] = r.verdict;
        ran[i] = true;
        print_report(k, c, &r);
        passed += r.verdict == KIT_PASS;
        failed += r.verdict == KIT_FAIL;
        skipped += r.verdict == KIT_SKIP;
    }
    if (skipped)
        printf("%d passed, %d failed (%d skipped)\n", passed, failed, skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* The plugin's log lines shown: debug with --verbose, else warnings and
 * errors; SWITCHYARD_LOG (error, warn, info, debug) overrides both, as it
 * does for the host. */
static int log_level(bool verbose)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *v = getenv("SWITCHYARD_LOG");
    for (int i = 0; v && i < 4; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return verbose ? SY_LOG_DEBUG : SY_LOG_WARN;
}

int main(int argc, char **argv)
{
    kit k;
    options o = {NULL, NULL, false};
    memset(&k, 0, sizeof k);
    int rc = parse_args(argc, argv, &k, &o);
    if (rc != 0)
        return rc;
    if (o.list) {
        list_checks();
        return 0;
    }
    /* Lines in order with the plugin's log on stderr. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    k.log_level = log_level(k.verbose);
    char err[1024];
    if (kit_inputs_load(&k.in, o.params, err, sizeof err) != 0) {
        fprintf(stderr, "switchyard-conformance: %s\n", err);
        kit_inputs_free(&k.in);
        return EXIT_USAGE;
    }
    if (k.verbose)
        printf("# %s%s%s\n", k.plugin_path, o.params ? " with " : "",
               o.params ? o.params : "");
    rc = run_all(&k, o.only);
    kit_inputs_free(&k.in);
    return rc;
}
