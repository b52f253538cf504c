/*
 * switchyard/loader.h -- opening one executor plugin the way the host does:
 * the file's ownership and mode (sshd's StrictModes, for it and every
 * directory above it), an ELF object, dlopen, sy_executor_entry(), and the
 * descriptor's checks (the ABI header and a plausible size, the lowest host
 * minor the plugin needs, `reserved` and bytes past this layout left zero,
 * the 1.0 size, name, version, the required functions).
 *
 * The host loads every plugin through these functions, and the
 * conformance kit too, so both refuse exactly the same plugins with the
 * same words.  For an author's own test harness as well.  Every refusal
 * is one line, saying how to fix it where it can.  Loading
 * is for one thread at a time (dlerror() is per thread, the plugin's
 * constructors run); a loaded plugin may then be used from any thread.
 * Link with -ldl where the C library lacks dlopen (glibc before 2.34).
 */
#ifndef SWITCHYARD_LOADER_H
#define SWITCHYARD_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

/* The size of a 1.0 descriptor: the least the host accepts. */
#define SY_SDK_EXECUTOR_SIZE_1_0 \
    (offsetof(sy_executor, metrics) + sizeof(((sy_executor *)0)->metrics))

/* Room for any refusal: a StrictModes reason names a path twice. */
#define SY_SDK_LOAD_REASON_MAX (3 * 4096 + 256)

/* One plugin file, opened or refused. */
typedef struct sy_sdk_plugin {
    void *handle;            /* owned: the dlopen handle; NULL when the
                                file was never opened */
    const sy_executor *desc; /* the plugin's; NULL when refused */
    uint32_t abi_major;      /* as declared; 0 when unknown */
    uint32_t abi_minor;      /* the lowest host minor it needs: as
                                declared, raised to the minor of the
                                newest descriptor field it sets; 0 when
                                unknown */
    const char *name;        /* the plugin's own text, when its descriptor
                                has a valid one (even if refused for
                                another reason), else NULL; lives while
                                handle is open */
    const char *version;     /* likewise */
} sy_sdk_plugin;

/* Opens `path` and checks it, in the host's order; the first failure is
 * the reason.  SY_OK: p->desc is the accepted descriptor.  Otherwise a
 * negative status with the reason in err, e.g. "cannot resolve path: No
 * such file or directory", "no sy_executor_entry symbol (...)", "built
 * for executor ABI 2.0, this host speaks 1.0; ...".  `path` is resolved
 * (realpath) first; every check is of the resolved file.  Once the plugin's
 * code has run, p->handle stays open even when refused: its constructors
 * may have started threads, so unmapping it is the caller's decision
 * (sy_sdk_plugin_close()). */
int sy_sdk_plugin_open(sy_sdk_plugin *p, const char *path, char *err,
                       size_t err_len);

/* dlcloses the handle, if any, and empties `p`.  Only once no instance of
 * the plugin exists and none of its threads runs. */
void sy_sdk_plugin_close(sy_sdk_plugin *p);

/* The descriptor checks alone, on a descriptor already in memory.  SY_OK,
 * or SY_EINVAL with the reason in err. */
int sy_sdk_descriptor_check(const sy_executor *d, char *err, size_t err_len);

/* True for a valid plugin name: letters, digits, '_' and '-', not empty. */
bool sy_sdk_plugin_name_ok(const char *name);

/* The StrictModes check of `path` (a file or a directory) and every
 * directory above it: each must be owned by root or the effective user and
 * not writable by group or others (a directory with the sticky bit that is
 * owned by root, like /tmp, is accepted).  SY_OK, or SY_EINVAL with a
 * reason that says how to fix it, e.g. "/x/p.so is writable by others
 * (run: chmod go-w /x/p.so)". */
int sy_sdk_path_check_secure(const char *path, char *err, size_t err_len);

#endif /* SWITCHYARD_LOADER_H */
