/* `switchyard plugins`: every plugin found, loaded or refused and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <switchyard/config_json.h>

#include "cli/cli.h"
#include "cli/plugins_remote.h"
#include "service/setup.h"

static void print_specs(const char *title, const sy_param_spec *const *spec)
{
    if (!spec) {
        printf("    %s: any (not declared)\n", title);
        return;
    }
    printf("    %s:\n", title);
    for (; *spec; spec++) {
        const sy_param_spec *sp = *spec;
        if (!SY_HAS_FIELD(sp, sy_param_spec, type) || !sp->name)
            continue;
        const char *desc = SY_HAS_FIELD(sp, sy_param_spec, description) && sp->description
                               ? sp->description : "";
        printf("      %-20s %-9s%s %s\n", sp->name, sy_sdk_setting_type_name(sp->type),
               (sp->flags & SY_PARAM_REQUIRED) ? " required" : "", desc);
    }
}

static void print_plugin(const sy_plugin *p, int verbose)
{
    char abi[32] = "-";
    if (p->abi_major || p->abi_minor)
        snprintf(abi, sizeof abi, "%u.%u", p->abi_major, p->abi_minor);
    printf("%-12s %-10s %-5s %-8s %s\n", p->name ? p->name : "-",
           p->version ? p->version : "-", abi,
           p->state == SY_PLUGIN_LOADED ? "loaded" : "refused", p->path);
    if (p->state == SY_PLUGIN_REFUSED)
        printf("    refused: %s\n", p->reason);
    else if (verbose) {
        if (p->desc->description)
            printf("    %s\n", p->desc->description);
        print_specs("instance settings", p->desc->instance_params);
        print_specs("task parameters", p->desc->task_params);
    }
}

static void print_dir(const char *dir, bool configured, void *arg)
{
    (void)arg;
    printf("  %s%s\n", dir, configured ? "" : " (default)");
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static void add_dir(const char *dir, bool configured, void *arg)
{
    json_array_append_new(arg, json_pack("{s:s, s:b}", "path", dir, "default", !configured));
}

/* {"plugins": [{"name", "version", "abi", "status", "path", "reason"}],
 *  "searched": [{"path", "default"}]}: what the table shows. */
static void print_json(const sy_setup *s)
{
    json_t *list = json_array(), *dirs = json_array();
    for (size_t i = 0; i < s->plugins.n; i++) {
        const sy_plugin *p = s->plugins.v[i];
        char abi[32];
        snprintf(abi, sizeof abi, "%u.%u", p->abi_major, p->abi_minor);
        bool loaded = p->state == SY_PLUGIN_LOADED;
        json_array_append_new(
            list, json_pack("{s:o, s:o, s:o, s:s, s:s, s:o}", "name", str_or_null(p->name),
                            "version", str_or_null(p->version), "abi",
                            p->abi_major || p->abi_minor ? json_string(abi) : json_null(),
                            "status", loaded ? "loaded" : "refused", "path", p->path,
                            "reason", loaded ? json_null() : str_or_null(p->reason)));
    }
    sy_setup_plugin_dirs(s, add_dir, dirs);
    json_t *o = json_pack("{s:o, s:o}", "plugins", list, "searched", dirs);
    char *dump = json_dumps(o, JSON_INDENT(2));
    puts(dump ? dump : "null");
    free(dump);
    json_decref(o);
}

int sy_cmd_plugins(const sy_cli *cli, int argc, char **argv)
{
    int verbose = 0;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else
            return sy_cli_usage_error("plugins", "unexpected argument '%s'", argv[i]);
    }
    if (cli->host)
        return sy_cli_plugins_remote(cli, verbose, json);
    /* Without a config file the environment and the default directory are
     * still worth listing. */
    const char *cfg = cli->config;
    if (!cli->config_explicit && access(cfg, F_OK) != 0)
        cfg = NULL;
    sy_diags d;
    sy_diags_init(&d);
    sy_setup s;
    int rc = SY_EXIT_OK;
    sy_setup_open(&s, cfg, SY_SETUP_PLUGINS, &d);
    if (cfg && !s.cfg_ok) {
        sy_diags_print(&d, stderr);
        rc = SY_EXIT_USAGE;
        goto out;
    }
    if (json) {
        print_json(&s);
        goto out;
    }
    printf("%-12s %-10s %-5s %-8s %s\n", "NAME", "VERSION", "ABI", "STATUS", "PATH");
    for (size_t i = 0; i < s.plugins.n; i++)
        print_plugin(s.plugins.v[i], verbose);
    if (s.plugins.n == 0)
        printf("(no plugins found)\n");
    printf("searched:\n");
    sy_setup_plugin_dirs(&s, print_dir, NULL);
out:
    sy_setup_close(&s);
    sy_diags_free(&d);
    return rc;
}
