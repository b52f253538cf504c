/*
 * newminor.c -- needs executor ABI 1.(host minor + 1): it may call host
 * functions this host lacks.
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

#include "stub.h"

static const sy_executor desc = {
    .size = sizeof(sy_executor),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = (SY_EXECUTOR_ABI_MINOR + 1),
    .name = "newminor",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
