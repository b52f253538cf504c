/*
 * abi2.c -- declares executor ABI 2.0, a major version this host does not speak.
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

#include "stub.h"

static const sy_executor desc = {
    .size = sizeof(sy_executor),
    .abi_major = 2,
    .abi_minor = 0,
    .name = "abi2",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
