/* `switchyard serve`: the long-running host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <switchyard/sdk.h>

#include "admin/admin.h"
#include "cli/common.h"
#include "base/log.h"
#include "base/sdnotify.h"
#include "service/metrics.h"

int sy_cmd_serve(const sy_cli *cli, int argc, char **argv)
{
    bool idle_exit = false;
    const char *metrics_path = NULL;
    int64_t metrics_ms = SY_METRICS_FILE_INTERVAL_MS;
    bool metrics_interval = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--exit-when-idle") == 0) {
            idle_exit = true;
        } else if (strcmp(argv[i], "--metrics-file") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return sy_cli_usage_error("serve", "--metrics-file needs a PATH");
            metrics_path = argv[++i];
        } else if (strcmp(argv[i], "--metrics-interval") == 0) {
            char why[128];
            if (i + 1 >= argc)
                return sy_cli_usage_error("serve", "--metrics-interval needs a DURATION");
            metrics_interval = true;
            if (sy_sdk_duration_parse(argv[++i], &metrics_ms, why, sizeof why) != SY_OK ||
                metrics_ms <= 0)
                return sy_cli_usage_error("serve", "--metrics-interval '%s': %s", argv[i],
                                          metrics_ms <= 0 ? "must be more than 0" : why);
        } else {
            return sy_cli_usage_error("serve", "unexpected argument '%s'", argv[i]);
        }
    }
    if (metrics_interval && !metrics_path)
        return sy_cli_usage_error("serve", "--metrics-interval needs --metrics-file PATH");
    /* Before any thread starts: the variables are taken out of the
     * environment the tasks inherit. */
    sy_sd_init();
    sy_service sv;
    /* The workflows are read for their schedules: runs carry their own
     * definitions. */
    int rc = sy_cli_open(cli, SY_SETUP_CREATE | SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS,
                         true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    sy_engine_opts mode = {.serve = true, .exit_when_idle = idle_exit};
    char err[512];
    sy_metrics_file mf = {0};
    sy_admin *admin = NULL;
    if (sy_service_start(&sv, &mode, err, sizeof err) != SY_OK) {
        sy_log(SY_LOG_ERROR, "serve", "cannot serve: %s", err);
        rc = SY_EXIT_FAIL;
    } else if (metrics_path &&
               sy_metrics_file_start(&mf, &sv, metrics_path, metrics_ms, err, sizeof err) !=
                   SY_OK) {
        fprintf(stderr, "switchyard: serve: %s\n", err);
        rc = SY_EXIT_FAIL;
    } else if (sv.setup.cfg.admin.enabled &&
               sy_admin_start(&admin, &sv, &sv.setup.cfg.admin, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: serve: %s\n", err);
        sy_metrics_file_stop(&mf);
        rc = SY_EXIT_USAGE;
    } else {
        char where[512];
        sy_log(SY_LOG_INFO, "serve", "serving as %s on %s", sv.owner,
               sy_store_redact(sv.setup.cfg.store, where, sizeof where));
        int r = sy_service_run(&sv);
        sy_sd_notify("STOPPING=1");
        sy_admin_stop(admin);
        admin = NULL;
        /* The last figures, before the engine goes. */
        sy_metrics_file_stop(&mf);
        if (r == 2) /* a third signal: leave now, the store is consistent */
            sy_service_leave(&sv, 130);
        if (r == SY_ENGINE_ABANDONED)
            sy_service_leave(&sv, SY_EXIT_FAIL);
        /* A serving host whose lease lapsed comes back as a new host; it
         * ends lapsed only when told to stop meanwhile, which it did. */
        rc = r == 0 || r == SY_ENGINE_LAPSED ? SY_EXIT_OK
             : r == SY_ENGINE_INTERRUPTED    ? 130
                                             : SY_EXIT_FAIL;
        sy_log(SY_LOG_INFO, "serve", "stopped");
    }
    sy_service_close(&sv);
    return rc;
}
