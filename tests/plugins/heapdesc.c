/*
 * heapdesc.c -- a correct descriptor, but in memory mapped at run time,
 * not in the plugin's static data.  Loader test fixture: the host checks
 * that the descriptor lies in loaded memory before it reads it up to the
 * size it claims, and refuses one that does not.  (An anonymous mapping
 * rather than malloc: the host closes a refused plugin, and a heap block
 * held only by the plugin's static pointer would then read as a leak.)
 */
#include <string.h>
#include <sys/mman.h>

#include <switchyard/executor.h>

SY_EXPORT const sy_executor *sy_executor_entry(void)
{
    sy_executor *d = mmap(NULL, sizeof *d, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (d == MAP_FAILED)
        return NULL;
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->abi_major = SY_EXECUTOR_ABI_MAJOR;
    d->name = "heapdesc";
    d->version = "1";
    return d;
}
