/* Unit tests for the parse cache (host/workflow/cache_*.c): a hit gives
 * the very workflow a parse gives; a changed file, a corrupt or cut entry
 * and an entry of another directory are misses that parse and rewrite;
 * a file with @include is never cached; a check that objects on a hit
 * sends the loader back to the file, which reports at the line; two
 * processes that load at once both end with a whole entry. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/diagnostics.h"
#include "../helpers.h"
#include "base/util.h"
#include "workflow/internal.h"
#include "workflow/workflow.h"

typedef struct fixture {
    char *tmp;   /* scratch: wf/ holds the file, cache/ the entries */
    char *wfdir, *cache;
    sy_diags d;
    sy_workflow **v;
    size_t n;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tmp = th_mkdtemp();
    f->wfdir = sy_path_join(f->tmp, "wf");
    f->cache = sy_path_join(f->tmp, "var/cache");
    mkdir(f->wfdir, 0755);
    sy_diags_init(&f->d);
    *state = f;
    return 0;
}

static void drop(fixture *f)
{
    for (size_t i = 0; i < f->n; i++)
        sy_workflow_free(f->v[i]);
    free(f->v);
    f->v = NULL;
    f->n = 0;
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
}

static int teardown(void **state)
{
    fixture *f = *state;
    drop(f);
    free(f->wfdir);
    free(f->cache);
    th_rmtree(f->tmp);
    free(f);
    return 0;
}

/* A workflow of `n` tasks (over 64 KiB from 800 on) using every field
 * the entry holds: parameters, `when`, retry, timeout, trigger, a map. */
static char *big_text(int n, const char *extra)
{
    size_t cap = (size_t)n * 200 + 4096, at = 0;
    char *s = malloc(cap);
    at += (size_t)snprintf(s + at, cap - at,
                           "workflow = {\n  name = \"big::one\";\n  tenant = \"t1\";\n"
                           "  description = \"d\";\n  retry = { attempts = 2; };\n"
                           "  tasks = (\n    { id = \"m\"; map_range = 5; max_map = 9; },\n");
    for (int i = 0; i < n; i++) {
        char dep[32];
        snprintf(dep, sizeof dep, i ? "t%d" : "m", i - 1);
        at += (size_t)snprintf(
            s + at, cap - at,
            "    { id = \"t%d\"; after = [\"%s\"]; command = [\"x\", \"%d\"]; %s },\n", i,
            dep, i,
            i % 7 == 0   ? "when = ( { path = \"a.b\"; equals = 3; } ); trigger = \"all_done\";"
            : i % 5 == 0 ? "retry = { attempts = 4; delay = \"2s\"; }; timeout = \"1m\";"
                         : "");
    }
    at += (size_t)snprintf(s + at, cap - at, "    { id = \"end\"; after = [\"t%d\"]; %s }\n"
                                             "  );\n};\n", n - 1, extra);
    return s;
}

static char *write_wf(fixture *f, const char *text)
{
    return th_write(f->wfdir, "big.cfg", text);
}

static int load(fixture *f, sy_task_check_fn check, void *arg)
{
    drop(f);
    int e = sy_workflow_load_dir_cached(f->wfdir, f->cache, check, arg, &f->v, &f->n, &f->d);
    if (e || getenv("SY_TEST_VERBOSE"))
        th_diag_dump(&f->d);
    return e;
}

/* The one file in the cache directory (fails when not exactly one: no
 * temporary file may be left either). */
static char *entry(fixture *f)
{
    DIR *dir = opendir(f->cache);
    assert_non_null(dir);
    char *found = NULL;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            free(found);
            found = sy_path_join(f->cache, e->d_name);
            count++;
        }
    closedir(dir);
    assert_int_equal(count, 1);
    return found;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    *len = (size_t)ftell(fp);
    rewind(fp);
    char *buf = malloc(*len + 1);
    assert_int_equal(fread(buf, 1, *len, fp), *len);
    fclose(fp);
    return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    fclose(fp);
}

/* A hit is the workflow the parse made: same definition text, same hash,
 * same graph; it keeps no text of its own. */
static void test_hit_equals_parse(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    free(write_wf(f, text));
    free(text);
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_int_equal(f->n, 1);
    assert_non_null(f->v[0]->definition); /* a parse */
    char *def = sy_xstrdup(f->v[0]->definition), hash[65];
    memcpy(hash, f->v[0]->hash, sizeof hash);
    free(entry(f));
    assert_int_equal(load(f, NULL, NULL), 0);
    const sy_workflow *wf = f->v[0];
    assert_null(wf->definition); /* a hit */
    assert_string_equal(wf->hash, hash);
    char got_hash[65], *built = NULL;
    const char *got = sy_workflow_definition(wf, &built, got_hash);
    assert_non_null(built);
    assert_string_equal(got, def);
    assert_string_equal(got_hash, hash);
    free(built);
    assert_int_equal(wf->n_tasks, 902);
    assert_string_equal(wf->tasks[1].ns, "t1::big::one::t0");
    assert_int_equal(wf->tasks[1].n_deps, 1);
    assert_int_equal(wf->tasks[0].n_children, 1);
    assert_true(wf->tasks[0].mapped);
    assert_int_equal(wf->tasks[1].n_when, 1);
    assert_int_equal(wf->tasks[1].trigger, SY_TRIGGER_ALL_DONE);
    assert_int_equal(wf->tasks[6].retry.attempts, 4);
    assert_int_equal(wf->tasks[2].retry.attempts, 2);
    assert_int_equal(wf->tasks[6].timeout_ms, 60000);
    assert_non_null(strstr(wf->file, "big.cfg"));
    free(def);
}

/* Any byte changed in the file is another key: parsed again, and the
 * entry (one per file) replaced. */
static void test_miss_after_change(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    free(write_wf(f, text));
    assert_int_equal(load(f, NULL, NULL), 0);
    size_t len1, len2;
    char *e1 = entry(f), *b1 = slurp(e1, &len1);
    char *t2 = big_text(901, "");
    free(write_wf(f, t2));
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_non_null(f->v[0]->definition);
    assert_int_equal(f->v[0]->n_tasks, 903);
    char *e2 = entry(f), *b2 = slurp(e2, &len2);
    assert_string_equal(e1, e2);
    assert_true(len1 != len2 || memcmp(b1, b2, len1) != 0);
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_null(f->v[0]->definition);
    assert_int_equal(f->v[0]->n_tasks, 903);
    free(text);
    free(t2);
    free(e1);
    free(e2);
    free(b1);
    free(b2);
}

/* A damaged entry (a byte flipped anywhere, cut short, empty, garbage)
 * is never used: the file is parsed and the entry written whole again. */
static void test_corrupt_entry(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    free(write_wf(f, text));
    free(text);
    assert_int_equal(load(f, NULL, NULL), 0);
    char hash[65];
    memcpy(hash, f->v[0]->hash, sizeof hash);
    char *path = entry(f);
    size_t len;
    char *good = slurp(path, &len);
    size_t at[] = {0, 20, 60, len / 2, len - 1};
    for (size_t k = 0; k < SY_ARRAY_LEN(at) + 3; k++) {
        char *bad = malloc(len);
        memcpy(bad, good, len);
        size_t bad_len = len;
        if (k < SY_ARRAY_LEN(at))
            bad[at[k]] ^= 0x20;
        else if (k == SY_ARRAY_LEN(at))
            bad_len = len / 3;
        else if (k == SY_ARRAY_LEN(at) + 1)
            bad_len = 0;
        else
            memset(bad, 'x', bad_len);
        spit(path, bad, bad_len);
        free(bad);
        assert_int_equal(load(f, NULL, NULL), 0);
        assert_non_null(f->v[0]->definition); /* parsed, not read back */
        assert_string_equal(f->v[0]->hash, hash);
        size_t now_len;
        char *now = slurp(path, &now_len);
        assert_int_equal(now_len, len);
        assert_memory_equal(now, good, len);
        free(now);
    }
    free(good);
    free(path);
}

/* The same bytes in another directory are another definition (base_dir):
 * an entry copied over from there is refused. */
static void test_other_directory(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    free(write_wf(f, text));
    assert_int_equal(load(f, NULL, NULL), 0);
    char *first = entry(f);
    size_t len;
    char *buf = slurp(first, &len);
    char *other = sy_path_join(f->tmp, "other");
    mkdir(other, 0755);
    free(th_write(other, "big.cfg", text));
    unlink(first);
    free(f->wfdir);
    f->wfdir = other;
    assert_int_equal(load(f, NULL, NULL), 0);
    char *second = entry(f);
    assert_string_not_equal(first, second);
    spit(second, buf, len);
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_non_null(f->v[0]->definition);
    assert_string_equal(f->v[0]->base_dir + strlen(f->v[0]->base_dir) - 5, "other");
    free(text);
    free(buf);
    free(first);
    free(second);
}

/* Small files and files that @include others are not cached. */
static void test_not_cached(void **state)
{
    fixture *f = *state;
    free(th_write(f->wfdir, "small.cfg",
                  "workflow = { name = \"s\"; tasks = ( { id = \"a\"; } ); };\n"));
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_int_equal(access(f->cache, F_OK), -1);
    free(th_write(f->wfdir, "extra.inc", "    { id = \"inc\"; },\n"));
    char *text = big_text(900, "");
    char *at = strstr(text, "  tasks = (\n");
    assert_non_null(at);
    size_t head = (size_t)(at - text) + strlen("  tasks = (\n");
    char *with = sy_asprintf("%.*s@include \"extra.inc\"\n%s", (int)head, text, text + head);
    free(write_wf(f, with));
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_int_equal(f->n, 2);
    assert_int_equal(access(f->cache, F_OK), -1);
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_non_null(f->v[0]->definition);
    free(text);
    free(with);
}

typedef struct check_log {
    int with_setting, without;
    bool object;   /* find a problem in task t7's parameters */
} check_log;

static int check_fn(void *arg, const sy_workflow *wf, const sy_task_def *t,
                    const config_setting_t *setting, sy_diags *d)
{
    check_log *log = arg;
    setting ? log->with_setting++ : log->without++;
    if (!log->object || strcmp(t->id, "t7") != 0)
        return 0;
    if (setting)
        sy_error(d, config_setting_source_file(setting),
                 (int)config_setting_source_line(setting), "t7 is not wanted");
    (void)wf;
    return 1;
}

/* On a hit the checks still run, without settings; a problem they find
 * sends the loader to the file, which reports it at its line.  A load
 * with a diagnostic writes no entry. */
static void test_checks_on_hit(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    char *path = write_wf(f, text);
    free(text);
    check_log log = {0};
    assert_int_equal(load(f, check_fn, &log), 0);
    assert_int_equal(log.with_setting, 902);
    log = (check_log){0};
    assert_int_equal(load(f, check_fn, &log), 0);
    assert_null(f->v[0]->definition);
    assert_int_equal(log.without, 902);
    assert_int_equal(log.with_setting, 0);
    log = (check_log){.object = true};
    assert_int_equal(load(f, check_fn, &log), 1);
    assert_int_equal(f->n, 0);
    assert_int_equal(log.with_setting, 902);
    assert_true(th_diag_has(&f->d, path, ":15: error: t7 is not wanted", (const char *)NULL));
    free(path);
}

/* Processes loading one file at once, the cache empty: each gets the
 * workflow, and the entry left is whole (the next load hits). */
static void test_concurrent_writers(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    free(write_wf(f, text));
    free(text);
    for (int round = 0; round < 2; round++) {
        th_rmtree(sy_xstrdup(f->cache));
        pid_t pids[4];
        for (int i = 0; i < 4; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                sy_diags d;
                sy_diags_init(&d);
                sy_workflow **v = NULL;
                size_t n = 0;
                int e = sy_workflow_load_dir_cached(f->wfdir, f->cache, NULL, NULL, &v, &n, &d);
                _exit(e == 0 && n == 1 && v[0]->n_tasks == 902 ? 0 : 1);
            }
        }
        for (int i = 0; i < 4; i++) {
            int st = 0;
            assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
            assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        free(entry(f)); /* one entry, no temporary file left */
        assert_int_equal(load(f, NULL, NULL), 0);
        assert_null(f->v[0]->definition);
    }
}

/* A scheduled workflow from the cache keeps its text (its host records a
 * run at every tick), written once at load and hashing as the entry says. */
static void test_schedule_keeps_text(void **state)
{
    fixture *f = *state;
    char *text = big_text(900, "");
    char *at = strstr(text, "  description");
    assert_non_null(at);
    char *with = sy_asprintf("%.*s  schedule = \"0 3 * * *\";\n%s", (int)(at - text), text, at);
    free(write_wf(f, with));
    assert_int_equal(load(f, NULL, NULL), 0);
    char *def = sy_xstrdup(f->v[0]->definition), hash[65];
    memcpy(hash, f->v[0]->hash, sizeof hash);
    char *path = entry(f);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    assert_int_equal(load(f, NULL, NULL), 0);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino); /* a hit: not rewritten */
    assert_non_null(f->v[0]->definition);
    assert_string_equal(f->v[0]->definition, def);
    assert_string_equal(f->v[0]->hash, hash);
    free(def);
    free(path);
    free(text);
    free(with);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_equals_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_miss_after_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checks_on_hit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schedule_keeps_text, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
