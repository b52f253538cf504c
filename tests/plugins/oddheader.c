/*
 * oddheader.c -- descriptors whose ABI header no 1.x host can accept, one
 * per value of $SY_TEST_ODD_HEADER, read when the host asks for it:
 *
 *   old       the pre-1.0 layout (abi_major, abi_minor, size, ...): to a
 *             1.x host it reads as size 1, abi_major 0
 *   huge      a size no descriptor reaches (a garbage pointer, say)
 *   reserved  a 1.0 descriptor with its reserved field set
 *
 * Loader test fixture: the host must refuse each with a sensible reason.
 */
#include <stdlib.h>
#include <string.h>

#include <switchyard/executor.h>

#include "stub.h"

/* The descriptor as it was before ABI 1.0 was fixed. */
struct pre_1_0_executor {
    uint32_t abi_major, abi_minor, size;
    const char *name, *version, *description;
    const void *instance_params, *task_params;
    void (*functions[7])(void);
};

/* Its first three fields are all the host reads of it; the rest is there
 * only so the object has the old size. */
static const struct pre_1_0_executor old = {
    .abi_major = 1,
    .abi_minor = 0,
    .size = sizeof(struct pre_1_0_executor),
    .name = "oddheader",
    .version = "0.9.0",
};

/* Only the header matters: the host refuses it before any other field. */
static const sy_executor huge = {
    .size = 0x7fffffffu,
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_MIN_MINOR,
};

static const sy_executor reserved = {
    SY_EXECUTOR_V1,
    .reserved = 1,
    .name = "oddheader",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void)
{
    const char *mode = getenv("SY_TEST_ODD_HEADER");
    if (mode && strcmp(mode, "old") == 0) {
        const void *p = &old;
        return p;
    }
    if (mode && strcmp(mode, "huge") == 0)
        return &huge;
    return &reserved;
}
