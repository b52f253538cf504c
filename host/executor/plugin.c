/*
 * plugin.c -- the plugin registry: scanning, loading, descriptor checks.
 *
 * Every file found gets exactly one entry, loaded or refused with a
 * one-line reason, so `switchyard plugins` can explain every `.so` it saw.
 */
#include "executor/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "executor/directory.h"

/* Room for a StrictModes reason: it names a path twice, once quoted. */
#define REASON_MAX (3 * PATH_MAX + 256)

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

/* Reasons are shown one per line next to the path; a plugin's dlerror or
 * name could otherwise break the listing. */
static void make_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
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
    if (e->reason)
        make_one_line(e->reason);
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
/* The file                                                                 */
/* ------------------------------------------------------------------------ */

static bool elf_magic_ok(sy_plugin *e, const char *real)
{
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return refuse(e, "cannot open: %s", strerror(errno));
    unsigned char magic[4];
    size_t got = 0;
    int rerr = 0;
    while (got < sizeof magic) {
        ssize_t r = read(fd, magic + got, sizeof magic - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rerr = errno;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (rerr != 0)
        return refuse(e, "cannot read: %s", strerror(rerr));
    if (got < sizeof magic || memcmp(magic, "\x7f" "ELF", 4) != 0)
        return refuse(e, "not an ELF object");
    return true;
}

/* The checks that need no code of the plugin to run.  The StrictModes
 * check is what makes the later dlopen of the same path safe: nobody else
 * can swap the file in between. */
static bool file_ok(sy_plugin *e, const char *real)
{
    char why[REASON_MAX];
    if (sy_path_check_secure(real, why, sizeof why) != 0)
        return refuse(e, "%s", why);
    struct stat st;
    if (stat(real, &st) != 0)
        return refuse(e, "cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return refuse(e, "not a regular file");
    return elf_magic_ok(e, real);
}

/* dlerror() starts with the file name, which the entry already holds. */
static bool refuse_dlerror(sy_plugin *e, const char *real)
{
    const char *msg = dlerror();
    if (!msg)
        msg = "unknown error";
    size_t n = strlen(real);
    if (strncmp(msg, real, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2;
    return refuse(e, "dlopen failed: %s", msg);
}

/* Opens the file and asks it for its descriptor.  From here on the
 * plugin's code has run, so the handle is kept even when refused. */
static const sy_executor *open_plugin(sy_plugin *e, const char *real)
{
    dlerror();
    e->handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!e->handle) {
        refuse_dlerror(e, real);
        return NULL;
    }
    void *sym = dlsym(e->handle, SY_EXECUTOR_ENTRY_SYMBOL);
    if (!sym) {
        refuse(e, "no " SY_EXECUTOR_ENTRY_SYMBOL " symbol (not a Switchyard "
                  "executor, or built without SY_EXPORT)");
        return NULL;
    }
    /* POSIX guarantees data and function pointers convert; memcpy says so
     * without a cast ISO C frowns upon. */
    sy_executor_entry_fn entry;
    _Static_assert(sizeof entry == sizeof sym, "function pointer size");
    memcpy(&entry, &sym, sizeof entry);
    const sy_executor *d = entry();
    if (!d)
        refuse(e, SY_EXECUTOR_ENTRY_SYMBOL " returned NULL");
    return d;
}

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

static bool name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static bool name_ok(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!name_char_ok(*s))
            return false;
    return true;
}

/* Copies the name and version for `switchyard plugins` even when the plugin
 * is refused later, but only fields that the 1.x layout and the declared
 * size both cover. */
static bool note_identity(sy_plugin *e, const sy_executor *d)
{
    if (SY_HAS_FIELD(d, sy_executor, name) && name_ok(d->name)) {
        e->name = sy_asprintf("%s", d->name);
        if (!e->name)
            return false;
    }
    if (SY_HAS_FIELD(d, sy_executor, version) && d->version) {
        e->version = sy_asprintf("%s", d->version);
        if (!e->version)
            return false;
    }
    return true;
}

/* An invalid name, quoted and shortened so the reason stays one short
 * line whatever the plugin declared. */
static bool refuse_name(sy_plugin *e, const char *name)
{
    if (!name)
        return refuse(e, "descriptor has no name (name is NULL)");
    if (!*name)
        return refuse(e, "descriptor has an empty name");
    char shown[68];
    size_t i = 0;
    for (; name[i] && i < 64; i++)
        shown[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
    memcpy(shown + i, name[i] ? "..." : "", name[i] ? 4 : 1);
    return refuse(e, "invalid plugin name '%s': use only letters, digits, "
                     "'_' and '-'", shown);
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

/* A size no 1.x descriptor reaches: 500 pointers.  A larger one is not a
 * sy_executor at all, and reading that far could fault. */
#define DESCRIPTOR_SIZE_MAX 4096u

/* The ABI header every major version shares: size, abi_major, abi_minor. */
#define DESCRIPTOR_HEADER_SIZE \
    (offsetof(sy_executor, abi_minor) + sizeof(uint32_t))

/* Every descriptor field after the ABI header, with the minor that added
 * it.  A plugin needs at least the minor of the newest field it sets (any
 * non-zero byte: added fields mean "not used" when zero), whatever its
 * abi_minor says.  Each later minor appends its fields here with its
 * number. */
#define FIELD(f, minor)                                                       \
    {#f, offsetof(sy_executor, f), sizeof(((sy_executor *)0)->f), minor}
static const struct descriptor_field {
    const char *name;
    size_t offset, size;
    uint32_t since_minor;
} descriptor_fields[] = {
    FIELD(name, 0),          FIELD(version, 0),  FIELD(description, 0),
    FIELD(instance_params, 0), FIELD(task_params, 0), FIELD(create, 0),
    FIELD(destroy, 0),       FIELD(capacity, 0), FIELD(submit, 0),
    FIELD(cancel, 0),        FIELD(validate, 0), FIELD(metrics, 0),
};
#undef FIELD
_Static_assert(offsetof(sy_executor, metrics) +
                       sizeof(((sy_executor *)0)->metrics) ==
                   sizeof(sy_executor),
               "a field was added to sy_executor: list it in "
               "descriptor_fields with the minor that adds it");

static bool bytes_set(const sy_executor *d, size_t from, size_t to)
{
    const unsigned char *b = (const unsigned char *)d;
    for (size_t i = from; i < to; i++)
        if (b[i])
            return true;
    return false;
}

/* The lowest host minor the plugin needs: its abi_minor, raised to the
 * minor of the newest field it sets within its size.  *field names that
 * field, or is NULL when the declared minor stands. */
static uint32_t minor_needed(const sy_executor *d, const char **field)
{
    uint32_t need = d->abi_minor;
    *field = NULL;
    for (size_t i = 0; i < sizeof descriptor_fields /
                               sizeof descriptor_fields[0]; i++) {
        const struct descriptor_field *f = &descriptor_fields[i];
        if (f->offset + f->size <= d->size && f->since_minor > need &&
            bytes_set(d, f->offset, f->offset + f->size)) {
            need = f->since_minor;
            *field = f->name;
        }
    }
    return need;
}

/* The ABI header: a sane size, our major.  A descriptor of the pre-1.0
 * layout (abi_major, abi_minor, size) reads as size 1 and major 0, so a
 * header too small for itself is reported as that. */
static bool header_ok(sy_plugin *e, const sy_executor *d)
{
    if (d->size < DESCRIPTOR_HEADER_SIZE)
        return refuse(e, "descriptor size %u is too small for any "
                         "sy_executor (built against a pre-1.0 header that "
                         "put abi_major first?); rebuild it against this "
                         "host's SDK, starting the descriptor with "
                         "SY_EXECUTOR_V1",
                      (unsigned)d->size);
    if (d->size > DESCRIPTOR_SIZE_MAX)
        return refuse(e, "descriptor size %u is implausible (over %u "
                         "bytes): not a sy_executor? start the descriptor "
                         "with SY_EXECUTOR_V1",
                      (unsigned)d->size, DESCRIPTOR_SIZE_MAX);
    if (d->abi_major != SY_EXECUTOR_ABI_MAJOR)
        return refuse(e, "built for executor ABI %u.%u, this host speaks "
                         "%d.%d; rebuild it against this host's SDK",
                      (unsigned)d->abi_major, (unsigned)d->abi_minor,
                      SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
    return true;
}

/* The minor the plugin needs must be one this host has.  Fields past this
 * host's layout, and the reserved field, were added by a minor this host
 * does not know, so setting any of them needs a newer host too. */
static bool minor_ok(sy_plugin *e, const sy_executor *d)
{
    const char *field;
    uint32_t need = minor_needed(d, &field);
    e->abi_minor = need;
    if (need > SY_EXECUTOR_ABI_MINOR)
        return refuse(e, "needs executor ABI %d.%u%s%s%s, newer than this "
                         "host's %d.%d; upgrade the host or rebuild the "
                         "plugin",
                      SY_EXECUTOR_ABI_MAJOR, (unsigned)need,
                      field ? " (it sets " : "", field ? field : "",
                      field ? ")" : "", SY_EXECUTOR_ABI_MAJOR,
                      SY_EXECUTOR_ABI_MINOR);
    if (d->reserved != 0)
        return refuse(e, "sets the reserved descriptor field, unknown to "
                         "this host's executor ABI %d.%d; upgrade the host "
                         "or rebuild the plugin with SY_EXECUTOR_V1",
                      SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
    if (d->size > sizeof(sy_executor) &&
        bytes_set(d, sizeof(sy_executor), d->size))
        return refuse(e, "sets descriptor fields past this host's executor "
                         "ABI %d.%d layout (%u bytes, this host knows %zu): "
                         "it needs a newer 1.x host (its "
                         "SY_EXECUTOR_MIN_MINOR should say which); upgrade "
                         "the host or rebuild the plugin",
                      SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR,
                      (unsigned)d->size, sizeof(sy_executor));
    return true;
}

static bool descriptor_ok(sy_plugin *e, const sy_executor *d)
{
    /* Only the ABI header is common to every major version, and its
     * fields mean nothing until the size says they are there. */
    if (d->size >= DESCRIPTOR_HEADER_SIZE) {
        e->abi_major = d->abi_major;
        e->abi_minor = d->abi_minor;
    }
    if (!header_ok(e, d))
        return false;
    if (!note_identity(e, d))
        return refuse(e, "out of memory");
    if (d->size < SY_EXECUTOR_SIZE_1_0)
        return refuse(e, "descriptor too small: %u bytes, ABI 1.0 needs at "
                         "least %zu",
                      (unsigned)d->size, (size_t)SY_EXECUTOR_SIZE_1_0);
    if (!minor_ok(e, d))
        return false;
    if (!name_ok(d->name))
        return refuse_name(e, d->name);
    if (!d->version)
        return refuse(e, "descriptor has no version (version is NULL)");
    const char *fn = missing_function(d);
    if (fn)
        return refuse(e, "missing required function %s()", fn);
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

/* Runs every check in order; the first failure is the entry's reason. */
static void load_checked(sy_plugin *e, const sy_plugins *p, const char *real)
{
    if (!file_ok(e, real))
        return;
    const sy_executor *d = open_plugin(e, real);
    if (!d || !descriptor_ok(e, d) || !name_unique(e, p))
        return;
    e->state = SY_PLUGIN_LOADED;
    e->desc = d;
}

sy_plugin *sy_plugins_load_file(sy_plugins *p, const char *path)
{
    if (!p || !path)
        return NULL;
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        int saved = errno;
        sy_plugin *e = entry_new(path);
        if (!e)
            return NULL;
        refuse(e, "cannot resolve path: %s", strerror(saved));
        return add(p, e);
    }
    sy_plugin *old = find_by_real(p, real);
    if (old)
        return old;
    sy_plugin *e = entry_new(path);
    if (!e)
        return NULL;
    load_checked(e, p, real);
    return add(p, e);
}

/* ------------------------------------------------------------------------ */
/* Directories                                                              */
/* ------------------------------------------------------------------------ */

/* A file in a directory that failed StrictModes: listed, never opened. */
static sy_plugin *refuse_unopened(sy_plugins *p, const char *path,
                                  const char *why)
{
    char real[PATH_MAX];
    if (realpath(path, real)) {
        sy_plugin *old = find_by_real(p, real);
        if (old)
            return old;
    }
    sy_plugin *e = entry_new(path);
    if (!e)
        return NULL;
    refuse(e, "%s", why);
    return add(p, e);
}

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
    char why[REASON_MAX];
    bool secure = sy_path_check_secure(dir, why, sizeof why) == 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *path = child_path(dir, names[i]);
        sy_plugin *e = !path      ? NULL
                       : secure ? sy_plugins_load_file(p, path)
                                : refuse_unopened(p, path, why);
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
