/*
 * loader.c -- opening one executor plugin and checking its descriptor
 * (switchyard/loader.h).  The file's own checks are in file_check.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <switchyard/loader.h>
#include <switchyard/sdk.h>

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
    return d;
}

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

bool sy_sdk_plugin_name_ok(const char *name)
{
    if (!name || !*name)
        return false;
    for (const char *s = name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* An invalid name, quoted and shortened so the reason stays one short
 * line whatever the plugin declared. */
static int refuse_name(const char *name, char *err, size_t err_len)
{
    if (!name || !*name) {
        sy_sdk_errf(err, err_len, "%s", name ? "descriptor has an empty name"
                    : "descriptor has no name (name is NULL)");
        return SY_EINVAL;
    }
    char shown[68];
    size_t i = 0;
    for (; name[i] && i < 64; i++)
        shown[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
    memcpy(shown + i, name[i] ? "..." : "", name[i] ? 4 : 1);
    sy_sdk_errf(err, err_len, "invalid plugin name '%s': use only letters, "
                "digits, '_' and '-'", shown);
    return SY_EINVAL;
}

static const char *missing_function(const sy_executor *d)
{
    if (!d->create)
        return "create";
    if (!d->destroy)
        return "destroy";
    if (!d->capacity)
        return "capacity";
    if (!d->submit)
        return "submit";
    if (!d->cancel)
        return "cancel";
    return NULL;
}

static int abi_ok(const sy_executor *d, char *err, size_t err_len)
{
    if (d->abi_major != SY_EXECUTOR_ABI_MAJOR) {
        sy_sdk_errf(err, err_len, "built for executor ABI %u.%u, this host "
                    "speaks %d.%d; rebuild it against this host's SDK",
                    (unsigned)d->abi_major, (unsigned)d->abi_minor,
                    SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
        return SY_EINVAL;
    }
    if (d->abi_minor > SY_EXECUTOR_ABI_MINOR) {
        sy_sdk_errf(err, err_len, "built for executor ABI %u.%u, newer than "
                    "this host's %d.%d; upgrade the host or rebuild the "
                    "plugin",
                    (unsigned)d->abi_major, (unsigned)d->abi_minor,
                    SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
        return SY_EINVAL;
    }
    return SY_OK;
}

int sy_sdk_descriptor_check(const sy_executor *d, char *err, size_t err_len)
{
    int rc = abi_ok(d, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (d->size < SY_SDK_EXECUTOR_SIZE_1_0) {
        sy_sdk_errf(err, err_len, "descriptor too small: %u bytes, ABI 1.0 "
                    "needs at least %zu",
                    (unsigned)d->size, (size_t)SY_SDK_EXECUTOR_SIZE_1_0);
        return SY_EINVAL;
    }
    if (!sy_sdk_plugin_name_ok(d->name))
        return refuse_name(d->name, err, err_len);
    if (!d->version) {
        sy_sdk_errf(err, err_len, "descriptor has no version (version is "
                    "NULL)");
        return SY_EINVAL;
    }
    const char *fn = missing_function(d);
    if (fn) {
        sy_sdk_errf(err, err_len, "missing required function %s()", fn);
        return SY_EINVAL;
    }
    return SY_OK;
}

/* Notes the name and version for a listing even when the plugin is
 * refused later, but only fields that the 1.x layout and the declared
 * size both cover.  Only the first three fields are common to every major
 * version. */
static void note_identity(sy_sdk_plugin *p, const sy_executor *d)
{
    p->abi_major = d->abi_major;
    p->abi_minor = d->abi_minor;
    if (d->abi_major != SY_EXECUTOR_ABI_MAJOR)
        return;
    if (SY_HAS_FIELD(d, sy_executor, name) && sy_sdk_plugin_name_ok(d->name))
        p->name = d->name;
    if (SY_HAS_FIELD(d, sy_executor, version) && d->version)
        p->version = d->version;
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
    note_identity(p, d);
    rc = sy_sdk_descriptor_check(d, err, err_len);
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
