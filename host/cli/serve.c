/* `switchyard serve`: the long-running host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/common.h"
#include "base/log.h"

int sy_cmd_serve(const sy_cli *cli, int argc, char **argv)
{
    bool idle_exit = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--exit-when-idle") == 0)
            idle_exit = true;
        else
            return sy_cli_usage_error("serve", "unexpected argument '%s'", argv[i]);
    }
    sy_setup s;
    sy_store *st;
    int rc = sy_cli_open(cli, SY_SETUP_CREATE, &s, &st);
    if (rc != SY_EXIT_OK)
        return rc;
    uv_loop_t loop;
    uv_loop_init(&loop);
    char *owner = sy_engine_owner_id();
    sy_engine_opts o = sy_cli_engine_opts(&s, st, owner);
    o.serve = true;
    o.exit_when_idle = idle_exit;
    sy_engine *e = NULL;
    char err[512];
    if (sy_engine_new(&e, &loop, &o, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: serve: %s\n", err);
        rc = SY_EXIT_FAIL;
    } else {
        sy_log(SY_LOG_INFO, "serve", "serving as %s on %s", owner, s.cfg.store);
        int r = sy_engine_run(e);
        if (r == 2)
            _exit(130);
        rc = r == 0 ? SY_EXIT_OK : SY_EXIT_FAIL;
        sy_log(SY_LOG_INFO, "serve", "stopped");
    }
    sy_engine_free(e);
    uv_loop_close(&loop);
    free(owner);
    sy_store_close(st);
    sy_setup_close(&s);
    return rc;
}
