/* `switchyard token new`: a token with a role, its digest added to
 * admin.tokens_file, the token itself printed once. */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "admin/tokens.h"
#include "cli/common.h"
#include "config/config.h"
#include "service/audit.h"

/* Best effort: a token is made whether or not the store can be reached
 * (the file is what counts); a store that cannot is said in one line. */
static void audit(const sy_cli *cli, const char *name, sy_admin_role role,
                  const char *detail)
{
    sy_service sv;
    if (sy_cli_open(cli, 0, true, &sv) != SY_EXIT_OK) {
        fprintf(stderr, "switchyard: token: not recorded in the audit trail (the store "
                "did not open)\n");
        return;
    }
    char target[128];
    snprintf(target, sizeof target, "token %s (%s)", name, sy_admin_role_name(role));
    sy_service_audit_local(&sv, "token new", target, true, detail);
    sy_service_close(&sv);
}

int sy_cmd_token(const sy_cli *cli, int argc, char **argv)
{
    const char *role_s = NULL, *name = NULL;
    if (argc < 1 || strcmp(argv[0], "new") != 0)
        return sy_cli_usage_error("token", "usage: switchyard token new --role read|operate|admin "
                                  "--name NAME");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--role") == 0 && i + 1 < argc)
            role_s = argv[++i];
        else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
            name = argv[++i];
        else
            return sy_cli_usage_error("token", "unexpected argument '%s'", argv[i]);
    }
    sy_admin_role role;
    if (!role_s || !sy_admin_role_parse(role_s, &role))
        return sy_cli_usage_error("token", "--role must be read, operate or admin");
    if (!name)
        return sy_cli_usage_error("token", "--name NAME is needed (who holds the token)");
    sy_config cfg;
    sy_diags d;
    sy_diags_init(&d);
    int rc = sy_config_load(&cfg, cli->config, &d);
    if (rc != 0 || !cfg.admin.tokens_file) {
        sy_diags_print(&d, stderr);
        if (rc == 0)
            fprintf(stderr, "switchyard: token: %s has no admin.tokens_file to add it to\n",
                    cli->config);
        sy_diags_free(&d);
        sy_config_free(&cfg);
        return SY_EXIT_FAIL;
    }
    sy_diags_free(&d);
    char token[80], err[512];
    rc = sy_admin_tokens_new(cfg.admin.tokens_file, name, role, token, sizeof token, err,
                             sizeof err);
    if (rc != 0) {
        fprintf(stderr, "switchyard: token: %s\n", err);
        sy_config_free(&cfg);
        return SY_EXIT_FAIL;
    }
    /* The one time the token is seen: the file holds its digest. */
    printf("%s\n", token);
    fprintf(stderr, "token '%s' (%s) added to %s; a running host reads it at its next reload (SIGHUP) or start\n",
            name, sy_admin_role_name(role), cfg.admin.tokens_file);
    OPENSSL_cleanse(token, sizeof token);
    audit(cli, name, role, cfg.admin.tokens_file);
    sy_config_free(&cfg);
    return SY_EXIT_OK;
}
