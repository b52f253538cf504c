/* switchyard.cfg's `pools` and `tenants`, and a workflow's `pool` checked
 * against them: every error names FILE:LINE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../helpers.h"
#include "base/util.h"
#include "config/config.h"
#include "service/setup.h"

typedef struct {
    char *dir; /* scratch: switchyard.cfg, plugins/good.so, workflows/ */
    sy_diags d;
    sy_setup s;
    bool opened;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    char *p = sy_path_join(f->dir, "plugins");
    mkdir(p, 0755);
    th_copy_plugin(p, "good");
    free(p);
    p = sy_path_join(f->dir, "workflows");
    mkdir(p, 0755);
    free(p);
    sy_diags_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    if (f->opened)
        sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    th_rmtree(f->dir);
    free(f);
    return 0;
}

#define BASE                                                                  \
    "store = \"sqlite::memory:\";\nplugin_dirs = [\"plugins\"];\n"            \
    "workflow_dirs = [\"workflows\"];\n"                                      \
    "executors = { default = { plugin = \"good\"; }; };\n"

static int open_cfg(fx *f, const char *text, const char *workflow)
{
    if (workflow) {
        char *wd = sy_path_join(f->dir, "workflows");
        free(th_write(wd, "w.cfg", workflow));
        free(wd);
    }
    char *path = th_write(f->dir, "switchyard.cfg", text);
    int errors = sy_setup_open(&f->s, path, SY_SETUP_PLUGINS | SY_SETUP_WORKFLOWS, &f->d);
    f->opened = true;
    free(path);
    if (getenv("SY_TEST_VERBOSE"))
        th_diag_dump(&f->d);
    return errors;
}

#define EXPECT(...)                                                  \
    do {                                                             \
        if (!th_diag_has(&f->d, __VA_ARGS__, (const char *)NULL)) {   \
            th_diag_dump(&f->d);                                     \
            fail_msg("diagnostic not found: %s", #__VA_ARGS__);      \
        }                                                            \
    } while (0)

static void test_valid(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "pools = { gpu_db = 50; api = 3; };\n"
                                      "tenants = { a = { weight = 1; max_running = 10; };\n"
                                      "  b = { weight = 3; }; c = { }; };\n",
                              "workflow = { name = \"w\"; pool = \"api\";\n"
                              "  tasks = ( { id = \"a\"; pool_slots = 2; } ); };\n"),
                     0);
    const sy_flow_config *fl = &f->s.cfg.flow;
    assert_int_equal(fl->n_pools, 2);
    assert_string_equal(fl->pools[0].name, "gpu_db");
    assert_int_equal(fl->pools[0].size, 50);
    assert_int_equal(sy_config_pool(fl, "api")->size, 3);
    assert_null(sy_config_pool(fl, "nope"));
    assert_int_equal(fl->n_tenants, 3);
    assert_int_equal(sy_config_tenant(fl, "a")->max_running, 10);
    assert_int_equal(sy_config_tenant(fl, "b")->weight, 3);
    assert_int_equal(sy_config_tenant(fl, "b")->max_running, 0);
    assert_int_equal(sy_config_tenant(fl, "c")->weight, 1);
}

static void test_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "pools = { db = 0; api = \"3\"; big = 2000000; };\n" /* 5 */
                                      "tenants = { a = { weight = 0; max_running = 0;\n"   /* 6 */
                                      "  share = 2; }; b = 1; };\n",                        /* 7 */
                              NULL),
                     7);
    EXPECT("switchyard.cfg:5: error: pool 'db' must be an integer from 1 to 1000000");
    EXPECT("switchyard.cfg:5: error: pool 'api' must be an integer from 1 to 1000000");
    EXPECT("switchyard.cfg:5: error: pool 'big' must be an integer from 1 to 1000000");
    EXPECT("switchyard.cfg:6: error: tenant 'a': 'weight' must be an integer from 1 to 1000");
    EXPECT("switchyard.cfg:6: error: tenant 'a': 'max_running' must be an integer from 1 to");
    EXPECT("switchyard.cfg:7: error: unknown key 'share' in tenant 'a' (known: weight, "
           "max_running)");
    EXPECT("switchyard.cfg:7: error: tenant 'b' must be a group");
}

static void test_not_groups(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "pools = 5;\ntenants = [1];\n", NULL), 2);
    EXPECT("switchyard.cfg:5: error: 'pools' must be a group of pool sizes");
    EXPECT("switchyard.cfg:6: error: 'tenants' must be a group of tenants");
}

/* A task's pool must be one of switchyard.cfg's: named at the line of
 * `pool`, the task's own or its workflow's. */
static void test_unknown_pool(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "pools = { db = 5; api = 2; };\n",
                              "workflow = { name = \"w\";\n"                       /* 1 */
                              "  pool = \"dbx\";\n"                                /* 2 */
                              "  tasks = ( { id = \"a\"; },\n"                     /* 3 */
                              "    { id = \"b\"; pool = \"db\"; },\n"              /* 4 */
                              "    { id = \"c\";\n"                                /* 5 */
                              "      pool = \"gpu\"; } ); };\n"),                   /* 6 */
                     2);
    EXPECT("w.cfg:2: error: task 'a' (public::w::a): pool 'dbx' is not defined in",
           "switchyard.cfg (defined: db, api)");
    EXPECT("w.cfg:6: error: task 'c' (public::w::c): pool 'gpu' is not defined");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid),
        T(test_errors),
        T(test_not_groups),
        T(test_unknown_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
