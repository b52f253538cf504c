/*
 * taskapi.h -- the executor's side of switchyard/task.h: the context of one
 * task-function call and the sy_task_api table.
 *
 * Shared by the plugin (functions called in the host process) and
 * switchyard-task-runner (isolated functions), which differ only in how
 * cancelled() and log() reach the outside: the owner supplies those two as
 * callbacks.
 */
#ifndef SY_THREAD_TASKAPI_H
#define SY_THREAD_TASKAPI_H

#include <stdbool.h>
#include <stddef.h>

#include <switchyard/executor.h>
#include <switchyard/task.h>

struct sy_task_ctx {
    const char *input;          /* borrowed; never NULL */
    size_t input_len;
    const sy_params *params;    /* borrowed; never NULL */
    sy_task_info info;          /* strings borrowed, never NULL */
    char *output;               /* owned; set by set_output() */
    size_t output_len;
    char *error;                /* owned; set by set_error() */
    bool oom;                   /* an allocation failed in set_output() or
                                   set_error() */
    int (*is_cancelled)(void *owner);
    void (*emit_log)(void *owner, sy_log_level level, const char *line);
    void *owner;
};

/* Fills the table: the parameter getters are the host's own. */
void sy_task_api_fill(sy_task_api *api, const sy_host_api *host);

/* Prepares a context (input NULL means "{}", NULL strings become ""). */
void sy_task_ctx_init(sy_task_ctx *ctx, const char *input, size_t input_len,
                      const sy_params *params);

/* Frees what the function set (output, error). */
void sy_task_ctx_release(sy_task_ctx *ctx);

/* Takes the output out of the context (the caller frees it). */
char *sy_task_ctx_take_output(sy_task_ctx *ctx, size_t *len);

/* Refuses (SY_EINVAL, with err) a library `h` whose sy_task_library_abi
 * says another major or a newer minor; one without it passes. */
int sy_task_lib_check_abi(void *h, const char *path, char *err,
                          size_t err_len);

#endif
