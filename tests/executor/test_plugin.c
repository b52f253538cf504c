/*
 * test_plugin.c -- the plugin loader: scanning, StrictModes, descriptor
 * checks, the registry, and one real plugin driven through its ABI.
 *
 * The fixture plugins are built elsewhere and found in
 * $SY_TEST_PLUGIN_DIR.  Each test copies what it needs into its own fresh
 * directory under /tmp, so the modes and owners it asserts on are its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/plugin.h"

/* ------------------------------------------------------------------------ */
/* Fixture                                                                  */
/* ------------------------------------------------------------------------ */

#define MAX_DIRS 4

typedef struct fixture {
    char dirs[MAX_DIRS][64];
    int ndirs;
    sy_plugins reg;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    sy_plugins_init(&f->reg);
    *state = f;
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    sy_plugins_free(&f->reg);
    for (int i = 0; i < f->ndirs; i++) {
        /* A test may have made a directory unwritable or unsearchable. */
        chmod(f->dirs[i], 0700);
        nftw(f->dirs[i], rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    free(f);
    return 0;
}

static const char *src_dir(void)
{
    const char *d = getenv("SY_TEST_PLUGIN_DIR");
    if (!d || !*d)
        fail_msg("SY_TEST_PLUGIN_DIR is not set: point it at the built "
                 "test plugins (good.so, noentry.so, ...)");
    return d;
}

/* A fresh directory, mode 0700, removed by teardown. */
static const char *new_dir(fixture *f)
{
    assert_true(f->ndirs < MAX_DIRS);
    char *d = f->dirs[f->ndirs];
    snprintf(d, sizeof f->dirs[0], "/tmp/sy_test_plugin_XXXXXX");
    assert_non_null(mkdtemp(d));
    assert_int_equal(chmod(d, 0700), 0);
    f->ndirs++;
    return d;
}

static void path_in(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

/* Copies fixture `plugin` (without ".so") into `dir` as `as`, mode 0755. */
static void put_as(const char *dir, const char *plugin, const char *as)
{
    char src[PATH_MAX], dst[PATH_MAX], name[128];
    snprintf(name, sizeof name, "%s.so", plugin);
    path_in(src, src_dir(), name);
    path_in(dst, dir, as);
    FILE *in = fopen(src, "rb");
    if (!in)
        fail_msg("cannot open %s: %s", src, strerror(errno));
    FILE *out = fopen(dst, "wb");
    assert_non_null(out);
    char buf[1 << 14];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    assert_false(ferror(in));
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(dst, 0755), 0);
}

static void put(const char *dir, const char *plugin)
{
    char as[128];
    snprintf(as, sizeof as, "%s.so", plugin);
    put_as(dir, plugin, as);
}

static sy_plugin *load(fixture *f, const char *dir, const char *name)
{
    char path[PATH_MAX];
    path_in(path, dir, name);
    sy_plugin *e = sy_plugins_load_file(&f->reg, path);
    assert_non_null(e);
    return e;
}

static void assert_contains(const char *s, const char *needle)
{
    assert_non_null(s);
    if (!strstr(s, needle))
        fail_msg("\"%s\" does not contain \"%s\"", s, needle);
}

/* Refused with one line of reason holding each key word. */
static void assert_refused(const sy_plugin *e, const char *k1,
                           const char *k2)
{
    assert_non_null(e);
    assert_int_equal(e->state, SY_PLUGIN_REFUSED);
    assert_null(e->desc);
    assert_non_null(e->reason);
    assert_null(strchr(e->reason, '\n'));
    if (k1)
        assert_contains(e->reason, k1);
    if (k2)
        assert_contains(e->reason, k2);
}

/* For reasons that are not about the path, the path stays out of them. */
static void assert_no_path(const sy_plugin *e, const char *dir)
{
    if (strstr(e->reason, dir))
        fail_msg("reason names the path: %s", e->reason);
}

/* True when the dynamic linker has `path` mapped. */
static bool is_mapped(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

/* ------------------------------------------------------------------------ */
/* Loading one file                                                         */
/* ------------------------------------------------------------------------ */

static bool has_param(const sy_param_spec *const *v, const char *name,
                      sy_param_type type)
{
    for (; v && *v; v++)
        if (strcmp((*v)->name, name) == 0 && (*v)->type == type)
            return true;
    return false;
}

static void test_good_loads(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "good");
    sy_plugin *e = load(f, d, "good.so");
    assert_int_equal(e->state, SY_PLUGIN_LOADED);
    assert_null(e->reason);
    assert_string_equal(e->name, "good");
    assert_string_equal(e->version, "1.0.0");
    assert_int_equal(e->abi_major, SY_EXECUTOR_ABI_MAJOR);
    /* The lowest host minor it needs, not the header's: SY_EXECUTOR_V1
     * without SY_EXECUTOR_MIN_MINOR says 0. */
    assert_int_equal(e->abi_minor, 0);
    assert_non_null(e->desc);
    assert_non_null(e->handle);
    assert_int_equal(e->instances, 0);
    assert_contains(e->path, "good.so");
    assert_true(has_param(e->desc->instance_params, "slots", SY_PARAM_INT));
    assert_true(has_param(e->desc->task_params, "fail", SY_PARAM_BOOL));
    assert_int_equal(f->reg.n, 1);
}

static void test_noentry(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "noentry");
    sy_plugin *e = load(f, d, "noentry.so");
    assert_refused(e, "no sy_executor_entry symbol", "SY_EXPORT");
    assert_no_path(e, d);
    assert_null(e->name);
}

static void test_nullentry(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "nullentry");
    sy_plugin *e = load(f, d, "nullentry.so");
    assert_refused(e, "sy_executor_entry returned NULL", NULL);
}

/* The descriptor must be in loaded memory before anything past its header
 * is read: one on the heap is refused. */
static void test_descriptor_off_static_data(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "heapdesc");
    sy_plugin *e = load(f, d, "heapdesc.so");
    assert_refused(e, "the descriptor is not in the plugin's static data", NULL);
}

static void test_abi_major(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "abi2");
    sy_plugin *e = load(f, d, "abi2.so");
    assert_refused(e, "built for executor ABI 2.0", "rebuild");
    assert_contains(e->reason, "this host speaks 1.");
    assert_int_equal(e->abi_major, 2);
    /* Past the first three fields a 2.x layout is unknown: not read. */
    assert_null(e->name);
}

static void test_abi_newer_minor(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "newminor");
    sy_plugin *e = load(f, d, "newminor.so");
    char want[64];
    snprintf(want, sizeof want, "needs executor ABI %d.%d, newer than "
             "this host's %d.%d", SY_EXECUTOR_ABI_MAJOR,
             SY_EXECUTOR_ABI_MINOR + 1, SY_EXECUTOR_ABI_MAJOR,
             SY_EXECUTOR_ABI_MINOR);
    assert_refused(e, want, "upgrade the host");
    assert_int_equal(e->abi_minor, SY_EXECUTOR_ABI_MINOR + 1);
}

/* Loads oddheader.so with its descriptor picked by `mode`. */
static sy_plugin *load_odd(fixture *f, const char *mode)
{
    const char *d = new_dir(f);
    put(d, "oddheader");
    assert_int_equal(setenv("SY_TEST_ODD_HEADER", mode, 1), 0);
    sy_plugin *e = load(f, d, "oddheader.so");
    assert_int_equal(unsetenv("SY_TEST_ODD_HEADER"), 0);
    return e;
}

/* The layout before 1.0 was fixed began abi_major, abi_minor, size: read
 * as 1.x it is size 1, major 0, and must be called what it is. */
static void test_old_layout(void **state)
{
    sy_plugin *e = load_odd(*state, "old");
    assert_refused(e, "descriptor size 1 is too small for any sy_executor",
                   "pre-1.0 header");
    assert_contains(e->reason, "SY_EXECUTOR_V1");
    /* Nothing past a header that small is read, not even the version. */
    assert_int_equal(e->abi_major, 0);
    assert_int_equal(e->abi_minor, 0);
    assert_null(e->name);
}

static void test_huge_size(void **state)
{
    sy_plugin *e = load_odd(*state, "huge");
    assert_refused(e, "descriptor size 2147483647 is implausible",
                   "SY_EXECUTOR_V1");
    assert_null(e->name);
}

static void test_reserved_set(void **state)
{
    sy_plugin *e = load_odd(*state, "reserved");
    assert_refused(e, "sets the reserved descriptor field", "upgrade the host");
    assert_string_equal(e->name, "oddheader");
}

static void test_newer_header_field_refused(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "abi16_field");
    sy_plugin *e = load(f, d, "abi16_field.so");
    char want[128];
    snprintf(want, sizeof want, "sets descriptor fields past this host's "
             "executor ABI %d.%d layout", SY_EXECUTOR_ABI_MAJOR,
             SY_EXECUTOR_ABI_MINOR);
    assert_refused(e, want, "it needs a newer 1.x host");
    assert_contains(e->reason, "SY_EXECUTOR_MIN_MINOR");
    assert_no_path(e, d);
    assert_string_equal(e->name, "abi16_field");
}

static void test_newer_header_minor_refused(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "abi16_minor");
    sy_plugin *e = load(f, d, "abi16_minor.so");
    assert_refused(e, "needs executor ABI 1.6, newer than this host's 1.5",
                   "upgrade the host");
    assert_int_equal(e->abi_minor, 6);
    assert_string_equal(e->name, "abi16_minor");
}

static void test_small_descriptor(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "small");
    sy_plugin *e = load(f, d, "small.so");
    char want[128];
    snprintf(want, sizeof want,
             "descriptor too small: %zu bytes, ABI 1.0 needs at least %zu",
             offsetof(sy_executor, create), (size_t)SY_SDK_EXECUTOR_SIZE_1_0);
    assert_refused(e, want, NULL);
}

static void test_missing_function(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "nofn");
    sy_plugin *e = load(f, d, "nofn.so");
    assert_refused(e, "missing required function submit()", NULL);
}

static void test_bad_name(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "badname");
    sy_plugin *e = load(f, d, "badname.so");
    assert_refused(e, "invalid plugin name", "'bad name!'");
    assert_null(e->name);
    assert_null(sy_plugins_find(&f->reg, "bad name!"));
}

static void test_not_elf(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    char path[PATH_MAX];
    path_in(path, d, "x.so");
    write_file(path, "hello, I am text\n", 17);
    sy_plugin *e = load(f, d, "x.so");
    assert_refused(e, "not an ELF object", NULL);
    assert_null(e->handle);
    path_in(path, d, "empty.so");
    write_file(path, "", 0);
    assert_refused(load(f, d, "empty.so"), "not an ELF object", NULL);
}

static void test_dlopen_failure(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    char path[PATH_MAX];
    path_in(path, d, "broken.so");
    write_file(path, "\x7f" "ELF garbage that is no object", 30);
    sy_plugin *e = load(f, d, "broken.so");
    assert_refused(e, "dlopen failed: ", NULL);
    assert_no_path(e, d);
    assert_null(e->handle);
}

static void test_not_regular(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    char path[PATH_MAX];
    path_in(path, d, "dir.so");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_refused(load(f, d, "dir.so"), "not a regular file", NULL);
}

static void test_missing_file(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    sy_plugin *e = load(f, d, "nothere.so");
    assert_refused(e, "cannot resolve path", NULL);
    assert_contains(e->path, "nothere.so");
}

/* ------------------------------------------------------------------------ */
/* StrictModes                                                              */
/* ------------------------------------------------------------------------ */

static void test_world_writable_file(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "good");
    char path[PATH_MAX];
    path_in(path, d, "good.so");
    assert_int_equal(chmod(path, 0757), 0);
    sy_plugin *e = load(f, d, "good.so");
    assert_refused(e, "chmod go-w", "writable by others");
    assert_contains(e->reason, path);
    assert_null(e->handle);
    assert_false(is_mapped(path));
}

static void test_group_writable_dir(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "good");
    put(d, "noentry");
    assert_int_equal(chmod(d, 0770), 0);
    char err[256] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d, err, sizeof err), 0);
    assert_int_equal(f->reg.n, 2);
    for (size_t i = 0; i < f->reg.n; i++) {
        sy_plugin *e = f->reg.v[i];
        assert_refused(e, "writable by group", "chmod go-w");
        assert_contains(e->reason, d);
        assert_null(e->handle);
        assert_false(is_mapped(e->path));
    }
    assert_null(sy_plugins_find(&f->reg, "good"));
}

static void test_writable_parent_refuses_file(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    char sub[PATH_MAX];
    path_in(sub, d, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    put(sub, "good");
    assert_int_equal(chmod(d, 0777), 0);
    sy_plugin *e = load(f, sub, "good.so");
    assert_refused(e, "writable by group and others", "chmod go-w");
    assert_contains(e->reason, d);
    assert_null(strstr(e->reason, "sub"));
}

static void test_path_check_secure(void **state)
{
    fixture *f = *state;
    char err[512];
    assert_int_equal(sy_sdk_path_check_secure("/", err, sizeof err), 0);
    assert_int_equal(sy_sdk_path_check_secure("/nonexistent/x", err, sizeof err),
                     -1);
    assert_contains(err, "cannot resolve");
    assert_int_equal(sy_sdk_path_check_secure("", err, sizeof err), -1);
    assert_int_equal(sy_sdk_path_check_secure(NULL, NULL, 0), -1);

    /* /tmp-like: root-owned and sticky, so world-writable is fine. */
    const char *d = new_dir(f);
    assert_int_equal(sy_sdk_path_check_secure(d, err, sizeof err), 0);
    if (geteuid() == 0) {
        assert_int_equal(chmod(d, 01777), 0);
        assert_int_equal(sy_sdk_path_check_secure(d, err, sizeof err), 0);
    }
    assert_int_equal(chmod(d, 0777), 0);
    assert_int_equal(sy_sdk_path_check_secure(d, err, sizeof err), -1);
    assert_contains(err, "(run: chmod go-w ");

    /* A path a shell would split is quoted in the suggested command. */
    assert_int_equal(chmod(d, 0700), 0);
    char odd[PATH_MAX];
    path_in(odd, d, "it's here");
    assert_int_equal(mkdir(odd, 0775), 0);
    assert_int_equal(chmod(odd, 0775), 0);
    assert_int_equal(sy_sdk_path_check_secure(odd, err, sizeof err), -1);
    assert_contains(err, "chmod go-w '");
    assert_contains(err, "it'\\''s here'");
}

static void test_foreign_owner(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0)
        skip(); /* only root can give a file away */
    const char *d = new_dir(f);
    put(d, "good");
    char path[PATH_MAX];
    path_in(path, d, "good.so");
    assert_int_equal(chown(path, 1234, 1234), 0);
    sy_plugin *e = load(f, d, "good.so");
    assert_refused(e, "owned by uid 1234", "(run: chown ");
    assert_contains(e->reason, "not root or the host's user 0");
    assert_null(e->handle);

    /* The same for a directory above it. */
    const char *d2 = new_dir(f);
    put(d2, "good");
    assert_int_equal(chown(d2, 1234, 1234), 0);
    char err[512] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d2, err, sizeof err), 0);
    assert_refused(f->reg.v[1], "owned by uid 1234", d2);
}

/* ------------------------------------------------------------------------ */
/* The registry                                                             */
/* ------------------------------------------------------------------------ */

static void test_duplicate_name_same_dir(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "good");
    put(d, "dupname");
    char err[256] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d, err, sizeof err), 0);
    assert_int_equal(f->reg.n, 2);
    /* Sorted: dupname.so comes first, so it wins the name. */
    assert_int_equal(f->reg.v[0]->state, SY_PLUGIN_LOADED);
    assert_string_equal(f->reg.v[0]->version, "2.0.0-dup");
    assert_refused(f->reg.v[1], "duplicate plugin name 'good'",
                   "already loaded from ");
    assert_contains(f->reg.v[1]->reason, f->reg.v[0]->path);
    assert_ptr_equal(sy_plugins_find(&f->reg, "good"), f->reg.v[0]);
}

static void test_duplicate_across_dirs(void **state)
{
    fixture *f = *state;
    const char *d1 = new_dir(f), *d2 = new_dir(f);
    put(d1, "good");
    put(d2, "good");
    char err[256] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d1, err, sizeof err), 0);
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d2, err, sizeof err), 0);
    assert_int_equal(f->reg.n, 2);
    assert_int_equal(f->reg.v[0]->state, SY_PLUGIN_LOADED);
    assert_refused(f->reg.v[1], "duplicate plugin name 'good'", d1);
    assert_ptr_equal(sy_plugins_find(&f->reg, "good"), f->reg.v[0]);
}

static void test_same_file_twice(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f), *d2 = new_dir(f);
    put(d, "good");
    char err[256] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d, err, sizeof err), 0);
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d, err, sizeof err), 0);
    assert_int_equal(f->reg.n, 1);

    /* Another spelling, and a symlink, of the same file. */
    char other[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
    snprintf(other, sizeof other, "%s/./good.so", d);
    assert_ptr_equal(sy_plugins_load_file(&f->reg, other), f->reg.v[0]);
    path_in(target, d, "good.so");
    path_in(link, d2, "link.so");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d2, err, sizeof err), 0);
    assert_int_equal(f->reg.n, 1);
    assert_int_equal(f->reg.v[0]->state, SY_PLUGIN_LOADED);
}

static void test_missing_dir(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    char path[PATH_MAX], err[512] = "";
    path_in(path, d, "nope");
    assert_int_equal(sy_plugins_scan_dir(&f->reg, path, err, sizeof err),
                     -1);
    assert_contains(err, path);
    assert_contains(err, strerror(ENOENT));
    assert_int_equal(f->reg.n, 0);

    /* A file where a directory should be. */
    put(d, "good");
    path_in(path, d, "good.so");
    assert_int_equal(sy_plugins_scan_dir(&f->reg, path, err, sizeof err),
                     -1);
    assert_contains(err, strerror(ENOTDIR));
    assert_int_equal(f->reg.n, 0);
}

static void test_find(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "good");
    put(d, "newminor");
    char err[256] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d, err, sizeof err), 0);
    sy_plugin *g = sy_plugins_find(&f->reg, "good");
    assert_non_null(g);
    assert_string_equal(g->name, "good");
    assert_null(sy_plugins_find(&f->reg, "nope"));
    assert_null(sy_plugins_find(&f->reg, ""));
    assert_null(sy_plugins_find(&f->reg, NULL));
    assert_null(sy_plugins_find(NULL, "good"));
    /* A refused plugin is listed by name but cannot be found. */
    sy_plugin *n = f->reg.v[1];
    assert_string_equal(n->name, "newminor");
    assert_int_equal(n->state, SY_PLUGIN_REFUSED);
    assert_null(sy_plugins_find(&f->reg, "newminor"));
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void test_scan_order(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    static const char *const files[] = {"small", "good", "badname", "nofn",
                                        "abi2", "noentry"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        put(d, files[i]);
    char path[PATH_MAX];
    path_in(path, d, "README.txt");
    write_file(path, "not a plugin", 12);
    path_in(path, d, "good.so.bak");
    write_file(path, "not a plugin", 12);
    char err[256] = "";
    assert_int_equal(sy_plugins_scan_dir(&f->reg, d, err, sizeof err), 0);
    static const char *const want[] = {"abi2.so", "badname.so", "good.so",
                                       "noentry.so", "nofn.so", "small.so"};
    assert_int_equal(f->reg.n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < f->reg.n; i++)
        assert_string_equal(base(f->reg.v[i]->path), want[i]);
    assert_int_equal(f->reg.v[2]->state, SY_PLUGIN_LOADED);
}

static void test_bad_arguments(void **state)
{
    fixture *f = *state;
    char err[128] = "";
    assert_null(sy_plugins_load_file(NULL, "/x.so"));
    assert_null(sy_plugins_load_file(&f->reg, NULL));
    assert_int_equal(sy_plugins_scan_dir(&f->reg, NULL, err, sizeof err),
                     -1);
    assert_int_equal(sy_plugins_scan_dir(&f->reg, "", NULL, 0), -1);
    assert_int_equal(sy_plugins_scan_dir(NULL, "/tmp", err, sizeof err), -1);
    assert_refused(sy_plugins_load_file(&f->reg, ""), "cannot resolve",
                   NULL);
    sy_plugins_free(NULL);
    sy_plugins_init(NULL);
}

/* ------------------------------------------------------------------------ */
/* Driving good.so through the ABI                                          */
/* ------------------------------------------------------------------------ */

/* What a host hands a plugin: just enough of it for good.so. */
struct test_param {
    const char *key;
    sy_param_type type;
    int64_t i; /* INT and BOOL */
    const char *s;
};

struct sy_params {
    const struct test_param *v;
    size_t n;
};

struct sy_host {
    int logs;
    char last[256];
};

struct sy_completion {
    int calls;
    sy_outcome outcome;
    char output[256];
    char error[256];
};

static const struct test_param *lookup(const sy_params *p, const char *key)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (strcmp(p->v[i].key, key) == 0)
            return &p->v[i];
    return NULL;
}

static sy_param_type h_type(const sy_params *p, const char *key)
{
    const struct test_param *t = lookup(p, key);
    return t ? t->type : SY_PARAM_NONE;
}

static int h_typed(const sy_params *p, const char *key, sy_param_type type,
                   const struct test_param **out)
{
    *out = lookup(p, key);
    if (!*out)
        return SY_ENOENT;
    return (*out)->type == type ? SY_OK : SY_ETYPE;
}

static int h_string(const sy_params *p, const char *key, const char **out)
{
    const struct test_param *t;
    int rc = h_typed(p, key, SY_PARAM_STRING, &t);
    if (rc == SY_OK)
        *out = t->s;
    return rc;
}

static int h_int(const sy_params *p, const char *key, int64_t *out)
{
    const struct test_param *t;
    int rc = h_typed(p, key, SY_PARAM_INT, &t);
    if (rc == SY_OK)
        *out = t->i;
    return rc;
}

static int h_bool(const sy_params *p, const char *key, int *out)
{
    const struct test_param *t;
    int rc = h_typed(p, key, SY_PARAM_BOOL, &t);
    if (rc == SY_OK)
        *out = (int)t->i;
    return rc;
}

static void h_complete(sy_completion *c, const sy_result *r)
{
    c->calls++;
    c->outcome = r->outcome;
    snprintf(c->output, sizeof c->output, "%.*s", (int)r->output_len,
             r->output ? r->output : "");
    snprintf(c->error, sizeof c->error, "%s", r->error ? r->error : "");
}

static void h_log(sy_host *h, sy_log_level level, const char *fmt, ...)
{
    (void)level;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->last, sizeof h->last, fmt, ap);
    va_end(ap);
    h->logs++;
}

static void h_wake(sy_host *h) { (void)h; }

static const sy_host_api host_api = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .complete = h_complete,
    .log = h_log,
    .wake = h_wake,
    .param_type = h_type,
    .param_string = h_string,
    .param_int = h_int,
    .param_bool = h_bool,
};

struct metrics {
    int64_t active, capacity, submitted, succeeded, failed, timed_out,
        cancelled;
    int seen;
};

static void sink(void *s, const char *name, int64_t value)
{
    struct metrics *m = s;
    m->seen++;
    if (strcmp(name, "active") == 0)
        m->active = value;
    else if (strcmp(name, "capacity") == 0)
        m->capacity = value;
    else if (strcmp(name, "submitted") == 0)
        m->submitted = value;
    else if (strcmp(name, "succeeded") == 0)
        m->succeeded = value;
    else if (strcmp(name, "failed") == 0)
        m->failed = value;
    else if (strcmp(name, "timed_out") == 0)
        m->timed_out = value;
    else if (strcmp(name, "cancelled") == 0)
        m->cancelled = value;
}

static sy_task make_task(const sy_params *params, const char *input)
{
    sy_task t = {sizeof t, 1,     "public::etl::x", "run-1", "x",
                 input,    strlen(input), params,   0, "wf", ".", -1};
    return t;
}

static const sy_executor *load_good(fixture *f, sy_plugin **out)
{
    const char *d = new_dir(f);
    put(d, "good");
    sy_plugin *e = load(f, d, "good.so");
    assert_int_equal(e->state, SY_PLUGIN_LOADED);
    *out = e;
    return e->desc;
}

static void test_good_create_refuses(void **state)
{
    fixture *f = *state;
    sy_plugin *e;
    const sy_executor *x = load_good(f, &e);
    sy_host host = {0};
    sy_instance *inst = NULL;
    char err[256] = "";

    struct test_param neg[] = {{"slots", SY_PARAM_INT, -1, NULL}};
    sy_params pn = {neg, 1};
    assert_int_equal(x->create(&host_api, &host, &pn, &inst, err, sizeof err),
                     SY_EINVAL);
    assert_null(inst);
    assert_contains(err, "slots");

    struct test_param fc[] = {{"fail_create", SY_PARAM_BOOL, 1, NULL}};
    sy_params pf = {fc, 1};
    assert_int_equal(x->create(&host_api, &host, &pf, &inst, err, sizeof err),
                     SY_EINVAL);
    assert_null(inst);
    assert_contains(err, "fail_create");

    struct test_param wt[] = {{"slots", SY_PARAM_STRING, 0, "two"}};
    sy_params pw = {wt, 1};
    assert_true(x->create(&host_api, &host, &pw, &inst, err, sizeof err) < 0);
    assert_null(inst);
}

static void test_good_create_submit_destroy(void **state)
{
    fixture *f = *state;
    sy_plugin *e;
    const sy_executor *x = load_good(f, &e);
    sy_host host = {0};
    sy_instance *inst = NULL;
    char err[256] = "";
    struct test_param cfg[] = {{"slots", SY_PARAM_INT, 2, NULL}};
    sy_params pc = {cfg, 1};
    assert_int_equal(x->create(&host_api, &host, &pc, &inst, err, sizeof err),
                     SY_OK);
    assert_non_null(inst);
    e->instances++;
    assert_int_equal(x->capacity(inst), 2);

    struct test_param tp[] = {{"echo", SY_PARAM_STRING, 0, "hi there"}};
    sy_params pt = {tp, 1};
    sy_task t = make_task(&pt, "{\"a\":1}");
    sy_completion c = {0};
    assert_int_equal(x->submit(inst, &t, &c, err, sizeof err), SY_OK);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.outcome, SY_OUTCOME_SUCCEEDED);
    assert_string_equal(c.output, "{\"a\":1}");
    assert_string_equal(host.last, "echo: hi there");

    struct test_param fp[] = {{"fail", SY_PARAM_BOOL, 1, NULL}};
    sy_params pfl = {fp, 1};
    sy_task t2 = make_task(&pfl, "{}");
    sy_completion c2 = {0};
    assert_int_equal(x->submit(inst, &t2, &c2, err, sizeof err), SY_OK);
    assert_int_equal(c2.calls, 1);
    assert_int_equal(c2.outcome, SY_OUTCOME_FAILED);
    assert_contains(c2.error, "fail");

    assert_int_equal(x->cancel(inst, &c), SY_ENOENT);
    assert_int_equal(x->capacity(inst), 2);

    struct metrics m = {0};
    x->metrics(inst, sink, &m);
    assert_int_equal(m.seen, 8);
    assert_int_equal(m.submitted, 2);
    assert_int_equal(m.succeeded, 1);
    assert_int_equal(m.failed, 1);
    assert_int_equal(m.active, 0);
    assert_int_equal(m.capacity, 2);
    assert_int_equal(m.submitted, m.succeeded + m.failed + m.timed_out +
                                      m.cancelled + m.active);

    x->destroy(inst);
    e->instances--;
}

static void test_good_zero_slots_busy(void **state)
{
    fixture *f = *state;
    sy_plugin *e;
    const sy_executor *x = load_good(f, &e);
    sy_host host = {0};
    sy_instance *inst = NULL;
    char err[256] = "";
    sy_params empty = {NULL, 0};
    assert_int_equal(
        x->create(&host_api, &host, &empty, &inst, err, sizeof err), SY_OK);
    assert_int_equal(x->capacity(inst), SY_CAPACITY_UNLIMITED);
    x->destroy(inst);

    struct test_param cfg[] = {{"slots", SY_PARAM_INT, 0, NULL}};
    sy_params pc = {cfg, 1};
    assert_int_equal(x->create(&host_api, &host, &pc, &inst, err, sizeof err),
                     SY_OK);
    assert_int_equal(x->capacity(inst), 0);
    sy_task t = make_task(&empty, "{}");
    sy_completion c = {0};
    assert_int_equal(x->submit(inst, &t, &c, err, sizeof err), SY_EBUSY);
    assert_int_equal(c.calls, 0);
    x->destroy(inst);
}

/* Rebuilt against a newer 1.x header, using nothing newer: it loads on
 * this older host, and finds the newer host function absent. */
static void test_newer_header_loads(void **state)
{
    fixture *f = *state;
    const char *d = new_dir(f);
    put(d, "abi16_plain");
    sy_plugin *e = load(f, d, "abi16_plain.so");
    assert_int_equal(e->state, SY_PLUGIN_LOADED);
    assert_null(e->reason);
    assert_string_equal(e->name, "abi16_plain");
    assert_int_equal(e->abi_minor, 0);
    /* Its descriptor is the newer, longer one. */
    assert_true(e->desc->size > sizeof(sy_executor));

    const sy_executor *x = e->desc;
    sy_host host = {0};
    sy_instance *inst = NULL;
    char err[256] = "";
    sy_params empty = {NULL, 0};
    assert_int_equal(
        x->create(&host_api, &host, &empty, &inst, err, sizeof err), SY_OK);
    e->instances++;
    assert_string_equal(host.last, "abi16_plain on a host without progress()");
    sy_task t = make_task(&empty, "{}");
    sy_completion c = {0};
    assert_int_equal(x->submit(inst, &t, &c, err, sizeof err), SY_OK);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.outcome, SY_OUTCOME_SUCCEEDED);
    x->destroy(inst);
    e->instances--;
}

/* Runs sy_plugins_free with stderr captured into `buf`. */
static void free_capturing_stderr(sy_plugins *p, char *buf, size_t len)
{
    char tmpl[] = "/tmp/sy_test_stderr_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    sy_plugins_free(p);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(tmpl);
}

static void test_free_keeps_plugin_with_instances(void **state)
{
    fixture *f = *state;
    sy_plugin *e;
    const sy_executor *x = load_good(f, &e);
    sy_host host = {0};
    sy_instance *inst = NULL;
    char err[256] = "";
    sy_params empty = {NULL, 0};
    assert_int_equal(
        x->create(&host_api, &host, &empty, &inst, err, sizeof err), SY_OK);
    e->instances = 1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", e->path);

    char out[512];
    free_capturing_stderr(&f->reg, out, sizeof out);
    assert_contains(out, "switchyard: plugin good still has 1 instances; "
                         "leaving it loaded");
    assert_int_equal(f->reg.n, 0);
    /* Its code is still mapped: the instance can still be torn down. */
    assert_true(is_mapped(path));
    assert_int_equal(x->capacity(inst), SY_CAPACITY_UNLIMITED);
    x->destroy(inst);
}

static void test_free_closes_unused(void **state)
{
    fixture *f = *state;
    sy_plugin *e;
    load_good(f, &e);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", e->path);
    assert_true(is_mapped(path));
    sy_plugins_free(&f->reg);
    assert_false(is_mapped(path));
    assert_int_equal(f->reg.n, 0);
    assert_null(f->reg.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_good_loads),
        T(test_noentry),
        T(test_nullentry),
        T(test_descriptor_off_static_data),
        T(test_abi_major),
        T(test_abi_newer_minor),
        T(test_old_layout),
        T(test_huge_size),
        T(test_reserved_set),
        T(test_newer_header_loads),
        T(test_newer_header_field_refused),
        T(test_newer_header_minor_refused),
        T(test_small_descriptor),
        T(test_missing_function),
        T(test_bad_name),
        T(test_not_elf),
        T(test_dlopen_failure),
        T(test_not_regular),
        T(test_missing_file),
        T(test_world_writable_file),
        T(test_group_writable_dir),
        T(test_writable_parent_refuses_file),
        T(test_path_check_secure),
        T(test_foreign_owner),
        T(test_duplicate_name_same_dir),
        T(test_duplicate_across_dirs),
        T(test_same_file_twice),
        T(test_missing_dir),
        T(test_find),
        T(test_scan_order),
        T(test_bad_arguments),
        T(test_good_create_refuses),
        T(test_good_create_submit_destroy),
        T(test_good_zero_slots_busy),
        T(test_free_keeps_plugin_with_instances),
        T(test_free_closes_unused),
#undef T
    };
    return cmocka_run_group_tests_name("plugin", tests, NULL, NULL);
}
