/*
 * dupname.c -- a second, otherwise valid plugin that calls itself "good".
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

#include "stub.h"

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "good",
    .version = "2.0.0-dup",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
