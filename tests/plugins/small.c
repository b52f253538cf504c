/*
 * small.c -- a descriptor that ends before create(): smaller than 1.0's.
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

#include "stub.h"

static const sy_executor desc = {
    .size = offsetof(sy_executor, create),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_MIN_MINOR,
    .name = "small",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
