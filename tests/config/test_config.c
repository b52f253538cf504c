/* switchyard.cfg and the assembled setup: every error names FILE:LINE. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "../helpers.h"
#include "service/setup.h"
#include "base/util.h"

typedef struct {
    char *dir;     /* scratch directory holding the config */
    char *plugins; /* dir/plugins with good.so */
    sy_diags d;
    sy_setup s;
    bool opened;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    f->plugins = sy_path_join(f->dir, "plugins");
    mkdir(f->plugins, 0755);
    th_copy_plugin(f->plugins, "good");
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
    free(f->plugins);
    th_rmtree(f->dir);
    free(f);
    return 0;
}

/* Writes switchyard.cfg and opens it; returns the error count. */
static int open_cfg(fx *f, const char *text, unsigned flags)
{
    char *path = th_write(f->dir, "switchyard.cfg", text);
    int errors = sy_setup_open(&f->s, path, flags, &f->d);
    f->opened = true;
    free(path);
    if (getenv("SY_TEST_VERBOSE"))
        th_diag_dump(&f->d);
    return errors;
}

#define HAS(...) th_diag_has(&f->d, __VA_ARGS__, (const char *)NULL)
#define EXPECT(...)                          \
    do {                                     \
        if (!HAS(__VA_ARGS__)) {             \
            th_diag_dump(&f->d);             \
            fail_msg("diagnostic not found"); \
        }                                    \
    } while (0)

static void test_valid(void **state)
{
    fx *f = *state;
    int e = open_cfg(f,
                     "store = \"sqlite::memory:\";\n"
                     "plugin_dirs = [\"plugins\"];\n"
                     "workflow_dirs = [\"workflows\", \"/abs/wf\"];\n"
                     "executors = {\n"
                     "  default = { plugin = \"good\"; slots = 4; };\n"
                     "  fast = { plugin = \"good\"; };\n"
                     "};\n"
                     "routes = { default = \"default\";\n"
                     "  rules = ( { match = \"*::fast::**\"; executor = \"fast\"; } ); };\n",
                     SY_SETUP_CREATE);
    if (e)
        th_diag_dump(&f->d);
    assert_int_equal(e, 0);
    assert_int_equal(f->d.errors, 0);
    assert_string_equal(f->s.cfg.store, "sqlite::memory:");
    assert_int_equal(f->s.cfg.n_plugin_dirs, 1);
    assert_string_equal(f->s.cfg.plugin_dirs[0], f->plugins);
    assert_int_equal(f->s.cfg.n_workflow_dirs, 2);
    assert_string_equal(f->s.cfg.workflow_dirs[1], "/abs/wf");
    assert_int_equal(f->s.n_instances, 2);
    sy_instance_entry *fast = sy_setup_instance(&f->s, "fast");
    assert_non_null(fast);
    assert_non_null(fast->inst);
    assert_string_equal(fast->plugin->name, "good");
    assert_int_equal(fast->plugin->instances, 2);
    const char *exec = NULL;
    sy_routes_resolve(&f->s.cfg.routes, "public::fast::x", &exec, NULL);
    assert_string_equal(exec, "fast");
    sy_routes_resolve(&f->s.cfg.routes, "public::slow::x", &exec, NULL);
    assert_string_equal(exec, "default");
}

static void test_parse_error(void **state)
{
    fx *f = *state;
    assert_true(open_cfg(f, "store = \"x\";\nexecutors = {\n  default = = 3;\n};\n", 0) > 0);
    EXPECT("switchyard.cfg:3: error: syntax error");
}

static void test_missing_file(void **state)
{
    fx *f = *state;
    char *path = sy_path_join(f->dir, "nope.cfg");
    assert_true(sy_setup_open(&f->s, path, 0, &f->d) > 0);
    f->opened = true;
    EXPECT("nope.cfg", "cannot read");
    free(path);
}

static void test_unknown_top_key(void **state)
{
    fx *f = *state;
    assert_true(open_cfg(f, "store = \"x\";\n\nstor = \"y\";\n", 0) > 0);
    EXPECT("switchyard.cfg:3: error: unknown key 'stor'", "known: store,");
}

static void test_duplicate_instance(void **state)
{
    fx *f = *state;
    /* libconfig itself refuses a second setting of the same name. */
    assert_true(open_cfg(f,
                         "executors = {\n"
                         "  a = { plugin = \"good\"; };\n"
                         "  a = { plugin = \"good\"; };\n"
                         "};\n",
                         0) > 0);
    EXPECT("switchyard.cfg:3: error:", "duplicate");
}

static void test_instance_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f,
                              "executors = {\n"
                              "  default = { plugin = \"good\"; };\n"
                              "  noplug = { slots = 1; };\n"
                              "  notgroup = 3;\n"
                              "  badplug = { plugin = 7; };\n"
                              "};\n",
                              0),
                     3);
    EXPECT("switchyard.cfg:3: error: executor 'noplug' has no 'plugin'");
    EXPECT("switchyard.cfg:4: error: executor 'notgroup' must be a group");
    EXPECT("switchyard.cfg:5: error: executor 'badplug': 'plugin' must be a plugin name");
}

static void test_bad_instance_name(void **state)
{
    fx *f = *state;
    /* A name libconfig accepts but Switchyard does not: too long. */
    char text[512];
    char name[80];
    memset(name, 'x', 70);
    name[70] = '\0';
    snprintf(text, sizeof text, "executors = {\n  %s = { plugin = \"good\"; };\n};\n", name);
    assert_true(open_cfg(f, text, 0) > 0);
    EXPECT("switchyard.cfg:2: error: executor name", "is invalid");
}

static void test_rule_unknown_instance(void **state)
{
    fx *f = *state;
    char *routes = th_write(f->dir, "routes.cfg",
                            "routes = {\n"
                            "  default = \"default\";\n"
                            "  rules = (\n"
                            "    { match = \"a::**\"; executor = \"default\"; },\n"
                            "    { match = \"b::**\"; executor = \"gpu\"; }\n"
                            "  );\n"
                            "};\n");
    free(routes);
    assert_true(open_cfg(f,
                         "routes = \"routes.cfg\";\n"
                         "executors = { default = { plugin = \"good\"; }; };\n",
                         0) > 0);
    EXPECT("routes.cfg:5: error: rule \"b::**\" sends to executor 'gpu', which is not defined",
           "defined: default");
}

static void test_default_unknown_instance(void **state)
{
    fx *f = *state;
    assert_true(open_cfg(f,
                         "executors = { main = { plugin = \"good\"; }; };\n"
                         "routes = {\n"
                         "  default = \"mian\";\n"
                         "  rules = ();\n"
                         "};\n",
                         0) > 0);
    EXPECT("switchyard.cfg:3: error: the default route sends to executor 'mian'",
           "defined: main");
}

static void test_missing_default(void **state)
{
    fx *f = *state;
    /* No default instance, no default route, and no thread plugin to make
     * one implicitly. */
    char text[512];
    snprintf(text, sizeof text,
             "plugin_dirs = [\"plugins\"];\n"
             "executors = { main = { plugin = \"good\"; }; };\n");
    assert_true(open_cfg(f, text, SY_SETUP_PLUGINS) > 0);
    EXPECT("switchyard.cfg: error: no executor instance 'default'",
           "install the thread plugin");
}

static void test_plugin_not_loaded(void **state)
{
    fx *f = *state;
    assert_true(open_cfg(f,
                         "plugin_dirs = [\"plugins\"];\n"
                         "executors = {\n"
                         "  default = { plugin = \"good\"; };\n"
                         "  gpu = { plugin = \"gpux\"; };\n"
                         "};\n",
                         SY_SETUP_PLUGINS) > 0);
    EXPECT("switchyard.cfg:4: error: executor 'gpu': plugin 'gpux' is not loaded");
}

/* Instances whose plugins are missing (a plugin directory unread, a
 * plugin refused for want of memory): one line, the first with its
 * reason, the others named in it; each still counts as an error. */
static void test_plugins_not_loaded_said_once(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f,
                              "plugin_dirs = [\"plugins\"];\n"
                              "executors = {\n"
                              "  default = { plugin = \"good\"; };\n"
                              "  hpc = { plugin = \"gpux\"; };\n"
                              "  hpc_gpu = { plugin = \"gpux\"; };\n"
                              "  aws = { plugin = \"cloudx\"; };\n"
                              "};\n",
                              SY_SETUP_PLUGINS),
                     3);
    assert_int_equal(f->d.errors, 1);
    EXPECT("switchyard.cfg:4: error: executor 'hpc': plugin 'gpux' is not loaded",
           "their plugins not loaded either: executor 'hpc_gpu' (plugin 'gpux'), "
           "'aws' (plugin 'cloudx')");
}

static void test_instance_settings_checked(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f,
                              "plugin_dirs = [\"plugins\"];\n"
                              "executors = {\n"
                              "  default = {\n"
                              "    plugin = \"good\";\n"
                              "    slotz = 4;\n"
                              "    fail_create = \"yes\";\n"
                              "  };\n"
                              "};\n",
                              SY_SETUP_CREATE),
                     2);
    EXPECT("switchyard.cfg:5: error: executor 'default': unknown key 'slotz'",
           "known: plugin, call_timeout, max_task_time, isolate_plugin, slots");
    EXPECT("switchyard.cfg:6: error: executor 'default': 'fail_create': must be a boolean");
}

static void test_create_failure(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f,
                              "plugin_dirs = [\"plugins\"];\n"
                              "executors = {\n"
                              "  default = { plugin = \"good\"; };\n"
                              "  broken = { plugin = \"good\"; fail_create = true; };\n"
                              "};\n",
                              SY_SETUP_CREATE),
                     1);
    EXPECT("switchyard.cfg:4: error: executor 'broken': plugin 'good' refused its settings:");
    /* The instance that did come up is torn down cleanly on close. */
    assert_non_null(sy_setup_instance(&f->s, "default")->inst);
    assert_null(sy_setup_instance(&f->s, "broken")->inst);
}

static void test_refused_plugin_warning_or_error(void **state)
{
    fx *f = *state;
    th_copy_plugin(f->plugins, "noentry");
    assert_int_equal(open_cfg(f,
                              "plugin_dirs = [\"plugins\"];\n"
                              "executors = { default = { plugin = \"good\"; }; };\n",
                              SY_SETUP_PLUGINS),
                     0);
    EXPECT("noentry.so: warning: plugin refused: no sy_executor_entry symbol");
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_int_equal(open_cfg(f,
                              "plugin_dirs = [\"plugins\"];\n"
                              "strict_plugins = true;\n"
                              "executors = { default = { plugin = \"good\"; }; };\n",
                              SY_SETUP_PLUGINS),
                     1);
    EXPECT("noentry.so: error: plugin refused: no sy_executor_entry symbol",
           "strict_plugins");
}

static void test_refused_named_hint(void **state)
{
    fx *f = *state;
    th_copy_plugin(f->plugins, "abi2");
    assert_true(open_cfg(f,
                         "plugin_dirs = [\"plugins\"];\n"
                         "executors = {\n"
                         "  default = { plugin = \"good\"; };\n"
                         "  future = { plugin = \"abi2\"; };\n"
                         "};\n",
                         SY_SETUP_PLUGINS) > 0);
    EXPECT("switchyard.cfg:4: error: executor 'future': plugin 'abi2' is not loaded:",
           "abi2.so was refused", "ABI 2.0");
}

static void test_routes_file_list_and_types(void **state)
{
    fx *f = *state;
    free(th_write(f->dir, "r1.cfg",
                  "routes = { default = \"default\"; rules = ( { match = \"a::**\"; executor = \"default\"; } ); };\n"));
    free(th_write(f->dir, "r2.cfg",
                  "routes = { rules = ( { match = \"b::**\"; executor = \"default\"; } ); };\n"));
    assert_int_equal(open_cfg(f,
                              "routes = [\"r1.cfg\", \"r2.cfg\"];\n"
                              "executors = { default = { plugin = \"good\"; }; };\n",
                              0),
                     0);
    assert_int_equal(f->s.cfg.routes.n, 2);
    assert_non_null(strstr(f->s.cfg.routes.rules[1].file, "r2.cfg"));
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_true(open_cfg(f, "routes = 5;\nplugin_dirs = \"plugins\";\nstrict_plugins = 1;\n", 0) > 0);
    EXPECT("switchyard.cfg:1: error: 'routes' must be a file name");
    EXPECT("switchyard.cfg:2: error: 'plugin_dirs' must be a list");
    EXPECT("switchyard.cfg:3: error: 'strict_plugins' must be true or false");
}

static void test_limits(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f,
                              "max_context_bytes = 10;\n"
                              "max_recoveries = 5000;\n"
                              "lease = \"10ms\";\n",
                              0),
                     3);
    EXPECT("switchyard.cfg:1: error: 'max_context_bytes' must be an integer between 1024 and");
    EXPECT("switchyard.cfg:2: error: 'max_recoveries' must be an integer between 0 and 1000");
    EXPECT("switchyard.cfg:3: error: 'lease'", "at least 1s");
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_int_equal(open_cfg(f, "max_context_bytes = 4096;\nmax_recoveries = 0;\nlease = \"2s\";\n", 0),
                     0);
    assert_int_equal(f->s.cfg.max_context_bytes, 4096);
    assert_int_equal(f->s.cfg.max_recoveries, 0); /* written, so kept */
    assert_int_equal(f->s.cfg.lease_ms, 2000);
}

/* log.format: one error naming the field and the words it takes; "auto"
 * leaves the choice to where stderr goes. */
static void test_log_format(void **state)
{
    fx *f = *state;
    assert_int_equal(open_cfg(f, "log = { format = \"xml\"; };\nlog2 = 1;\n", 0), 2);
    EXPECT("switchyard.cfg:1: error: 'log.format' must be \"auto\", \"text\", \"journal\" or "
           "\"json\", not \"xml\"");
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_int_equal(open_cfg(f, "log = {\n  level = \"debug\";\n  format = 1;\n};\n", 0), 2);
    EXPECT("switchyard.cfg:2: error: unknown key 'log.level' (known: format)");
    EXPECT("switchyard.cfg:3: error: 'log.format' must be");
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_int_equal(open_cfg(f, "log = \"json\";\n", 0), 1);
    EXPECT("switchyard.cfg:1: error: 'log' must be a group");
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_int_equal(open_cfg(f, "log = { format = \"json\"; };\n", 0), 0);
    assert_true(f->s.cfg.log_format_set);
    assert_int_equal(f->s.cfg.log_format, SY_LOG_FORMAT_JSON);
    sy_setup_close(&f->s);
    sy_diags_free(&f->d);
    sy_diags_init(&f->d);
    assert_int_equal(open_cfg(f, "log = { format = \"auto\"; };\n", 0), 0);
    assert_false(f->s.cfg.log_format_set);
}

static void test_missing_routes_file(void **state)
{
    fx *f = *state;
    assert_true(open_cfg(f, "routes = \"absent.cfg\";\n", 0) > 0);
    EXPECT("absent.cfg", "error:");
}

/* A path with a newline (libconfig reads "\n") still gives one line. */
static void test_newline_in_routes_path(void **state)
{
    fx *f = *state;
    assert_true(open_cfg(f, "routes = \"a\\nb.cfg\";\n", 0) > 0);
    EXPECT("a b.cfg", "error:");
    char line[1024];
    for (size_t i = 0; i < f->d.n; i++)
        assert_null(strchr(sy_diag_format(&f->d.v[i], line, sizeof line),
                           '\n'));
}

static void test_implicit_default_needs_thread(void **state)
{
    fx *f = *state;
    /* No executors at all: `default` is implied with the thread plugin. */
    assert_int_equal(open_cfg(f, "store = \"sqlite::memory:\";\n", 0), 0);
    assert_int_equal(f->s.cfg.max_recoveries, 5);
    assert_int_equal(f->s.cfg.lease_ms, 30000);
    assert_int_equal(f->s.cfg.max_context_bytes, 16 << 20);
    const sy_instance_config *d = sy_config_instance(&f->s.cfg, "default");
    assert_non_null(d);
    assert_string_equal(d->plugin, "thread");
    assert_null(d->setting);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid),
        T(test_parse_error),
        T(test_missing_file),
        T(test_unknown_top_key),
        T(test_duplicate_instance),
        T(test_instance_errors),
        T(test_bad_instance_name),
        T(test_rule_unknown_instance),
        T(test_default_unknown_instance),
        T(test_missing_default),
        T(test_plugin_not_loaded),
        T(test_plugins_not_loaded_said_once),
        T(test_instance_settings_checked),
        T(test_create_failure),
        T(test_refused_plugin_warning_or_error),
        T(test_refused_named_hint),
        T(test_routes_file_list_and_types),
        T(test_limits),
        T(test_log_format),
        T(test_missing_routes_file),
        T(test_implicit_default_needs_thread),
        T(test_newline_in_routes_path),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
