/*
 * plugin.c -- the plugin registry: scanning, loading, one entry per file.
 *
 * Every file found gets exactly one entry, loaded or refused with a
 * one-line reason, so `switchyard plugins` can explain every `.so` it saw.
 * Opening a file and checking it and its descriptor is the SDK's loader
 * (switchyard/loader.h); the registry adds what only it can judge: one
 * entry per real path, and unique names.
 */
#include "executor/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <switchyard/loader.h>
#include <switchyard/sdk.h>

#include "base/util.h"
#include "executor/directory.h"

void sy_plugins_init(sy_plugins *p)
{
    if (p)
        memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------------------ */
/* Entries                                                                  */
/* ------------------------------------------------------------------------ */

static sy_plugin *entry_new(const char *path)
{
    sy_plugin *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->path = sy_asprintf("%s", path);
    if (!e->path) {
        free(e);
        return NULL;
    }
    e->state = SY_PLUGIN_REFUSED;
    return e;
}

static void entry_free(sy_plugin *e)
{
    free(e->path);
    free(e->reason);
    free(e->name);
    free(e->version);
    free(e);
}

/* Marks `e` refused.  Returns false so checks can `return refuse(...)`.  Out
 * of memory leaves reason NULL, which add() treats as failure. */
static bool refuse(sy_plugin *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static bool refuse(sy_plugin *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(e->reason);
    e->reason = sy_vasprintf(fmt, ap);
    va_end(ap);
    e->state = SY_PLUGIN_REFUSED;
    e->desc = NULL;
    /* Reasons are shown one per line next to the path; a path in one
     * could otherwise break the listing. */
    sy_sdk_one_line(e->reason);
    return false;
}

/* Appends `e`; frees it and returns NULL when out of memory.  A handle that
 * is open stays open even then: the plugin's constructors have run and may
 * have started threads, so unmapping its code is never safe before
 * teardown. */
static sy_plugin *add(sy_plugins *p, sy_plugin *e)
{
    if (e->state == SY_PLUGIN_REFUSED && !e->reason)
        goto oom;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        sy_plugin **v = realloc(p->v, cap * sizeof *v);
        if (!v)
            goto oom;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = e;
    return e;
oom:
    entry_free(e);
    return NULL;
}

/* The entry whose file resolves to `real`.  Entries keep the path as found,
 * so it is resolved again here. */
static sy_plugin *find_by_real(const sy_plugins *p, const char *real)
{
    char buf[PATH_MAX];
    for (size_t i = 0; i < p->n; i++)
        if (realpath(p->v[i]->path, buf) && strcmp(buf, real) == 0)
            return p->v[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Loading one file                                                         */
/* ------------------------------------------------------------------------ */

/* Copies what the plugin says of itself (name, version, the ABI it needs),
 * kept for `switchyard plugins` even when it is refused: its strings live
 * in the plugin's memory, which is unmapped at teardown. */
static bool note_identity(sy_plugin *e, const sy_sdk_plugin *sp)
{
    e->abi_major = sp->abi_major;
    e->abi_minor = sp->abi_minor;
    if (sp->name && !(e->name = sy_asprintf("%s", sp->name)))
        return false;
    if (sp->version && !(e->version = sy_asprintf("%s", sp->version)))
        return false;
    return true;
}

static bool name_unique(sy_plugin *e, const sy_plugins *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const sy_plugin *o = p->v[i];
        if (o->state == SY_PLUGIN_LOADED && strcmp(o->name, e->name) == 0)
            return refuse(e, "duplicate plugin name '%s': already loaded "
                             "from %s",
                          e->name, o->path);
    }
    return true;
}

/* Runs every check in order; the first failure is the entry's reason.
 * The file, dlopen and descriptor checks are the SDK's loader, the same
 * the conformance kit runs; a unique name is the registry's own rule. */
static void load_checked(sy_plugin *e, const sy_plugins *p, const char *real)
{
    sy_sdk_plugin sp;
    char why[SY_SDK_LOAD_REASON_MAX];
    int rc = sy_sdk_plugin_open(&sp, real, why, sizeof why);
    /* Once the plugin's code has run its handle is kept, refused or not. */
    e->handle = sp.handle;
    if (!note_identity(e, &sp)) {
        refuse(e, "out of memory");
        return;
    }
    if (rc != SY_OK) {
        refuse(e, "%s", why);
        return;
    }
    if (!name_unique(e, p))
        return;
    e->state = SY_PLUGIN_LOADED;
    e->desc = sp.desc;
}

/* The registry's entry for `path`: the one already there for the same
 * real path, or a new one, loaded unless `why` says why the file must not
 * be opened (a directory that failed StrictModes). */
static sy_plugin *entry_for(sy_plugins *p, const char *path, const char *why)
{
    char real[PATH_MAX];
    bool resolved = realpath(path, real) != NULL;
    int saved = errno;
    if (resolved) {
        sy_plugin *old = find_by_real(p, real);
        if (old)
            return old;
    }
    sy_plugin *e = entry_new(path);
    if (!e)
        return NULL;
    struct stat st;
    if (resolved && stat(real, &st) == 0) {
        e->file_dev = (uint64_t)st.st_dev;
        e->file_ino = (uint64_t)st.st_ino;
        e->file_mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    if (why)
        refuse(e, "%s", why);
    else if (!resolved)
        refuse(e, "cannot resolve path: %s", strerror(saved));
    else
        load_checked(e, p, real);
    return add(p, e);
}

sy_plugin *sy_plugins_load_file(sy_plugins *p, const char *path)
{
    return p && path ? entry_for(p, path, NULL) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Directories                                                              */
/* ------------------------------------------------------------------------ */

static char *child_path(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    bool slash = n > 0 && dir[n - 1] == '/';
    return sy_asprintf("%s%s%s", dir, slash ? "" : "/", name);
}

int sy_plugins_scan_dir(sy_plugins *p, const char *dir, char *err,
                        size_t err_len)
{
    if (!p || !dir || !*dir) {
        sy_errf(err, err_len, "no plugin directory given");
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    if (sy_plugin_dir_list(dir, &names, &n, err, err_len) != 0)
        return -1;
    char why[SY_SDK_LOAD_REASON_MAX];
    bool secure = sy_sdk_path_check_secure(dir, why, sizeof why) == SY_OK;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *path = child_path(dir, names[i]);
        sy_plugin *e = path ? entry_for(p, path, secure ? NULL : why) : NULL;
        if (!e) {
            sy_errf(err, err_len, "out of memory loading plugins from %s",
                    dir);
            rc = -1;
        }
        free(path);
    }
    sy_plugin_dir_free(names, n);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Lookup and teardown                                                      */
/* ------------------------------------------------------------------------ */

sy_plugin *sy_plugins_find(const sy_plugins *p, const char *name)
{
    if (!p || !name)
        return NULL;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i]->state == SY_PLUGIN_LOADED &&
            strcmp(p->v[i]->name, name) == 0)
            return p->v[i];
    return NULL;
}

bool sy_plugins_replaced(sy_plugin *now, const sy_plugin *then)
{
    if (!now || !then || !now->handle || now->handle != then->handle)
        return false;
    bool replaced = now->file_dev != then->file_dev || now->file_ino != then->file_ino ||
                    now->file_mtime != then->file_mtime;
    now->file_dev = then->file_dev;
    now->file_ino = then->file_ino;
    now->file_mtime = then->file_mtime;
    return replaced;
}

void sy_plugins_free(sy_plugins *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        sy_plugin *e = p->v[i];
        if (e->instances > 0)
            fprintf(stderr,
                    "switchyard: plugin %s still has %u instances; leaving "
                    "it loaded\n",
                    e->name ? e->name : e->path, e->instances);
        else if (e->handle)
            dlclose(e->handle);
        entry_free(e);
    }
    free(p->v);
    sy_plugins_init(p);
}
