/* The sy_task_api table and the context of one task-function call. */
#include "taskapi.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sy_task_info *ctx_info(sy_task_ctx *ctx) { return &ctx->info; }

static const char *ctx_input(sy_task_ctx *ctx, size_t *len)
{
    if (len)
        *len = ctx->input_len;
    return ctx->input;
}

static const sy_params *ctx_params(sy_task_ctx *ctx) { return ctx->params; }

static int ctx_set_output(sy_task_ctx *ctx, const char *json, size_t len)
{
    if (!json) {
        free(ctx->output);
        ctx->output = NULL;
        ctx->output_len = 0;
        return SY_OK;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        ctx->oom = true;
        return SY_ENOMEM;
    }
    memcpy(copy, json, len);
    copy[len] = '\0';
    free(ctx->output);
    ctx->output = copy;
    ctx->output_len = len;
    return SY_OK;
}

static void ctx_set_error(sy_task_ctx *ctx, const char *fmt, ...)
    SY_PRINTF(2, 3);
static void ctx_set_error(sy_task_ctx *ctx, const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = fmt ? vasprintf(&msg, fmt, ap) : -1;
    va_end(ap);
    if (n < 0) {
        ctx->oom = fmt != NULL;
        return;
    }
    free(ctx->error);
    ctx->error = msg;
}

static int ctx_cancelled(sy_task_ctx *ctx)
{
    return ctx->is_cancelled ? ctx->is_cancelled(ctx->owner) : 0;
}

static void ctx_log(sy_task_ctx *ctx, sy_log_level level, const char *fmt, ...)
    SY_PRINTF(3, 4);
static void ctx_log(sy_task_ctx *ctx, sy_log_level level, const char *fmt, ...)
{
    char buf[2048];
    if (!fmt || !ctx->emit_log)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* One call, one line: a newline would forge a second log line. */
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    ctx->emit_log(ctx->owner, level, buf);
}

void sy_task_api_fill(sy_task_api *api, const sy_host_api *host)
{
    memset(api, 0, sizeof *api);
    api->size = sizeof *api;
    api->abi_major = SY_TASK_ABI_MAJOR;
    api->abi_minor = SY_TASK_ABI_MINOR;
    api->info = ctx_info;
    api->input = ctx_input;
    api->params = ctx_params;
    api->param_type = host->param_type;
    api->param_string = host->param_string;
    api->param_int = host->param_int;
    api->param_float = host->param_float;
    api->param_bool = host->param_bool;
    api->param_duration_ms = host->param_duration_ms;
    api->param_array_len = host->param_array_len;
    api->param_array_string = host->param_array_string;
    api->param_array_int = host->param_array_int;
    api->param_group = host->param_group;
    api->param_count = host->param_count;
    api->param_name = host->param_name;
    api->set_output = ctx_set_output;
    api->set_error = ctx_set_error;
    api->cancelled = ctx_cancelled;
    api->log = ctx_log;
}

void sy_task_ctx_init(sy_task_ctx *ctx, const char *input, size_t input_len,
                      const sy_params *params)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->input = input ? input : "{}";
    ctx->input_len = input ? input_len : 2;
    ctx->params = params;
    ctx->info.size = sizeof ctx->info;
    ctx->info.ns = ctx->info.run_id = ctx->info.task_id = "";
    ctx->info.workflow = ctx->info.base_dir = "";
}

void sy_task_ctx_release(sy_task_ctx *ctx)
{
    free(ctx->output);
    free(ctx->error);
    ctx->output = ctx->error = NULL;
}

char *sy_task_ctx_take_output(sy_task_ctx *ctx, size_t *len)
{
    char *out = ctx->output;
    *len = ctx->output_len;
    ctx->output = NULL;
    ctx->output_len = 0;
    return out;
}

/* Refuses a library that says it was built for another task ABI. */
int sy_task_lib_check_abi(void *h, const char *path, char *err,
                          size_t err_len)
{
    const uint32_t *abi = dlsym(h, SY_TASK_LIBRARY_ABI_SYMBOL);
    if (!abi || (abi[0] == SY_TASK_ABI_MAJOR && abi[1] <= SY_TASK_ABI_MINOR))
        return SY_OK;
    snprintf(err, err_len, "task library %s was built for task ABI %u.%u, "
                           "this executor speaks %d.%d: rebuild it against "
                           "this Switchyard's switchyard/task.h",
             path, abi[0], abi[1], SY_TASK_ABI_MAJOR, SY_TASK_ABI_MINOR);
    return SY_EINVAL;
}
