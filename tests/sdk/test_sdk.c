/* libswitchyard-sdk.a's parts that both sides of the ABI use, on their
 * own: the parameter getters over JSON, the test host's bookkeeping,
 * libconfig groups as JSON and checked against declarations, durations,
 * and the descriptor checks of the loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <switchyard/config_json.h>
#include <switchyard/json_params.h>
#include <switchyard/loader.h>
#include <switchyard/sdk.h>
#include <switchyard/testhost.h>

static void test_json_params(void **state)
{
    (void)state;
    sy_host h;
    assert_int_equal(sy_sdk_test_host_init(&h, "t"), 0);
    const sy_host_api *api = sy_sdk_test_host_api();
    const sy_params *p = sy_sdk_test_host_params(
        &h, "{\"n\": 3, \"f\": 0.5, \"b\": true, \"s\": \"x\", "
            "\"d\": \"1m30s\", \"a\": [\"u\", 7], \"g\": {\"k\": 1}}");
    assert_non_null(p);
    assert_int_equal(api->param_type(p, "n"), SY_PARAM_INT);
    assert_int_equal(api->param_type(p, "g"), SY_PARAM_GROUP);
    assert_int_equal(api->param_type(p, "nope"), SY_PARAM_NONE);
    int64_t i = 0;
    double f = 0;
    int b = 0;
    const char *s = NULL;
    assert_int_equal(api->param_int(p, "n", &i), SY_OK);
    assert_int_equal(i, 3);
    assert_int_equal(api->param_int(p, "f", &i), SY_ETYPE);
    assert_int_equal(api->param_float(p, "n", &f), SY_OK);
    assert_true(f == 3.0);
    assert_int_equal(api->param_bool(p, "b", &b), SY_OK);
    assert_int_equal(b, 1);
    assert_int_equal(api->param_string(p, "missing", &s), SY_ENOENT);
    assert_int_equal(api->param_duration_ms(p, "d", &i), SY_OK);
    assert_int_equal(i, 90000);
    assert_int_equal(api->param_duration_ms(p, "s", &i), SY_EINVAL);
    size_t n = 0;
    assert_int_equal(api->param_array_len(p, "a", &n), SY_OK);
    assert_int_equal(n, 2);
    assert_int_equal(api->param_array_string(p, "a", 0, &s), SY_OK);
    assert_string_equal(s, "u");
    assert_int_equal(api->param_array_string(p, "a", 1, &s), SY_ETYPE);
    assert_int_equal(api->param_array_int(p, "a", 2, &i), SY_ERANGE);
    const sy_params *g = NULL;
    assert_int_equal(api->param_group(p, "g", &g), SY_OK);
    assert_int_equal(api->param_count(g), 1);
    assert_string_equal(api->param_name(g, 0), "k");
    assert_null(api->param_name(g, 1));
    char *json = api->param_json(g);
    assert_string_equal(json, "{\"k\":1}");
    api->free_string(json);
    assert_null(sy_sdk_test_host_params(&h, "[1]"));
    sy_sdk_test_host_fini(&h);
}

static void test_param_messages(void **state)
{
    (void)state;
    sy_host h;
    assert_int_equal(sy_sdk_test_host_init(&h, "t"), 0);
    const sy_host_api *api = sy_sdk_test_host_api();
    const sy_params *p = sy_sdk_test_host_params(&h, "{\"workers\": 0}");
    char err[128];
    int64_t v = -1;
    assert_int_equal(sy_sdk_param_int(api, p, "workers", 4, 1, 1024, &v, err,
                                      sizeof err),
                     SY_ERANGE);
    assert_string_equal(err, "workers: must be an integer between 1 and "
                             "1024, got 0");
    assert_int_equal(v, -1);
    assert_int_equal(sy_sdk_param_int(api, p, "queue", 16, 0, 10, &v, err,
                                      sizeof err),
                     SY_OK);
    assert_int_equal(v, 16);
    sy_sdk_test_host_fini(&h);
}

static int wakes_seen;

static void count_wake(sy_host *h)
{
    (void)h;
    wakes_seen++;
}

static void test_host_records(void **state)
{
    (void)state;
    sy_host h;
    sy_completion c, bad;
    assert_int_equal(sy_sdk_test_host_init(&h, "t"), 0);
    h.log_level = -1; /* the double completion below logs; keep it quiet */
    h.on_wake = count_wake;
    const sy_host_api *api = sy_sdk_test_host_api();
    sy_sdk_test_completion_init(&c, &h, NULL);
    sy_sdk_test_completion_init(&bad, &h, NULL);
    sy_sdk_complete_ok(api, &c, "{\"a\":1}");
    sy_sdk_complete_fail(api, &c, "twice");
    api->complete(&bad, NULL);
    api->wake(&h);
    assert_true(sy_sdk_test_host_wait(&h, 2, 1000));
    assert_false(sy_sdk_test_host_wait(&h, 3, 10));
    assert_int_equal(atomic_load(&h.completed), 2);
    assert_int_equal(atomic_load(&h.doubles), 1);
    assert_int_equal(atomic_load(&h.malformed), 1);
    assert_int_equal(atomic_load(&h.wakes), 1);
    assert_int_equal(wakes_seen, 1);
    assert_int_equal(atomic_load(&c.calls), 2);
    assert_int_equal(atomic_load(&c.outcome), SY_OUTCOME_SUCCEEDED);
    assert_string_equal(c.output, "{\"a\":1}");
    assert_null(c.error);
    assert_int_equal(atomic_load(&bad.outcome), SY_OUTCOME_FAILED);
    assert_non_null(strstr(bad.error, "plugin bug"));
    sy_sdk_test_completion_fini(&c);
    sy_sdk_test_completion_fini(&bad);
    sy_sdk_test_host_fini(&h);
}

typedef struct problems {
    int n;
    int line;
    char first[256];
} problems;

static void keep(void *arg, const char *file, int line, const char *msg)
{
    problems *p = arg;
    (void)file;
    if (p->n++ == 0) {
        p->line = line;
        snprintf(p->first, sizeof p->first, "%s", msg);
    }
}

static void test_config_json(void **state)
{
    (void)state;
    static const sy_param_spec workers = {sizeof(sy_param_spec), 0,
                                          "workers", SY_PARAM_INT, NULL};
    static const sy_param_spec grace = {sizeof(sy_param_spec),
                                        SY_PARAM_REQUIRED, "grace",
                                        SY_PARAM_DURATION, NULL};
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, "g = { plugin = \"x\";\n"
                                              "  workers = 2;\n"
                                              "  wrokers = 3;\n"
                                              "  list = (1, \"a\"); };"),
                     CONFIG_TRUE);
    const config_setting_t *g = config_lookup(&cfg, "g");
    static const char *const skip[] = {"plugin", NULL};
    json_t *o = sy_sdk_json_from_setting(g, skip);
    char *text = json_dumps(o, JSON_COMPACT);
    assert_string_equal(text, "{\"workers\":2,\"wrokers\":3,"
                              "\"list\":[1,\"a\"]}");
    free(text);
    json_decref(o);
    problems p = {0, 0, ""};
    static const sy_param_spec *const spec[] = {&workers, &grace, NULL};
    assert_int_equal(sy_sdk_params_check_setting(g, skip, spec, "x",
                                                 keep, &p),
                     3); /* wrokers, list, and no grace */
    assert_int_equal(p.line, 3);
    assert_string_equal(p.first, "x: unknown key 'wrokers' (known: plugin, "
                                 "workers, grace)");
    assert_int_equal(sy_sdk_params_check_setting(g, skip, NULL, "x", keep,
                                                 &p),
                     0);
    config_destroy(&cfg);
}

static void test_durations(void **state)
{
    (void)state;
    int64_t ms = -1;
    char err[128], buf[32];
    assert_int_equal(sy_sdk_duration_parse("1.5m", &ms, err, sizeof err),
                     SY_OK);
    assert_int_equal(ms, 90000);
    assert_int_equal(sy_sdk_duration_parse("5", &ms, err, sizeof err),
                     SY_EINVAL);
    assert_non_null(strstr(err, "missing unit"));
    assert_string_equal(sy_sdk_format_ms(5400250, buf, sizeof buf),
                        "1h30m250ms");
}

static int noop_create(const sy_host_api *api, sy_host *host,
                       const sy_params *config, sy_instance **out, char *err,
                       size_t err_len)
{
    (void)api, (void)host, (void)config, (void)out, (void)err, (void)err_len;
    return SY_EINVAL;
}

static void test_descriptor_check(void **state)
{
    (void)state;
    sy_executor d;
    memset(&d, 0, sizeof d);
    d.abi_major = SY_EXECUTOR_ABI_MAJOR;
    d.abi_minor = SY_EXECUTOR_ABI_MINOR;
    d.size = sizeof d;
    d.name = "ok-name";
    d.version = "1";
    d.create = noop_create;
    char err[256];
    assert_int_equal(sy_sdk_descriptor_check(&d, err, sizeof err), SY_EINVAL);
    assert_string_equal(err, "missing required function destroy()");
    d.name = "bad name";
    assert_int_equal(sy_sdk_descriptor_check(&d, err, sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "invalid plugin name 'bad name'"));
    d.abi_major = SY_EXECUTOR_ABI_MAJOR + 1;
    assert_int_equal(sy_sdk_descriptor_check(&d, err, sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "rebuild it against this host's SDK"));
    d.abi_major = SY_EXECUTOR_ABI_MAJOR;
    d.reserved = 1;
    assert_int_equal(sy_sdk_descriptor_check(&d, err, sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "sets the reserved descriptor field"));
    d.reserved = 0;
    d.size = 1; /* the pre-1.0 layout, read as 1.x */
    assert_int_equal(sy_sdk_descriptor_check(&d, err, sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "descriptor size 1 is too small for any "
                                "sy_executor"));
    sy_sdk_plugin p;
    assert_int_equal(sy_sdk_plugin_open(&p, "/nonexistent/x.so", err,
                                        sizeof err),
                     SY_ENOENT);
    assert_string_equal(err, "cannot resolve path: No such file or "
                             "directory");
    sy_sdk_plugin_close(&p);
}

/* The test host's emit_event (ABI 1.5): accepted events are kept in
 * order with their ids; a missing name and a payload that is not an
 * object are SY_EINVAL; emit_answer stands for the host's other answers. */
static void test_host_emits(void **state)
{
    (void)state;
    sy_host h;
    assert_int_equal(sy_sdk_test_host_init(&h, "t"), 0);
    const sy_host_api *api = sy_sdk_test_host_api();
    assert_true(SY_HOST_HAS(api, emit_event));
    char err[128];
    int64_t id = 0;
    assert_int_equal(api->emit_event(&h, "a.done", "k", "{\"n\": 1}x", 8, &id, err, sizeof err),
                     SY_OK);
    assert_int_equal(id, 1);
    assert_int_equal(api->emit_event(&h, "b", NULL, NULL, 0, &id, err, sizeof err), SY_OK);
    assert_int_equal(id, 2);
    assert_int_equal(api->emit_event(&h, "", NULL, NULL, 0, &id, err, sizeof err), SY_EINVAL);
    assert_string_equal(err, "no event name");
    assert_int_equal(api->emit_event(&h, "c", NULL, "[1]", 3, &id, err, sizeof err), SY_EINVAL);
    assert_string_equal(err, "the payload must be a JSON object");
    h.emit_answer = SY_ESTATE;
    assert_int_equal(api->emit_event(&h, "d", NULL, NULL, 0, &id, err, sizeof err), SY_ESTATE);
    assert_int_equal(atomic_load(&h.emits), 5);
    char *events = sy_sdk_test_host_events(&h);
    assert_string_equal(events, "[{\"name\":\"a.done\",\"key\":\"k\",\"data\":{\"n\":1}},"
                                "{\"name\":\"b\",\"key\":null,\"data\":{}}]");
    free(events);
    sy_sdk_test_host_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_params),
        cmocka_unit_test(test_param_messages),
        cmocka_unit_test(test_host_records),
        cmocka_unit_test(test_host_emits),
        cmocka_unit_test(test_config_json),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_descriptor_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
