/* switchyard.cfg's `pools`, `rate_limits` and `tenants`, and a
 * workflow's `pool` and named rate limits checked against them: every
 * error names FILE:LINE. */
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

static void test_rates_valid(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "rate_limits = { crm = { rate = 10; interval = \"1s\";\n"
                                      "  burst = 2; }; api = { rate = 3; interval = 250; };\n"
                                      "  slow = { rate = 1; interval = \"1d\"; }; };\n",
                              "workflow = { name = \"w\"; rate_limits = ( { name = \"crm\"; } );\n"
                              "  tasks = ( { id = \"a\"; rate_limits = ( { name = \"api\";\n"
                              "    key = \"{customer}\"; }, { name = \"crm\"; } ); } ); };\n"),
                     0);
    const sy_flow_config *fl = &f->s.cfg.flow;
    assert_int_equal(fl->n_rates, 3);
    assert_string_equal(fl->rates[0].name, "crm");
    assert_int_equal(fl->rates[0].rate, 10);
    assert_int_equal(fl->rates[0].interval_ms, 1000);
    assert_int_equal(fl->rates[0].burst, 2);
    const sy_rate_config *api = sy_config_rate(fl, "api");
    assert_non_null(api);
    assert_int_equal(api->interval_ms, 250);
    assert_int_equal(api->burst, 3); /* the rate, unless set */
    assert_int_equal(sy_config_rate(fl, "slow")->interval_ms, 86400000);
    assert_null(sy_config_rate(fl, "nope"));
    char names[64];
    assert_string_equal(sy_config_rate_names(fl, names, sizeof names), "crm, api, slow");
}

static void test_rate_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "rate_limits = {\n"                                /* 5 */
                                      "  a = { rate = 0; interval = \"1s\"; };\n"          /* 6 */
                                      "  b = { interval = \"1s\"; };\n"                   /* 7 */
                                      "  c = { rate = 1; interval = \"2d\"; };\n"          /* 8 */
                                      "  d = 5;\n"                                         /* 9 */
                                      "  e = { rate = 1; interval = 10; per = 1; };\n"     /* 10 */
                                      "  f = { rate = 1; interval = \"1s\"; burst = 2000000; };\n" /* 11 */
                                      "  g = { rate = 1; interval = \"soon\"; };\n"        /* 12 */
                                      "  h = { rate = 1; }; };\n",                         /* 13 */
                              NULL),
                     8);
    EXPECT("switchyard.cfg:6: error: rate limit 'a': 'rate' must be an integer from 1 to 1000000");
    EXPECT("switchyard.cfg:7: error: rate limit 'b' has no 'rate'");
    EXPECT("switchyard.cfg:8: error: rate limit 'c': 'interval' must be a duration from 1ms to 1d");
    EXPECT("switchyard.cfg:9: error: rate limit 'd' must be a group");
    EXPECT("switchyard.cfg:10: error: unknown key 'per' in rate limit 'e' (known: rate, "
           "interval, burst)");
    EXPECT("switchyard.cfg:11: error: rate limit 'f': 'burst' must be an integer from 1 to");
    EXPECT("switchyard.cfg:12: error: rate limit 'g': 'interval' must be a duration");
    EXPECT("switchyard.cfg:13: error: rate limit 'h' has no 'interval'");
    assert_int_equal(f->s.cfg.flow.n_rates, 0);
}

static void test_rates_not_a_group(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "rate_limits = ( 1 );\n", NULL), 1);
    EXPECT("switchyard.cfg:5: error: 'rate_limits' must be a group of named rate limits");
}

/* A named rate limit must be one of switchyard.cfg's: named at the line
 * of the entry, the task's own or its workflow's. */
static void test_unknown_rate(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, BASE "rate_limits = { crm = { rate = 1; interval = 10; }; };\n",
                              "workflow = { name = \"w\";\n"                          /* 1 */
                              "  rate_limits = ( { name = \"crmx\"; } );\n"            /* 2 */
                              "  tasks = ( { id = \"a\"; },\n"                         /* 3 */
                              "    { id = \"b\"; rate_limits = ( { name = \"crm\"; } ); },\n" /* 4 */
                              "    { id = \"c\"; rate_limits = (\n"                    /* 5 */
                              "      { name = \"api\"; } ); } ); };\n"),                /* 6 */
                     2);
    EXPECT("w.cfg:2: error: task 'a' (public::w::a): rate limit 'crmx' is not defined in",
           "switchyard.cfg (defined: crm)");
    EXPECT("w.cfg:6: error: task 'c' (public::w::c): rate limit 'api' is not defined");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid),
        T(test_errors),
        T(test_not_groups),
        T(test_unknown_pool),
        T(test_rates_valid),
        T(test_rate_errors),
        T(test_rates_not_a_group),
        T(test_unknown_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
