/* What several commands share: opening the service, reading a --context
 * argument and a run id. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/common.h"
#include "base/log.h"
#include "base/util.h"

int sy_cli_open(const sy_cli *cli, unsigned flags, bool store, sy_service *sv)
{
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_service_open(sv, cli->config, flags, &d);
    /* Before its diagnostics, which are written in that form too. */
    if (sv->setup.cfg.log_format_set)
        sy_log_set_format(sv->setup.cfg.log_format);
    sy_diags_print(&d, stderr);
    sy_diags_free(&d);
    if (errors) {
        sy_service_close(sv);
        return SY_EXIT_USAGE;
    }
    char err[512];
    if (store && sy_service_open_store(sv, err, sizeof err) != SY_OK) {
        const sy_config *c = &sv->setup.cfg;
        char where[512];
        sy_diags_init(&d);
        sy_error(&d, c->path, c->store_line, "store \"%s\": %s",
                 sy_store_redact(c->store, where, sizeof where), err);
        sy_diags_print(&d, stderr);
        sy_diags_free(&d);
        sy_service_close(sv);
        return SY_EXIT_USAGE;
    }
    return SY_EXIT_OK;
}

char *sy_cli_context(const char *arg, char *err, size_t err_len)
{
    return sy_cli_json_object("--context", arg, err, err_len);
}

char *sy_cli_json_object(const char *opt, const char *arg, char *err, size_t err_len)
{
    if (!arg)
        return sy_xstrdup("{}");
    json_error_t je;
    json_t *v = arg[0] == '@' ? json_load_file(arg + 1, 0, &je) : json_loads(arg, 0, &je);
    if (!v) {
        sy_errf(err, err_len, "%s %s: %s (line %d, column %d)", opt, arg, je.text, je.line,
                je.column);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        sy_errf(err, err_len, "%s must be a JSON object", opt);
        return NULL;
    }
    char *text = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return text;
}

int sy_cli_number(const char *cmd, const char *opt, const char *arg, uint64_t min,
                  uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!arg)
        return sy_cli_usage_error(cmd, "%s needs a value (a whole number from %llu to %llu)",
                                  opt, (unsigned long long)min, (unsigned long long)max);
    if (!sy_parse_digits(arg, &v) || v < min || v > max)
        return sy_cli_usage_error(cmd, "%s '%s': expected a whole number from %llu to %llu",
                                  opt, arg, (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return SY_EXIT_OK;
}

int64_t sy_cli_run_id(const char *cmd, const char *arg)
{
    uint64_t id = 0;
    if (!sy_parse_digits(arg, &id) || id == 0 || id > INT64_MAX) {
        sy_cli_usage_error(cmd, "expected a run id (a positive number), got '%s'",
                           arg ? arg : "");
        return -1;
    }
    return (int64_t)id;
}

void sy_cli_error_summary(const char *error, char *buf, size_t len)
{
    enum { PIECE = 200 };
    if (!error || !*error) {
        snprintf(buf, len, "%s", "");
        return;
    }
    const char *end = error + strlen(error);
    while (end > error && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    const char *last = end;
    while (last > error && last[-1] != '\n')
        last--;
    /* A long last line keeps its start: it names what failed. */
    size_t ll = (size_t)(end - last);
    snprintf(buf, len, "%.*s%s", (int)(ll < PIECE ? ll : PIECE), last, ll > PIECE ? "..." : "");
}
