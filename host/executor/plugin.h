/*
 * plugin.h -- finding and loading executor plugins.
 *
 * A registry scans directories for `*.so`, checks each file the way sshd's
 * StrictModes does (not writable by group or others, owned by root or the
 * host's user, the same for every directory above it), loads it with
 * RTLD_NOW | RTLD_LOCAL, calls sy_executor_entry() and checks the
 * descriptor, all through the SDK's loader (switchyard/loader.h: the
 * StrictModes check is sy_sdk_path_check_secure(), the least descriptor
 * size SY_SDK_EXECUTOR_SIZE_1_0).  Each refused file gets one reason.  Loading is
 * single-threaded; a loaded registry is read-only and may be read from any
 * thread.  A plugin is never dlclose'd while an instance of it exists: the
 * registry closes everything only in sy_plugins_free(), which the host calls
 * after destroying every instance.
 */
#ifndef SY_PLUGIN_H
#define SY_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include <switchyard/executor.h>
#include <switchyard/loader.h>

typedef enum sy_plugin_state {
    SY_PLUGIN_LOADED,
    SY_PLUGIN_REFUSED
} sy_plugin_state;

typedef struct sy_plugin {
    char *path;       /* owned: the file as found (dir + "/" + name) */
    sy_plugin_state state;
    char *reason;     /* owned: why it was refused, one line; NULL if loaded */
    char *name;       /* owned copy of desc->name; NULL if unknown */
    char *version;    /* owned copy of desc->version; NULL if unknown */
    uint32_t abi_major; /* as declared; 0 if unknown */
    uint32_t abi_minor; /* the lowest host minor it needs: as declared,
                           raised to the newest descriptor field it sets;
                           0 if unknown */
    const sy_executor *desc; /* the plugin's descriptor; NULL if refused */
    void *handle;     /* dlopen handle; NULL if it never opened */
    unsigned instances; /* live instances; the registry refuses to free a
                           plugin with instances > 0 */
    /* The file whose code is mapped: device, inode and modification time
     * (ns) when it was opened; all 0 when it could not be read.  The
     * dynamic loader hands back the copy already mapped for a path, so a
     * file replaced since is not what runs (sy_plugins_replaced). */
    uint64_t file_dev, file_ino;
    int64_t file_mtime;
} sy_plugin;

typedef struct sy_plugins {
    sy_plugin **v;    /* owned array of owned entries, in load order */
    size_t n, cap;
} sy_plugins;

void sy_plugins_init(sy_plugins *p);

/* Loads every `*.so` in `dir`, in name order.  A directory that does not
 * exist adds nothing and returns -1 with the reason in err; a directory
 * that fails the ownership and mode check is refused as a whole (every
 * `.so` in it is listed as refused with that reason).  Returns 0. */
int sy_plugins_scan_dir(sy_plugins *p, const char *dir, char *err,
                        size_t err_len);

/* Loads one file and appends its entry (loaded or refused).  A file whose
 * real path is already in the registry is skipped (returns that entry).
 * Never NULL except out of memory. */
sy_plugin *sy_plugins_load_file(sy_plugins *p, const char *path);

/* The loaded plugin called `name`, or NULL. */
sy_plugin *sy_plugins_find(const sy_plugins *p, const char *name);

/* Whether the plugin loaded `now` is the same mapping as `then` (one
 * handle: the loader gave back the copy loaded first) while its file was
 * replaced on disk since `then` was loaded: the code running is then not
 * the file's.  When it is the same mapping, `now` takes on the identity
 * of the file actually mapped, so that the next comparison sees it too. */
bool sy_plugins_replaced(sy_plugin *now, const sy_plugin *then);

/* dlcloses and frees everything.  A plugin that still has instances is
 * left mapped (its memory is leaked on purpose, and a line says so): a
 * plugin's code must outlive its threads. */
void sy_plugins_free(sy_plugins *p);

#endif
