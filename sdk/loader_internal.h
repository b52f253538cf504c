/*
 * loader_internal.h -- what loader.c and descriptor.c share.  Not
 * installed; nothing here is API.
 */
#ifndef SY_LOADER_INTERNAL_H
#define SY_LOADER_INTERNAL_H

#include <stddef.h>

#include <switchyard/loader.h>

/* A size no 1.x descriptor reaches: 500 pointers.  A larger one is not a
 * sy_executor at all, and is refused before anything past its header is
 * read. */
#define SY_SDK_DESCRIPTOR_SIZE_MAX 4096u

/* sy_sdk_descriptor_check(), noting in `p` what the descriptor says of
 * itself as far as it can be trusted: the ABI version (abi_minor raised to
 * the lowest host minor the plugin needs) once the size covers the
 * header, the name and version once the header is 1.x, even when a later
 * check refuses it.  Leaves p->handle and p->desc alone. */
int sy_sdk__descriptor_read(sy_sdk_plugin *p, const sy_executor *d,
                            char *err, size_t err_len);

#endif
