/*
 * badname.c -- a plugin name with characters a name may not hold.
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

#include "stub.h"

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "bad name!",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
