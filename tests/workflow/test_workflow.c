/* Unit tests for host/workflow*.c: workflow files from
 * $SY_TEST_DATA/workflows/ (tests/data/workflows/), whose planted errors
 * pin down FILE:LINE exactly; the graph (order, cycles); the canonical
 * definition, its hash and the way back from JSON; directories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/diagnostics.h"
#include "../helpers.h"
#include "base/util.h"
#include "workflow/workflow.h"
#include "workflow/internal.h"

static char *data_path(const char *name)
{
    const char *env = getenv("SY_TEST_DATA");
    if (env && *env)
        return sy_asprintf("%s/workflows/%s", env, name);
    char *dir = sy_path_dirname(__FILE__);
    char *out = sy_asprintf("%s/data/workflows/%s", dir, name);
    free(dir);
    return out;
}

typedef struct fixture {
    sy_diags d;
    sy_workflow *wf;
    char *tmp; /* scratch directory, made on demand */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    sy_diags_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sy_workflow_free(f->wf);
    sy_diags_free(&f->d);
    th_rmtree(f->tmp);
    free(f);
    return 0;
}

static int load_data(fixture *f, const char *name)
{
    char *path = data_path(name);
    int e = sy_workflow_load_file(path, NULL, NULL, &f->wf, &f->d);
    free(path);
    if (getenv("SY_TEST_VERBOSE"))
        th_diag_dump(&f->d);
    return e;
}

/* Writes `text` as NAME in the scratch directory and loads it into f->wf
 * (freeing the previous one). */
static int load_text(fixture *f, const char *name, const char *text)
{
    if (!f->tmp)
        f->tmp = th_mkdtemp();
    char *path = th_write(f->tmp, name, text);
    sy_workflow_free(f->wf);
    f->wf = NULL;
    int e = sy_workflow_load_file(path, NULL, NULL, &f->wf, &f->d);
    free(path);
    if (getenv("SY_TEST_VERBOSE"))
        th_diag_dump(&f->d);
    return e;
}

#define EXPECT(...)                                                  \
    do {                                                             \
        if (!th_diag_has(&f->d, __VA_ARGS__, (const char *)NULL)) {   \
            th_diag_dump(&f->d);                                     \
            fail_msg("diagnostic not found: %s", #__VA_ARGS__);      \
        }                                                            \
    } while (0)

static void assert_json_is(const json_t *v, const char *text)
{
    json_t *want = json_loads(text, JSON_DECODE_ANY, NULL);
    assert_non_null(want);
    bool eq = json_equal(v, want);
    json_decref(want);
    if (!eq) {
        char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        char msg[1024];
        snprintf(msg, sizeof msg, "got %s, want %s", got ? got : "(null)", text);
        free(got);
        fail_msg("%s", msg);
    }
}

static const sy_task_def *task(const sy_workflow *wf, const char *id)
{
    long i = sy_workflow_task_index(wf, id);
    if (i < 0)
        fail_msg("no task %s", id);
    return &wf->tasks[i];
}

/* --- a valid file -------------------------------------------------------------- */

static void test_valid_header(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    assert_int_equal(f->d.n, 0);
    const sy_workflow *wf = f->wf;
    assert_non_null(wf);
    assert_string_equal(wf->name, "ml::train");
    assert_string_equal(wf->tenant, "acme");
    assert_string_equal(wf->description, "trains and publishes");
    assert_string_equal(wf->schedule, "*/5 1-3,7 * 1-12/2 0-6");
    assert_true(sy_str_ends_with(wf->file, "workflows/valid.cfg"));
    char *dir = sy_path_dirname(wf->file), *real = realpath(dir, NULL);
    assert_string_equal(wf->base_dir, real);
    free(dir);
    free(real);
    assert_int_equal(wf->n_tasks, 4);
    assert_int_equal(strlen(wf->hash), 64);
    assert_int_equal(strspn(wf->hash, "0123456789abcdef"), 64);
    assert_non_null(wf->definition);
}

static void test_valid_tasks(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    const sy_workflow *wf = f->wf;
    static const char *const ids[] = {"extract", "load", "report", "cleanup"};
    static const int lines[] = {10, 11, 16, 20};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(wf->tasks[i].id, ids[i]);
        assert_int_equal(wf->tasks[i].line, lines[i]);
        assert_int_equal(sy_workflow_task_index(wf, ids[i]), (long)i);
        char *ns = sy_asprintf("acme::ml::train::%s", ids[i]);
        assert_string_equal(wf->tasks[i].ns, ns);
        free(ns);
        assert_int_equal(wf->topo[i], i);
    }
    assert_int_equal(sy_workflow_task_index(wf, "nope"), -1);
    assert_int_equal(sy_workflow_task_index(wf, NULL), -1);

    const sy_task_def *report = task(wf, "report");
    assert_int_equal(report->n_deps, 2);
    assert_int_equal(report->deps[0], 1); /* load, as written */
    assert_int_equal(report->deps[1], 0); /* extract */
    assert_int_equal(report->trigger, SY_TRIGGER_NONE_FAILED);
    const sy_task_def *extract = task(wf, "extract");
    assert_int_equal(extract->n_deps, 0);
    assert_int_equal(extract->n_children, 2);
    assert_int_equal(extract->children[0], 1);
    assert_int_equal(extract->children[1], 2);
    assert_int_equal(extract->trigger, SY_TRIGGER_ALL_SUCCESS);
    assert_int_equal(task(wf, "cleanup")->trigger, SY_TRIGGER_ALWAYS);
    assert_int_equal(task(wf, "cleanup")->n_children, 0);
}

static void test_valid_params(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    const sy_workflow *wf = f->wf;
    assert_json_is(task(wf, "extract")->params, "{\"command\":[\"./extract\",\"--full\"]}");
    assert_json_is(task(wf, "load")->params, "{\"function\":\"lib/libetl.so:load\"}");
    /* `description` is Switchyard's, not the executor's. */
    assert_json_is(task(wf, "report")->params,
                   "{\"gpus\":2,\"ratio\":0.5,\"opts\":{\"deep\":{\"list\":[1,\"two\",true]}}}");
    assert_json_is(task(wf, "cleanup")->params, "{}");
    for (const char *const *k = sy_workflow_task_keys; *k; k++)
        for (size_t i = 0; i < wf->n_tasks; i++)
            assert_null(json_object_get(wf->tasks[i].params, *k));
}

static void assert_retry(const sy_retry *r, uint32_t attempts, int64_t delay,
                         double backoff, int64_t cap, bool jitter, unsigned on)
{
    assert_int_equal(r->attempts, attempts);
    assert_int_equal(r->delay_ms, delay);
    assert_true(r->backoff == backoff);
    assert_int_equal(r->max_delay_ms, cap);
    assert_int_equal(r->jitter, jitter);
    assert_int_equal(r->retry_on, on);
}

/* The task's retry over the workflow's over the defaults, field by field. */
static void test_valid_retry_timeout(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    const sy_workflow *wf = f->wf;
    assert_retry(&task(wf, "extract")->retry, 3, 2000, 3.0, 60000, true, SY_RETRY_ON_TIMEOUT);
    assert_retry(&task(wf, "load")->retry, 5, 2000, 3.0, 60000, true, SY_RETRY_ON_TIMEOUT);
    assert_retry(&task(wf, "report")->retry, 3, 500, 1.0, 60000, false, 0);
    assert_int_equal(task(wf, "extract")->timeout_ms, 300000);
    assert_int_equal(task(wf, "load")->timeout_ms, 30000);
}

static void assert_cond(const sy_cond *c, const char *path, sy_cond_op op,
                        const char *value)
{
    assert_string_equal(c->path, path);
    assert_int_equal(c->op, op);
    assert_json_is(c->value, value);
}

static void test_valid_when(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    const sy_task_def *load = task(f->wf, "load");
    assert_int_equal(load->n_when, 3);
    assert_cond(&load->when[0], "mode", SY_COND_EQUALS, "\"full\"");
    assert_cond(&load->when[1], "$.rows", SY_COND_GREATER_THAN, "0");
    assert_cond(&load->when[2], "x.y", SY_COND_EXISTS, "true");
    const sy_task_def *cleanup = task(f->wf, "cleanup");
    assert_int_equal(cleanup->n_when, 3);
    assert_cond(&cleanup->when[0], "tags", SY_COND_CONTAINS, "\"nightly\"");
    assert_cond(&cleanup->when[1], "$", SY_COND_NOT_EQUALS, "{\"a\":1}");
    assert_cond(&cleanup->when[2], "n.0", SY_COND_LESS_THAN, "\"m\"");
    assert_int_equal(task(f->wf, "extract")->n_when, 0);
}

static void test_minimal_defaults(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "minimal.cfg"), 0);
    const sy_workflow *wf = f->wf;
    assert_string_equal(wf->tenant, "public");
    assert_null(wf->description);
    assert_null(wf->schedule);
    const sy_task_def *t = &wf->tasks[0];
    assert_string_equal(t->ns, "public::etl::only");
    assert_retry(&t->retry, 1, 1000, 2.0, 0, false, SY_RETRY_ON_FAILED | SY_RETRY_ON_TIMEOUT);
    assert_int_equal(t->timeout_ms, 0);
    assert_int_equal(t->trigger, SY_TRIGGER_ALL_SUCCESS);
    assert_int_equal(t->n_deps + t->n_children + t->n_when, 0);
    assert_json_is(t->params, "{}");
}

/* --- planted errors --------------------------------------------------------------- */

static void test_errors_header(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "errors.cfg"), 35);
    assert_null(f->wf);
    EXPECT("errors.cfg:3: error:", "invalid workflow name \"bad name!\"");
    EXPECT("errors.cfg:4: error:", "invalid tenant \"a::b\"");
    EXPECT("errors.cfg:5: error:", "schedule \"61 * * * *\"", "minute", "out of range 0-59");
    EXPECT("errors.cfg:6: error:", "unknown key 'colour' in workflow",
           "known: name, tenant, description, schedule, timezone, catchup, catchup_max, retry, "
           "timeout, tasks");
    EXPECT("errors.cfg:8: error:", "'attempts'", "from 1 to 1000");
    EXPECT("errors.cfg:9: error:", "'delay'", "bad duration \"fast\"");
    EXPECT("errors.cfg:10: error:", "'backoff'", ">= 1.0");
    EXPECT("errors.cfg:11: error:", "'jitter' must be true or false");
    EXPECT("errors.cfg:12: error:", "unknown word 'crash'", "valid: failed, timeout");
    EXPECT("errors.cfg:13: error:", "unknown key 'tries' in retry", "known: attempts");
    EXPECT("errors.cfg:15: error:", "'timeout' must not be negative");
    EXPECT("errors.cfg:16: error:", "'description' must be a string");
}

static void test_errors_tasks(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "errors.cfg"), 35);
    EXPECT("errors.cfg:19: error:", "duplicate task id 'a'", "first defined at line 18");
    EXPECT("errors.cfg:20: error:", "invalid task id \"b c\"");
    EXPECT("errors.cfg:21: error:", "task 4 has no 'id'");
    EXPECT("errors.cfg:22: error:", "task 'd'", "unknown task 'nope'");
    EXPECT("errors.cfg:23: error:", "task 'e' cannot run after itself");
    EXPECT("errors.cfg:24: error:", "task 'f'", "'after' must be a list of task ids");
    EXPECT("errors.cfg:25: error:", "task 'g'", "'after' entry 1 must be a task id");
    EXPECT("errors.cfg:26: error:", "unknown trigger 'sometimes'",
           "valid: all_success, all_done, all_failed, one_success, one_failed, "
           "none_failed, always");
    EXPECT("errors.cfg:27: error:", "'timeout'", "unknown unit");
    EXPECT("errors.cfg:35: error:", "'attempts'", "from 1 to 1000");
    EXPECT("errors.cfg:36: error:", "'retry' must be a group");
    EXPECT("errors.cfg:37: error:", "'timeout' must be a duration");
    EXPECT("errors.cfg:38: error:", "task 't' names 'a' twice in 'after'");
    EXPECT("errors.cfg:39: error:", "task 22 must be a group");
    EXPECT("errors.cfg:41: error:", "cycle: x -> y -> x");
}

static void test_errors_when(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "errors.cfg"), 35);
    EXPECT("errors.cfg:28: error:", "has both 'equals' and 'less_than'");
    EXPECT("errors.cfg:29: error:", "has no operator", "exists, equals, not_equals");
    EXPECT("errors.cfg:30: error:", "has no 'path'");
    EXPECT("errors.cfg:31: error:", "empty segment");
    EXPECT("errors.cfg:32: error:", "'exists' takes true or false");
    EXPECT("errors.cfg:33: error:", "unknown key 'colour' in when condition",
           "known: path, exists");
    EXPECT("errors.cfg:34: error:", "'when' must be a list of conditions");
    EXPECT("errors.cfg:40: error:", "take a number or a string");
}

/* Reported top to bottom, each once. */
static void test_errors_in_order(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "errors.cfg"), 35);
    assert_int_equal(f->d.n, 35);
    for (size_t i = 1; i < f->d.n; i++)
        assert_true(f->d.v[i - 1].line <= f->d.v[i].line);
}

static void test_cycle(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "cycle.cfg"), 1);
    assert_null(f->wf);
    EXPECT("cycle.cfg:5: error: cycle: a -> b -> c -> a");
}

static void test_small_files(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "syntax.cfg"), 1);
    EXPECT("syntax.cfg:4: error:", "syntax error");
    assert_int_equal(load_data(f, "empty_tasks.cfg"), 1);
    EXPECT("empty_tasks.cfg:3: error:", "'tasks' is empty");
    assert_int_equal(load_data(f, "noname.cfg"), 1);
    EXPECT("noname.cfg:1: error:", "workflow has no 'name'");
    assert_int_equal(load_data(f, "notop.cfg"), 2);
    EXPECT("notop.cfg:1: error:", "unknown key 'routes' in a workflow file", "known: workflow");
    EXPECT("notop.cfg: error:", "holds one group");
    assert_int_equal(load_data(f, "no-such-file.cfg"), 1);
    EXPECT("no-such-file.cfg: error: cannot read: No such file or directory");
    assert_null(f->wf);
}

static void test_more_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "a.cfg",
                               "workflow = {\n"
                               "  name = \"x\";\n"
                               "  description = \"\xff\xfe\";\n"
                               "  tasks = ( { id = \"a\"; blob = \"\xc3\x28\"; },\n"
                               "            { id = \"b\"; after = [\"a\"]; when = (\n"
                               "              { path = \"\"; equals = 1; },\n"
                               "              { path = \"$.\"; equals = 1; },\n"
                               "              { path = \"a\"; greater_than = true; } ); },\n"
                               "            { id = \"c\"; retry = { retry_on = \"failed\";"
                               " max_delay = -1; backoff = \"2\"; }; }\n"
                               "  );\n"
                               "};\n"),
                     8);
    EXPECT("a.cfg:3: error:", "'description' must be valid UTF-8");
    EXPECT("a.cfg:4: error:", "task 'a'", "not valid UTF-8");
    EXPECT("a.cfg:6: error:", "when condition 1", "path is empty");
    EXPECT("a.cfg:7: error:", "when condition 2", "nothing follows \"$.\"");
    EXPECT("a.cfg:8: error:", "when condition 3", "a number or a string");
    EXPECT("a.cfg:9: error:", "'retry_on' must be a list");
    EXPECT("a.cfg:9: error:", "'max_delay' must not be negative");
    EXPECT("a.cfg:9: error:", "'backoff' must be a number >= 1.0");
    assert_int_equal(load_text(f, "b.cfg",
                               "workflow = { name = \"x\"; tasks = 5;\n"
                               "  retry = { backoff = \"2\"; }; };\n"),
                     2);
    EXPECT("b.cfg:1: error:", "'tasks' must be a list of groups");
    EXPECT("b.cfg:2: error:", "'backoff' must be a number");
    assert_int_equal(load_text(f, "c.cfg", "workflow = { tasks = (); };\n"), 2);
    assert_int_equal(load_text(f, "d.cfg", "workflow = 3;\n"), 1);
    EXPECT("d.cfg:1: error:", "holds one group");
    assert_int_equal(load_text(f, "e.cfg",
                               "workflow = { name = \"a::::b\"; tasks = ( { id = \"t\"; } ); };\n"),
                     1);
    EXPECT("e.cfg:1: error:", "invalid workflow name \"a::::b\"");
    assert_int_equal(load_text(f, "f.cfg", "workflow = { name = \"ok\"; };\n"), 1);
    EXPECT("f.cfg:1: error:", "workflow has no 'tasks'");
    assert_null(f->wf);
}

static void test_cron(void **state)
{
    (void)state;
    static const char *const good[] = {
        "* * * * *", "0 0 * * *", "*/15 9-17 * * 1-5", "0,30 * 1,15 */2 7",
        "  5 4 * * *  ", "59 23 31 12 0", "0-59/5 0-23/2 1-31/10 1-12/3 0-7/7",
        "1,2,3-5,*/20 * * * *", "@daily", "@hourly", "0 9 * jan-MAR Mon-FRI",
    };
    static const struct {
        const char *expr, *needle;
    } bad[] = {
        {"* * * *", "must have 5 fields"},
        {"* * * * * *", "must have 5 fields"},
        {"", "must have 5 fields"},
        {"@dayly", "unknown macro"},
        {"@daily 5", "unknown macro"},
        {"60 * * * *", "minute field: \"60\" is out of range 0-59"},
        {"* 24 * * *", "hour field: \"24\" is out of range 0-23"},
        {"* * 0 * *", "day-of-month field"},
        {"* * * 13 *", "month field"},
        {"* * * * 8", "day-of-week field"},
        {"5-1 * * * *", "runs backwards"},
        {"*/0 * * * *", "step"},
        {"*/60 * * * *", "from 1 to 59"},
        {"5/10 * * * *", "needs '*' or a range"},
        {"a * * * *", "not a number"},
        {"1,,2 * * * *", "empty list item"},
        {"1, * * * *", "empty list item"},
        {"1- * * * *", "not a number"},
        {"*-5 * * * *", "is not *, n, a-b"},
        {"99999 * * * *", "out of range"},
        {"1-2-3 * * * *", "is not *, n, a-b"},
    };
    char buf[256];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        if (sy_cron_problem(good[i], buf, sizeof buf))
            fail_msg("\"%s\" refused: %s", good[i], buf);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *why = sy_cron_problem(bad[i].expr, buf, sizeof buf);
        if (!why || !strstr(why, bad[i].needle))
            fail_msg("\"%s\": got \"%s\", want \"%s\"", bad[i].expr, why ? why : "(accepted)",
                     bad[i].needle);
    }
}

/* `timezone`, `catchup`, `catchup_max`: read, kept through the stored
 * definition, and refused with FILE:LINE when wrong. */
static void test_schedule_policy(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "s.cfg",
                               "workflow = { name = \"s\"; schedule = \"@daily\";\n"
                               "  timezone = \"Europe/Berlin\"; catchup = \"all\";\n"
                               "  catchup_max = 7; tasks = ( { id = \"a\"; } ); };\n"),
                     0);
    assert_string_equal(f->wf->timezone, "Europe/Berlin");
    assert_int_equal(f->wf->catchup, SY_CATCHUP_ALL);
    assert_int_equal(f->wf->catchup_max, 7);
    char err[256] = "";
    sy_workflow *back = sy_workflow_from_json(f->wf->definition, err, sizeof err);
    if (!back)
        fail_msg("from_json: %s", err);
    assert_string_equal(back->timezone, "Europe/Berlin");
    assert_int_equal(back->catchup, SY_CATCHUP_ALL);
    assert_int_equal(back->catchup_max, 7);
    assert_string_equal(back->definition, f->wf->definition);
    sy_workflow_free(back);
    assert_int_equal(load_text(f, "d.cfg",
                               "workflow = { name = \"d\"; schedule = \"0 3 * * *\";\n"
                               "  tasks = ( { id = \"a\"; } ); };\n"),
                     0);
    assert_null(f->wf->timezone);
    assert_int_equal(f->wf->catchup, SY_CATCHUP_NONE);
    assert_int_equal(f->wf->catchup_max, SY_CATCHUP_MAX_DEFAULT);
    assert_int_equal(load_text(f, "bad.cfg",
                               "workflow = { name = \"b\"; schedule = \"0 3 * * *\";\n"
                               "  timezone = \"Europe/Atlantis\";\n"
                               "  catchup = \"some\";\n"
                               "  catchup_max = 0; tasks = ( { id = \"a\"; } ); };\n"),
                     3);
    EXPECT("bad.cfg:2: error:", "unknown time zone \"Europe/Atlantis\"");
    EXPECT("bad.cfg:3: error:", "unknown catchup \"some\"");
    EXPECT("bad.cfg:4: error:", "'catchup_max' must be an integer from 1 to");
    assert_int_equal(load_text(f, "alone.cfg",
                               "workflow = { name = \"b\";\n"
                               "  timezone = \"UTC\"; tasks = ( { id = \"a\"; } ); };\n"),
                     1);
    EXPECT("alone.cfg:2: error:", "'timezone' needs a 'schedule'");
}

/* --- check callback ----------------------------------------------------------------- */

typedef struct check_log {
    int calls;
    char seen[8][64];
} check_log;

static int check_fn(void *arg, const sy_workflow *wf, const sy_task_def *t,
                    const config_setting_t *setting, sy_diags *d)
{
    check_log *log = arg;
    assert_non_null(wf->name);
    assert_int_equal((int)config_setting_source_line(setting), t->line);
    snprintf(log->seen[log->calls++ % 8], 64, "%s@%d", t->ns, t->line);
    if (strcmp(t->id, "load") == 0 && json_object_get(t->params, "function")) {
        sy_error(d, config_setting_source_file(setting), t->line,
                 "executor refuses task %s", t->id);
        return 1;
    }
    return 0;
}

static int silent_check(void *arg, const sy_workflow *wf, const sy_task_def *t,
                        const config_setting_t *setting, sy_diags *d)
{
    (void)arg;
    (void)wf;
    (void)setting;
    (void)d;
    return strcmp(t->id, "report") == 0 ? 2 : 0;
}

static void test_check_callback(void **state)
{
    fixture *f = *state;
    char *path = data_path("valid.cfg");
    check_log log = {0};
    assert_int_equal(sy_workflow_load_file(path, check_fn, &log, &f->wf, &f->d), 1);
    assert_null(f->wf);
    assert_int_equal(log.calls, 4);
    assert_string_equal(log.seen[0], "acme::ml::train::extract@10");
    assert_string_equal(log.seen[3], "acme::ml::train::cleanup@20");
    EXPECT("valid.cfg:11: error: executor refuses task load");
    /* Errors counted but not reported still count. */
    assert_int_equal(sy_workflow_load_file(path, silent_check, NULL, &f->wf, &f->d), 2);
    assert_null(f->wf);
    free(path);
}

/* --- graph ----------------------------------------------------------------------------- */

/* Kahn's order takes the earliest task in the file among those ready. */
static void test_topo_stable(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "t.cfg",
                               "workflow = { name = \"t\"; tasks = (\n"
                               "  { id = \"c\"; after = [\"b\"]; },\n"
                               "  { id = \"a\"; },\n"
                               "  { id = \"b\"; after = [\"a\"]; },\n"
                               "  { id = \"d\"; },\n"
                               "  { id = \"e\"; after = [\"a\"]; },\n"
                               "  { id = \"f\"; after = [\"e\", \"c\"]; }\n"
                               "); };\n"),
                     0);
    static const char *const order[] = {"a", "b", "c", "d", "e", "f"};
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(f->wf->tasks[f->wf->topo[i]].id, order[i]);
    const sy_task_def *a = task(f->wf, "a");
    assert_int_equal(a->n_children, 2);
    assert_string_equal(f->wf->tasks[a->children[0]].id, "b");
    assert_string_equal(f->wf->tasks[a->children[1]].id, "e");
}

/* A random DAG written in shuffled order: the order must equal the
 * obvious quadratic one (always the earliest ready task in the file). */
static void test_topo_random(void **state)
{
    fixture *f = *state;
    enum { N = 300 };
    uint32_t seed = 4242;
    size_t rank_of[N], deps[N][4], n_deps[N];
    for (size_t i = 0; i < N; i++)
        rank_of[i] = i;
    for (size_t i = N - 1; i > 0; i--) { /* file position -> rank */
        seed = seed * 1103515245u + 12345u;
        size_t j = (seed >> 8) % (i + 1), t = rank_of[i];
        rank_of[i] = rank_of[j];
        rank_of[j] = t;
    }
    size_t pos_of[N];
    for (size_t i = 0; i < N; i++)
        pos_of[rank_of[i]] = i;
    size_t cap = (size_t)N * 96 + 128, off = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    off += (size_t)snprintf(text + off, cap - off, "workflow = { name = \"r\"; tasks = (\n");
    for (size_t i = 0; i < N; i++) {
        /* Edges only from lower rank to higher: acyclic. */
        n_deps[i] = 0;
        size_t r = rank_of[i];
        off += (size_t)snprintf(text + off, cap - off, "%s{ id = \"n%zu\"; after = [",
                                i ? "," : "", i);
        for (int k = 0; r > 0 && k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t dep = pos_of[(seed >> 8) % r];
            bool dup = false;
            for (size_t m = 0; m < n_deps[i]; m++)
                dup |= deps[i][m] == dep;
            if (dup)
                continue;
            deps[i][n_deps[i]++] = dep;
            off += (size_t)snprintf(text + off, cap - off, "%s\"n%zu\"",
                                    n_deps[i] > 1 ? "," : "", dep);
        }
        off += (size_t)snprintf(text + off, cap - off, "]; }\n");
    }
    snprintf(text + off, cap - off, "); };\n");
    assert_int_equal(load_text(f, "r.cfg", text), 0);
    free(text);
    bool placed[N] = {false};
    for (size_t step = 0; step < N; step++) {
        size_t pick = N;
        for (size_t i = 0; i < N && pick == N; i++) {
            bool ready = !placed[i];
            for (size_t m = 0; ready && m < n_deps[i]; m++)
                ready = placed[deps[i][m]];
            if (ready)
                pick = i;
        }
        assert_true(pick < N);
        assert_int_equal(f->wf->topo[step], pick);
        placed[pick] = true;
    }
}

/* A chain of n tasks written backwards; t0 comes after `first_after`. */
static char *chain_text(int n, const char *first_after)
{
    size_t cap = (size_t)n * 64 + 256, off = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    off += (size_t)snprintf(text + off, cap - off, "workflow = { name = \"chain\"; tasks = (\n");
    for (int i = n - 1; i > 0; i--)
        off += (size_t)snprintf(text + off, cap - off,
                                "{ id = \"t%d\"; after = [\"t%d\"]; },\n", i, i - 1);
    snprintf(text + off, cap - off, "{ id = \"t0\"; after = [%s]; }\n); };\n", first_after);
    return text;
}

/* Long enough that recursion or quadratic lookups would show. */
static void test_long_chain(void **state)
{
    fixture *f = *state;
    enum { N = 5000 };
    char *text = chain_text(N, "");
    assert_int_equal(load_text(f, "chain.cfg", text), 0);
    free(text);
    for (size_t i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof id, "t%zu", i);
        assert_string_equal(f->wf->tasks[f->wf->topo[i]].id, id);
    }
    /* Closing the chain makes one cycle through all of it. */
    text = chain_text(N, "\"t4999\"");
    assert_int_equal(load_text(f, "loop.cfg", text), 1);
    free(text);
    EXPECT("loop.cfg:2: error: cycle: t4999 -> t0 -> t1 -> ",
           " -> t10 -> ... (4976 more) -> t4987 -> ", " -> t4998 -> t4999");
}

/* --- definition, hash, JSON -------------------------------------------------------------- */

static void assert_same_workflow(const sy_workflow *a, const sy_workflow *b)
{
    assert_string_equal(a->definition, b->definition);
    assert_string_equal(a->hash, b->hash);
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->tenant, b->tenant);
    assert_string_equal(a->base_dir, b->base_dir);
    assert_int_equal(a->n_tasks, b->n_tasks);
    for (size_t i = 0; i < a->n_tasks; i++) {
        const sy_task_def *x = &a->tasks[i], *y = &b->tasks[i];
        assert_int_equal(a->topo[i], b->topo[i]);
        assert_string_equal(x->id, y->id);
        assert_string_equal(x->ns, y->ns);
        assert_int_equal(x->n_deps, y->n_deps);
        assert_memory_equal(x->deps, y->deps, x->n_deps * sizeof(size_t));
        assert_int_equal(x->n_children, y->n_children);
        assert_memory_equal(x->children, y->children, x->n_children * sizeof(size_t));
        assert_int_equal(x->trigger, y->trigger);
        assert_memory_equal(&x->retry, &y->retry, sizeof x->retry);
        assert_int_equal(x->timeout_ms, y->timeout_ms);
        assert_true(json_equal(x->params, y->params));
        assert_int_equal(x->n_when, y->n_when);
        for (size_t k = 0; k < x->n_when; k++) {
            assert_string_equal(x->when[k].path, y->when[k].path);
            assert_int_equal(x->when[k].op, y->when[k].op);
            assert_true(json_equal(x->when[k].value, y->when[k].value));
        }
    }
}

static void test_roundtrip(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    char err[256] = "";
    sy_workflow *back = sy_workflow_from_json(f->wf->definition, err, sizeof err);
    if (!back)
        fail_msg("from_json: %s", err);
    assert_same_workflow(f->wf, back);
    assert_null(back->file);
    assert_int_equal(back->tasks[0].line, 0);
    assert_string_equal(back->description, f->wf->description);
    assert_string_equal(back->schedule, f->wf->schedule);
    /* And once more from the rebuilt one. */
    sy_workflow *again = sy_workflow_from_json(back->definition, err, sizeof err);
    assert_non_null(again);
    assert_same_workflow(back, again);
    sy_workflow_free(again);
    sy_workflow_free(back);
}

/* Canonical text and its SHA-256, computed outside (sha256sum): task a
 * holds every default but its parameters, task b sets everything. */
static const char fixed_def[] =
    "{\"base_dir\":\"/srv/wf\",\"name\":\"etl\",\"tasks\":[{\"id\":\"a\","
    "\"params\":{\"command\":[\"./a\"]}},"
    "{\"after\":[\"a\"],\"id\":\"b\",\"retry\":{\"attempts\":2,"
    "\"backoff\":2.0,\"delay_ms\":1000,\"jitter\":false,\"max_delay_ms\":0,"
    "\"retry_on\":[\"failed\"]},\"timeout_ms\":5000,\"trigger\":\"all_done\","
    "\"when\":[{\"op\":\"equals\",\"path\":\"mode\",\"value\":\"full\"}]}],"
    "\"tenant\":\"public\",\"version\":2}";
static const char fixed_hash[] =
    "3236ff901979ccf21813a39c192c41f2da2885da53c0a8037233fa5f91fa6638";

/* The same workflow as version 1 wrote it, every member of every task
 * present: what stores written before version 2 hold. */
static const char fixed_def_v1[] =
    "{\"base_dir\":\"/srv/wf\",\"name\":\"etl\",\"tasks\":[{\"after\":[],\"id\":\"a\","
    "\"params\":{\"command\":[\"./a\"]},\"retry\":{\"attempts\":1,\"backoff\":2.0,"
    "\"delay_ms\":1000,\"jitter\":false,\"max_delay_ms\":0,\"retry_on\":[\"failed\","
    "\"timeout\"]},\"timeout_ms\":0,\"trigger\":\"all_success\",\"when\":[]},"
    "{\"after\":[\"a\"],\"id\":\"b\",\"params\":{},\"retry\":{\"attempts\":2,"
    "\"backoff\":2.0,\"delay_ms\":1000,\"jitter\":false,\"max_delay_ms\":0,"
    "\"retry_on\":[\"failed\"]},\"timeout_ms\":5000,\"trigger\":\"all_done\","
    "\"when\":[{\"op\":\"equals\",\"path\":\"mode\",\"value\":\"full\"}]}],"
    "\"tenant\":\"public\",\"version\":1}";

static void test_hash_known(void **state)
{
    (void)state;
    char err[256] = "";
    sy_workflow *wf = sy_workflow_from_json(fixed_def, err, sizeof err);
    if (!wf)
        fail_msg("from_json: %s", err);
    assert_string_equal(wf->definition, fixed_def);
    assert_string_equal(wf->hash, fixed_hash);
    assert_string_equal(wf->tasks[1].ns, "public::etl::b");
    assert_int_equal(wf->tasks[1].deps[0], 0);
    assert_int_equal(wf->tasks[0].children[0], 1);
    /* Spacing and key order do not matter: the text is rewritten. */
    json_t *j = json_loads(fixed_def, 0, NULL);
    char *pretty = json_dumps(j, JSON_INDENT(3));
    json_decref(j);
    sy_workflow *again = sy_workflow_from_json(pretty, err, sizeof err);
    assert_non_null(again);
    assert_string_equal(again->hash, fixed_hash);
    free(pretty);
    sy_workflow_free(again);
    sy_workflow_free(wf);
}

static void expect_json_error(const char *text, const char *needle);

/* A version 1 definition still reads, as the same workflow, and is
 * written back in today's form (so its hash is the version 2 one). */
static void test_definition_v1_reads(void **state)
{
    (void)state;
    char err[256] = "";
    sy_workflow *old = sy_workflow_from_json(fixed_def_v1, err, sizeof err);
    if (!old)
        fail_msg("from_json (version 1): %s", err);
    sy_workflow *now = sy_workflow_from_json(fixed_def, err, sizeof err);
    assert_non_null(now);
    assert_same_workflow(old, now);
    assert_string_equal(old->definition, fixed_def);
    assert_string_equal(old->hash, fixed_hash);
    assert_int_equal(old->tasks[0].retry.attempts, 1);
    assert_int_equal(old->tasks[0].trigger, SY_TRIGGER_ALL_SUCCESS);
    assert_int_equal(old->tasks[1].timeout_ms, 5000);
    sy_workflow_free(now);
    sy_workflow_free(old);
}

/* Version 2 leaves a default out; one written out anyway reads the same,
 * and a version the host does not know is refused. */
static void test_definition_v2_defaults(void **state)
{
    (void)state;
    char err[256] = "";
    static const char spelt[] =
        "{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"after\":[],\"id\":\"a\","
        "\"params\":{},\"timeout_ms\":0,\"trigger\":\"all_success\",\"when\":[]}],"
        "\"tenant\":\"public\",\"version\":2}";
    sy_workflow *wf = sy_workflow_from_json(spelt, err, sizeof err);
    if (!wf)
        fail_msg("from_json: %s", err);
    assert_string_equal(wf->definition,
                        "{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"id\":\"a\"}],"
                        "\"tenant\":\"public\",\"version\":2}");
    assert_true(json_is_object(wf->tasks[0].params));
    assert_int_equal(json_object_size(wf->tasks[0].params), 0);
    assert_memory_equal(&wf->tasks[0].retry, &sy_retry_default, sizeof sy_retry_default);
    assert_int_equal(wf->tasks[0].n_deps, 0);
    assert_int_equal(wf->tasks[0].n_when, 0);
    sy_workflow_free(wf);
    expect_json_error("{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"after\":[]}],"
                      "\"tenant\":\"public\",\"version\":2}",
                      "missing \"id\"");
    expect_json_error("{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"id\":\"a\","
                      "\"trigger\":\"most\"}],\"tenant\":\"public\",\"version\":2}",
                      "unknown trigger");
    expect_json_error("{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"id\":\"a\","
                      "\"params\":[]}],\"tenant\":\"public\",\"version\":2}",
                      "\"params\" must be an object");
    expect_json_error("{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"id\":\"a\","
                      "\"retry\":{}}],\"tenant\":\"public\",\"version\":2}",
                      "missing \"attempts\"");
    expect_json_error("{\"base_dir\":\"\",\"name\":\"d\",\"tasks\":[{\"id\":\"a\"}],"
                      "\"tenant\":\"public\",\"version\":3}",
                      "\"version\" must be an integer from 1 to 2");
}

/* The definition is written directly, not through a jansson tree; it must
 * stay exactly what json_dumps(JSON_COMPACT | JSON_SORT_KEYS) would write,
 * or stored hashes would change.  Strings needing every kind of escape,
 * reals of every magnitude, keys that sort by prefix, nesting. */
static const char awkward[] =
    "workflow = {\n"
    "  name = \"awk\"; description = \"quote \\\" slash / back \\\\ tab \\t nl \\n\";\n"
    "  retry = { backoff = 1.1; };\n"
    "  tasks = (\n"
    "    { id = \"a\"; note = \"ctl \\x01 \\x1f del \\x7f \xc3\xa9 \xe2\x9c\x93\";\n"
    "      a = 1; ab = 2; a_b = 3; A = 4; big = 3000000000L; neg = -42;\n"
    "      r = { tiny = 1e-7; huge = 1e300; tenth = 0.1; half = 0.5; zero = -0.0; };\n"
    "      list = (1, \"two\", true, false, 2.25, (\"x\"), { k = \"v\"; }, [1, 2]);\n"
    "      empty = {}; nothing = (); },\n"
    "    { id = \"b\"; after = [\"a\"]; trigger = \"all_done\"; retry = { backoff = 3.5; };\n"
    "      when = ( { path = \"a.\\\"q\\\"\"; equals = \"v\\\\\"; },\n"
    "               { path = \"a.n\"; greater_than = 1.25; } ); }\n"
    "  );\n"
    "};\n";

static void test_definition_is_canonical_json(void **state)
{
    fixture *f = *state;
    const char *texts[] = {awkward, NULL};
    for (int i = 0; texts[i]; i++) {
        assert_int_equal(load_text(f, "awk.cfg", texts[i]), 0);
        json_error_t e;
        json_t *j = json_loads(f->wf->definition, 0, &e);
        if (!j)
            fail_msg("definition is not JSON: %s", e.text);
        char *again = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(j);
        assert_non_null(again);
        assert_string_equal(f->wf->definition, again);
        free(again);
    }
    sy_workflow_free(f->wf);
    f->wf = NULL;
    assert_int_equal(load_data(f, "valid.cfg"), 0);
    json_t *j = json_loads(f->wf->definition, 0, NULL);
    char *again = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    assert_string_equal(f->wf->definition, again);
    free(again);
}

static const char hash_base[] =
    "# comment\n"
    "workflow = { name = \"h\"; tasks = (\n"
    "  { id = \"a\"; gpus = 2; image = \"x\"; },\n"
    "  { id = \"b\"; after = [\"a\"]; retry = { attempts = 2; }; }\n"
    "); };\n";

static void test_hash_changes(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "h.cfg", hash_base), 0);
    char base[65];
    strcpy(base, f->wf->hash);
    /* Same content, other comments, spacing and key order: same hash. */
    assert_int_equal(load_text(f, "h.cfg",
                               "workflow = {\n  tasks = (\n"
                               "    { image = \"x\"; gpus = 2; id = \"a\"; },  # first\n"
                               "    { retry = { attempts = 2; }; after = [\"a\"]; id = \"b\"; }\n"
                               "  );\n  name = \"h\";\n};\n"),
                     0);
    assert_string_equal(f->wf->hash, base);
    static const struct {
        const char *from, *to;
    } edits[] = {
        {"gpus = 2", "gpus = 3"},
        {"image = \"x\"", "image = \"y\""},
        {"attempts = 2", "attempts = 3"},
        {"name = \"h\";", "name = \"h2\";"},
        {"name = \"h\";", "name = \"h\"; description = \"d\";"},
        {"name = \"h\";", "name = \"h\"; tenant = \"other\";"},
        {"{ id = \"b\";", "{ id = \"b\"; trigger = \"all_done\";"},
        {"{ id = \"b\";", "{ id = \"b\"; timeout = 1;"},
        {"{ id = \"b\";", "{ id = \"b\"; when = ( { path = \"a\"; exists = true; } );"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        const char *p = strstr(hash_base, edits[i].from);
        assert_non_null(p);
        char *edited = sy_asprintf("%.*s%s%s", (int)(p - hash_base), hash_base, edits[i].to,
                                   p + strlen(edits[i].from));
        assert_int_equal(load_text(f, "h.cfg", edited), 0);
        if (strcmp(f->wf->hash, base) == 0)
            fail_msg("edit %zu (%s -> %s) kept the hash", i, edits[i].from, edits[i].to);
        free(edited);
    }
}

static void expect_json_error(const char *text, const char *needle)
{
    char err[256] = "";
    sy_workflow *wf = sy_workflow_from_json(text, err, sizeof err);
    if (wf) {
        sy_workflow_free(wf);
        fail_msg("accepted: %s", text);
    }
    if (!strstr(err, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err, needle);
}

/* `fixed_def_v1` (every member present: version 1 requires them) with the
 * first `from` replaced by `to`. */
static char *mutate(const char *from, const char *to)
{
    const char *p = strstr(fixed_def_v1, from);
    if (!p)
        fail_msg("no \"%s\" in the fixed definition", from);
    return sy_asprintf("%.*s%s%s", (int)(p - fixed_def_v1), fixed_def_v1, to,
                       p + strlen(from));
}

static void test_from_json_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to, *needle;
    } cases[] = {
        {"\"version\":1", "\"version\":3", "\"version\""},
        {"\"version\":1", "\"version\":0", "\"version\""},
        {"\"version\":1", "\"version\":\"1\"", "\"version\""},
        {",\"version\":1", "", "missing \"version\""},
        {"\"name\":\"etl\"", "\"name\":\"e tl\"", "invalid workflow name"},
        {"\"name\":\"etl\"", "\"name\":7", "\"name\" must be a string"},
        {"\"tenant\":\"public\"", "\"tenant\":\"a::b\"", "invalid tenant"},
        {"\"base_dir\":\"/srv/wf\",", "", "missing \"base_dir\""},
        {"\"base_dir\"", "\"extra\":1,\"base_dir\"", "unknown key \"extra\""},
        {"\"tenant\":\"public\"", "\"tenant\":\"public\",\"schedule\":\"* *\"", "5 fields"},
        {"\"id\":\"a\"", "\"id\":\"b\"", "duplicate task id 'b'"},
        {"\"id\":\"a\"", "\"id\":\"\"", "invalid id"},
        {"\"after\":[\"a\"]", "\"after\":[\"zz\"]", "unknown task 'zz'"},
        {"\"after\":[\"a\"]", "\"after\":[\"b\"]", "cannot run after itself"},
        {"\"after\":[\"a\"]", "\"after\":\"a\"", "\"after\" must be an array"},
        {"\"after\":[\"a\"]", "\"after\":[1]", "entry 1 must be a string"},
        {"\"after\":[]", "\"after\":[\"b\"]", "cycle: a -> b -> a"},
        {"\"trigger\":\"all_done\"", "\"trigger\":\"most\"", "unknown trigger"},
        {"\"op\":\"equals\"", "\"op\":\"like\"", "unknown operator"},
        {"\"op\":\"equals\"", "\"op\":\"exists\"", "'exists' takes true or false"},
        {"\"path\":\"mode\"", "\"path\":\"a..b\"", "empty segment"},
        {",\"value\":\"full\"", "", "missing \"value\""},
        {"\"when\":[{", "\"when\":[7,{", "entry 1 must be an object"},
        {"\"when\":[]", "\"when\":{}", "\"when\" must be an array"},
        {"\"attempts\":1", "\"attempts\":0", "\"attempts\""},
        {"\"attempts\":1", "\"attempts\":1001", "\"attempts\""},
        {"\"backoff\":2.0", "\"backoff\":0.5", "\"backoff\""},
        {"\"backoff\":2.0", "\"backoff\":\"2\"", "\"backoff\""},
        {"\"delay_ms\":1000", "\"delay_ms\":-1", "\"delay_ms\""},
        {"\"jitter\":false", "\"jitter\":0", "\"jitter\""},
        {"\"retry_on\":[\"failed\",", "\"retry_on\":[\"crash\",", "retry_on"},
        {"\"retry_on\":[\"failed\",\"timeout\"]", "\"retry_on\":\"failed\"", "retry_on"},
        {"\"timeout_ms\":0", "\"timeout_ms\":-5", "\"timeout_ms\""},
        {"\"timeout_ms\":0", "\"timeout_ms\":1.5", "\"timeout_ms\""},
        {"\"params\":{}", "\"params\":[]", "\"params\" must be an object"},
        {"\"params\":{}", "\"params\":{},\"params\":{}", "duplicate"},
        {",\"trigger\":\"all_success\"", "", "missing \"trigger\""},
        {"\"tasks\":[{", "\"tasks\":[3,{", "task 1 must be an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text = mutate(cases[i].from, cases[i].to);
        expect_json_error(text, cases[i].needle);
        free(text);
    }
    expect_json_error("", "not valid JSON");
    expect_json_error("[]", "not a JSON object");
    expect_json_error("{\"version\":1,\"name\":\"a\",\"tenant\":\"p\",\"base_dir\":\"\","
                      "\"tasks\":[]}",
                      "non-empty array");
    expect_json_error("\"x\"", "not valid JSON");
    char err[64] = "unchanged";
    assert_null(sy_workflow_from_json(NULL, err, sizeof err));
    assert_string_equal(err, "no definition");
    assert_null(sy_workflow_from_json("{", NULL, 0));
}

/* Every prefix of a good definition, and random byte edits of it, are
 * refused with a reason or read back into something that round-trips;
 * the sanitizers watch for the rest. */
static void test_from_json_garbage(void **state)
{
    (void)state;
    size_t len = strlen(fixed_def);
    char *buf = malloc(len + 1);
    assert_non_null(buf);
    char err[256];
    for (size_t n = 0; n < len; n++) {
        memcpy(buf, fixed_def, n);
        buf[n] = '\0';
        err[0] = '\0';
        sy_workflow *wf = sy_workflow_from_json(buf, err, sizeof err);
        if (wf)
            fail_msg("prefix of %zu bytes accepted", n);
        assert_true(err[0] != '\0');
    }
    static const char junk[] = "{}[]\",:0123456789.-eE truefalsnul\\u\xff\x01";
    uint32_t seed = 12345;
    int accepted = 0;
    for (int round = 0; round < 3000; round++) {
        memcpy(buf, fixed_def, len + 1);
        for (int k = 0; k < 1 + round % 3; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            buf[at] = junk[(seed >> 8) % (sizeof junk - 1)];
        }
        err[0] = '\0';
        sy_workflow *wf = sy_workflow_from_json(buf, err, sizeof err);
        if (!wf) {
            assert_true(err[0] != '\0');
            continue;
        }
        accepted++;
        sy_workflow *again = sy_workflow_from_json(wf->definition, err, sizeof err);
        assert_non_null(again);
        assert_string_equal(again->hash, wf->hash);
        sy_workflow_free(again);
        sy_workflow_free(wf);
    }
    /* Some edits (a digit, a letter in a string) leave it valid. */
    assert_true(accepted > 0);
    free(buf);
}

/* Positions an edit may touch without making a syntax error: characters
 * inside string literals, and digits.  (libconfig 1.5 leaks the string it
 * was scanning on some syntax errors, and syntax is libconfig's to check.) */
static size_t editable(const char *text, size_t *pos)
{
    size_t n = 0;
    bool in_str = false;
    for (size_t i = 0; text[i]; i++) {
        if (text[i] == '"') {
            in_str = !in_str;
            continue;
        }
        if (in_str || (text[i] >= '0' && text[i] <= '9'))
            pos[n++] = i;
    }
    return n;
}

/* Random edits of the values of the valid file: each load either reports
 * errors or yields a workflow that survives its own round trip. */
static void test_file_garbage(void **state)
{
    fixture *f = *state;
    char *path = data_path("valid.cfg");
    FILE *in = fopen(path, "r");
    free(path);
    assert_non_null(in);
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[len] = '\0';
    size_t pos[4096];
    size_t n_pos = editable(text, pos);
    static const char in_string[] = "abz019.:$-_ */,";
    uint32_t seed = 777;
    int good = 0, bad = 0;
    for (int round = 0; round < 300; round++) {
        char edited[4096];
        memcpy(edited, text, len + 1);
        for (int k = 0; k < 1 + round % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = pos[(seed >> 8) % n_pos];
            seed = seed * 1103515245u + 12345u;
            bool digit = text[at] >= '0' && text[at] <= '9';
            edited[at] = digit ? (char)('0' + (seed >> 8) % 10)
                               : in_string[(seed >> 8) % (sizeof in_string - 1)];
        }
        size_t before = f->d.errors;
        int e = load_text(f, "g.cfg", edited);
        assert_int_equal((size_t)e, f->d.errors - before);
        if (e) {
            assert_null(f->wf);
            bad++;
            continue;
        }
        good++;
        char err[256];
        sy_workflow *back = sy_workflow_from_json(f->wf->definition, err, sizeof err);
        if (!back)
            fail_msg("round %d: %s", round, err);
        assert_same_workflow(f->wf, back);
        sy_workflow_free(back);
    }
    assert_true(good > 0 && bad > 0);
}

/* --- directories ------------------------------------------------------------------------- */

static void free_list(sy_workflow **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sy_workflow_free(v[i]);
    free(v);
}

static void test_load_dir(void **state)
{
    fixture *f = *state;
    char *dir = data_path("dup");
    sy_workflow **v = NULL;
    size_t n = 0;
    assert_int_equal(sy_workflow_load_dir(dir, NULL, NULL, &v, &n, &f->d), 1);
    assert_int_equal(n, 2);
    assert_true(sy_str_ends_with(v[0]->file, "a_etl.cfg"));
    assert_true(sy_str_ends_with(v[1]->file, "c_acme.cfg"));
    assert_string_equal(v[1]->tenant, "acme");
    EXPECT("b_etl.cfg:3: error:", "workflow \"etl\" of tenant \"public\"",
           "already defined in ", "a_etl.cfg");
    /* Appending again: every one is now a duplicate. */
    assert_int_equal(sy_workflow_load_dir(dir, NULL, NULL, &v, &n, &f->d), 3);
    assert_int_equal(n, 2);
    free_list(v, n);
    free(dir);
}

static void test_load_dir_missing(void **state)
{
    fixture *f = *state;
    sy_workflow **v = NULL;
    size_t n = 0;
    char *dir = data_path("no-such-dir");
    assert_int_equal(sy_workflow_load_dir(dir, NULL, NULL, &v, &n, &f->d), 0);
    assert_int_equal(n, 0);
    assert_int_equal(f->d.warnings, 1);
    EXPECT("no-such-dir: warning: workflow directory does not exist");
    free(dir);
    /* A file where a directory should be is an error. */
    dir = data_path("valid.cfg");
    assert_int_equal(sy_workflow_load_dir(dir, NULL, NULL, &v, &n, &f->d), 1);
    EXPECT("valid.cfg: error: cannot read workflow directory");
    free(dir);
    free(v);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid_header),
        T(test_valid_tasks),
        T(test_valid_params),
        T(test_valid_retry_timeout),
        T(test_valid_when),
        T(test_minimal_defaults),
        T(test_errors_header),
        T(test_errors_tasks),
        T(test_errors_when),
        T(test_errors_in_order),
        T(test_cycle),
        T(test_small_files),
        T(test_more_errors),
        T(test_cron),
        T(test_check_callback),
        T(test_topo_stable),
        T(test_topo_random),
        T(test_long_chain),
        T(test_roundtrip),
        T(test_schedule_policy),
        T(test_definition_is_canonical_json),
        T(test_hash_known),
        T(test_definition_v1_reads),
        T(test_definition_v2_defaults),
        T(test_hash_changes),
        T(test_from_json_malformed),
        T(test_from_json_garbage),
        T(test_file_garbage),
        T(test_load_dir),
        T(test_load_dir_missing),
    };
#undef T
    return cmocka_run_group_tests_name("workflow", tests, NULL, NULL);
}
