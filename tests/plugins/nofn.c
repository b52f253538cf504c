/*
 * nofn.c -- a descriptor without its required submit().
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

#include "stub.h"

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "nofn",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = NULL,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
