/*
 * loader.c -- opening one executor plugin (switchyard/loader.h): the file,
 * dlopen and sy_executor_entry().  The StrictModes check is in
 * file_check.c, the descriptor's checks in descriptor.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <switchyard/loader.h>
#include <switchyard/sdk.h>

#include "loader_internal.h"

/* ------------------------------------------------------------------------ */
/* The file                                                                 */
/* ------------------------------------------------------------------------ */

static int elf_magic_ok(const char *real, char *err, size_t err_len)
{
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        sy_sdk_errf(err, err_len, "cannot open: %s", strerror(errno));
        return SY_EIO;
    }
    unsigned char magic[4];
    size_t got = 0;
    int read_errno = 0;
    while (got < sizeof magic) {
        ssize_t r = read(fd, magic + got, sizeof magic - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            read_errno = errno;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (read_errno != 0) {
        sy_sdk_errf(err, err_len, "cannot read: %s", strerror(read_errno));
        return SY_EIO;
    }
    if (got < sizeof magic || memcmp(magic, "\x7f" "ELF", 4) != 0) {
        sy_sdk_errf(err, err_len, "not an ELF object");
        return SY_EINVAL;
    }
    return SY_OK;
}

/* The checks that need no code of the plugin to run.  The StrictModes
 * check is what makes the later dlopen of the same path safe: nobody else
 * can swap the file in between. */
static int file_ok(const char *real, char *err, size_t err_len)
{
    int rc = sy_sdk_path_check_secure(real, err, err_len);
    if (rc != SY_OK)
        return rc;
    struct stat st;
    if (stat(real, &st) != 0) {
        sy_sdk_errf(err, err_len, "cannot stat: %s", strerror(errno));
        return SY_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        sy_sdk_errf(err, err_len, "not a regular file");
        return SY_EINVAL;
    }
    return elf_magic_ok(real, err, err_len);
}

/* dlerror() starts with the file name, which the caller already has. */
static int refuse_dlerror(const char *real, char *err, size_t err_len)
{
    const char *msg = dlerror();
    if (!msg)
        msg = "unknown error";
    size_t n = strlen(real);
    if (strncmp(msg, real, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2;
    sy_sdk_errf(err, err_len, "dlopen failed: %s", msg);
    return SY_EINVAL;
}

/* The bytes readable from p on inside the loaded segment that holds it
 * (of any object in the process: the plugin's, normally); 0 when p is in
 * none, e.g. on the heap. */
struct segment_search {
    uintptr_t at;
    size_t span;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct segment_search *s = arg;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        uintptr_t end = start + ph->p_memsz;
        if (s->at >= start && s->at < end) {
            s->span = end - s->at;
            return 1;
        }
    }
    return 0;
}

static size_t mapped_span(const void *p)
{
    struct segment_search s = {(uintptr_t)p, 0};
    dl_iterate_phdr(find_segment, &s);
    return s.span;
}

/* The descriptor is static data (executor.h): reading it up to its own
 * `size` must stay inside the segment that holds it, whatever `size`
 * claims, so that a plugin that lies about it is refused, never read past
 * its memory.  A size over the plausible limit is left to the descriptor
 * check, which refuses it without reading further. */
static int descriptor_mapped(const sy_executor *d, char *err, size_t err_len)
{
    size_t span = mapped_span(d);
    if (span < offsetof(sy_executor, reserved)) {
        sy_sdk_errf(err, err_len, "the descriptor is not in the plugin's "
                    "static data (a sy_executor returned by "
                    SY_EXECUTOR_ENTRY_SYMBOL " must be)");
        return SY_EINVAL;
    }
    if (d->size <= SY_SDK_DESCRIPTOR_SIZE_MAX && d->size > span) {
        sy_sdk_errf(err, err_len, "descriptor size %u runs past the memory "
                    "it is in (%zu bytes): not a sy_executor? start the "
                    "descriptor with SY_EXECUTOR_V1",
                    (unsigned)d->size, span);
        return SY_EINVAL;
    }
    return SY_OK;
}

/* Opens the file and asks it for its descriptor.  From here on the
 * plugin's code has run, so the handle is kept even when refused. */
static const sy_executor *open_entry(sy_sdk_plugin *p, const char *real,
                                     char *err, size_t err_len)
{
    dlerror();
    p->handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!p->handle) {
        refuse_dlerror(real, err, err_len);
        return NULL;
    }
    void *sym = dlsym(p->handle, SY_EXECUTOR_ENTRY_SYMBOL);
    if (!sym) {
        sy_sdk_errf(err, err_len, "no " SY_EXECUTOR_ENTRY_SYMBOL " symbol "
                    "(not a Switchyard executor, or built without "
                    "SY_EXPORT)");
        return NULL;
    }
    /* POSIX guarantees data and function pointers convert; memcpy says so
     * without a cast ISO C frowns upon. */
    sy_executor_entry_fn entry;
    _Static_assert(sizeof entry == sizeof sym, "function pointer size");
    memcpy(&entry, &sym, sizeof entry);
    const sy_executor *d = entry();
    if (!d)
        sy_sdk_errf(err, err_len, SY_EXECUTOR_ENTRY_SYMBOL " returned NULL");
    else if (descriptor_mapped(d, err, err_len) != SY_OK)
        return NULL;
    return d;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

int sy_sdk_plugin_open(sy_sdk_plugin *p, const char *path, char *err,
                       size_t err_len)
{
    memset(p, 0, sizeof *p);
    char real[PATH_MAX];
    if (!path || !realpath(path, real)) {
        sy_sdk_errf(err, err_len, "cannot resolve path: %s",
                    strerror(path ? errno : EINVAL));
        return SY_ENOENT;
    }
    int rc = file_ok(real, err, err_len);
    if (rc != SY_OK)
        return rc;
    const sy_executor *d = open_entry(p, real, err, err_len);
    if (!d)
        return SY_EINVAL;
    rc = sy_sdk__descriptor_read(p, d, err, err_len);
    if (rc == SY_OK)
        p->desc = d;
    return rc;
}

void sy_sdk_plugin_close(sy_sdk_plugin *p)
{
    if (p->handle)
        dlclose(p->handle);
    memset(p, 0, sizeof *p);
}
