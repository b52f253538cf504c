/* The engine tests' harness: a fake executor, a fake clock, one run. */
#include "fake.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <cmocka.h>

#include "base/diagnostics.h"
#include "executor/host_api.h"
#include "../helpers.h"
#include "service/runs.h"
#include "store/store.h"
#include "workflow/workflow.h"

fake_plugin fake;
int64_t fake_now;
uint32_t fake_map_window;

int64_t fake_clock(void) { return fake_now; }

static int fake_create(const sy_host_api *api, sy_host *host, const sy_params *config,
                       sy_instance **out, char *err, size_t err_len)
{
    (void)config, (void)err, (void)err_len;
    fake.api = api;
    fake.host = host;
    *out = (sy_instance *)&fake;
    return SY_OK;
}

static void fake_destroy(sy_instance *inst) { (void)inst; }

static int64_t fake_capacity(sy_instance *inst)
{
    (void)inst;
    if (fake.capacity == SY_CAPACITY_UNLIMITED)
        return SY_CAPACITY_UNLIMITED;
    return fake.capacity > fake.in_flight ? fake.capacity - fake.in_flight : 0;
}

static bool flag(const sy_task *task, const char *key)
{
    int v = 0;
    return fake.api->param_bool(task->params, key, &v) == SY_OK && v;
}

static void finish(fake_submission *s, sy_outcome outcome, const char *error)
{
    s->done = true;
    fake.in_flight--;
    sy_result res = {.size = sizeof res, .outcome = outcome, .error = error};
    if (outcome == SY_OUTCOME_SUCCEEDED && s->output[0]) {
        res.output = s->output;
        res.output_len = strlen(s->output);
    }
    fake.api->complete(s->c, &res);
}

/* A success whose output_len claims far more than the buffer holds: only a
 * host that judges the length before reading gets through it. */
static void finish_huge(fake_submission *s)
{
    s->done = true;
    fake.in_flight--;
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = "{}",
                     .output_len = FAKE_HUGE_LEN};
    fake.api->complete(s->c, &res);
}

static int fake_submit(sy_instance *inst, const sy_task *task, sy_completion *c, char *err,
                       size_t err_len)
{
    (void)inst, (void)err, (void)err_len;
    if (fake.busy > 0) {
        fake.busy--;
        assert_true(fake.n_busy < FAKE_MAX);
        fake.busy_attempts[fake.n_busy++] = task->attempt;
        return SY_EBUSY;
    }
    if (flag(task, "refuse")) {
        assert_true(fake.n_refused < FAKE_MAX);
        fake.refused[fake.n_refused++] = c;
        return SY_EINVAL;
    }
    if (flag(task, "defer")) {
        fake.n_deferred++;
        sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_DEFERRED,
                         .error = "told to defer", .retry_after_ms = 1};
        fake.api->complete(c, &res);
        return SY_OK;
    }
    assert_true(fake.n_subs < FAKE_MAX);
    fake_submission *s = &fake.subs[fake.n_subs++];
    *s = (fake_submission){.c = c, .attempt = task->attempt};
    snprintf(s->task_id, sizeof s->task_id, "%s", task->task_id);
    /* The start of a long input (a map's reduce) is enough for a test. */
    snprintf(s->input, sizeof s->input, "%s", task->input);
    const char *output = NULL;
    const char *note = NULL;
    if (fake.api->param_string(task->params, "cancel_note", &note) == SY_OK) {
        assert_true(strlen(note) < sizeof s->cancel_note);
        strcpy(s->cancel_note, note);
    }
    if (fake.api->param_string(task->params, "output", &output) == SY_OK) {
        assert_true(strlen(output) < sizeof s->output);
        strcpy(s->output, output);
    }
    fake.in_flight++;
    /* Elements of a map (engine/map.h): `echo` answers with the item and
     * index it was given; `fail_index` fails that element, every time or
     * (`fail_once`) on its first attempt only. */
    json_t *in = json_loads(task->input, 0, NULL);
    /* Every attempt says which element it is (ABI 1.4): a map's elements
     * share their task id, and a plugin keys remote work by all four. */
    json_t *map_index = in ? json_object_get(in, "map_index") : NULL;
    assert_int_equal(task->element, map_index ? json_integer_value(map_index) : -1);
    int64_t fail_index = -1;
    fake.api->param_int(task->params, "fail_index", &fail_index);
    bool failing = in && json_integer_value(json_object_get(in, "map_index")) == fail_index &&
                   json_object_get(in, "map_index") &&
                   (!flag(task, "fail_once") || task->attempt == 1);
    if (in && flag(task, "echo")) {
        json_t *o = json_pack("{s:O,s:O}", "i", json_object_get(in, "map_index"), "item",
                              json_object_get(in, "item"));
        char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (text && strlen(text) < sizeof s->output)
            strcpy(s->output, text);
        free(text);
        json_decref(o);
    }
    json_decref(in);
    if (flag(task, "hold"))
        return SY_OK;
    if (failing) {
        finish(s, SY_OUTCOME_FAILED, "told to fail");
        return SY_OK;
    }
    if (flag(task, "complete_then_refuse")) {
        finish(s, SY_OUTCOME_SUCCEEDED, NULL);
        return SY_EINVAL;
    }
    if (flag(task, "huge")) {
        finish_huge(s);
        return SY_OK;
    }
    if (flag(task, "fail"))
        finish(s, SY_OUTCOME_FAILED, "told to fail");
    else
        finish(s, SY_OUTCOME_SUCCEEDED, NULL);
    if (flag(task, "twice")) {
        /* The bug under test: a second result for the same token. */
        sy_result again = {.size = sizeof again, .outcome = SY_OUTCOME_SUCCEEDED,
                           .output = FAKE_SECOND_OUTPUT,
                           .output_len = strlen(FAKE_SECOND_OUTPUT)};
        fake.api->complete(c, &again);
    }
    return SY_OK;
}

/* The held attempt behind completion c. */
static fake_submission *held(sy_completion *c, const char *task_id)
{
    for (size_t i = fake.n_subs; i-- > 0;) {
        fake_submission *s = &fake.subs[i];
        if (!s->done && (s->c == c || (task_id && strcmp(s->task_id, task_id) == 0)))
            return s;
    }
    return NULL;
}

/* As a plugin does: the cancelled attempt ends Cancelled. */
static int fake_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    fake_submission *s = held(c, NULL);
    if (!s)
        return SY_ENOENT;
    assert_true(fake.n_cancels < FAKE_MAX);
    fake.cancels[fake.n_cancels++] = (size_t)(s - fake.subs);
    if (s->cancel_note[0]) {
        s->done = true;
        fake.in_flight--;
        sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_CANCELLED,
                         .note = s->cancel_note};
        fake.api->complete(s->c, &res);
        return SY_OK;
    }
    finish(s, SY_OUTCOME_CANCELLED, NULL);
    return SY_OK;
}

/* The fake's descriptor; the resuming one adds resume() (ABI 1.4). */
#define FAKE_FIELDS                                                            \
    .abi_major = SY_EXECUTOR_ABI_MAJOR, .abi_minor = SY_EXECUTOR_ABI_MINOR,   \
    .size = sizeof(sy_executor), .name = "fake", .version = "1",              \
    .create = fake_create, .destroy = fake_destroy, .capacity = fake_capacity, \
    .submit = fake_submit, .cancel = fake_cancel

const sy_executor fake_executor = {FAKE_FIELDS};

/* resume() (ABI 1.4): `refuse_resume = true` refuses it; otherwise the
 * attempt is taken as a submit of the same number would be. */
static int fake_resume(sy_instance *inst, const sy_task *task, sy_completion *c, char *err,
                       size_t err_len)
{
    assert_true(fake.n_resumes < FAKE_MAX);
    fake.resumes[fake.n_resumes++] = (fake_resumption){task->attempt, task->timeout_ms};
    if (flag(task, "refuse_resume"))
        return snprintf(err, err_len, "the cluster says no"), SY_EIO;
    return fake_submit(inst, task, c, err, err_len);
}

const sy_executor fake_executor_resuming = {FAKE_FIELDS, .resume = fake_resume};
#undef FAKE_FIELDS

const sy_executor *fake_descriptor;
const char *fake_store_url;

void fake_open(fake_env *env, const char *workflow)
{
    fake_open_lease(env, workflow, FAKE_LEASE_MS, false);
}

void fake_open_lease(fake_env *env, const char *workflow, int64_t lease_ms, bool serve)
{
    memset(env, 0, sizeof *env);
    memset(&fake, 0, sizeof fake);
    fake.capacity = SY_CAPACITY_UNLIMITED;
    fake_now = 1700000000000; /* any fixed time */
    env->dir = th_mkdtemp();
    char *path = th_write(env->dir, "wf.cfg", workflow);
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_workflow_load_file(path, NULL, NULL, &env->wf, &d);
    if (errors)
        th_diag_dump(&d);
    sy_diags_free(&d);
    free(path);
    assert_int_equal(errors, 0);

    char url[4200], err[512];
    if (fake_store_url)
        snprintf(url, sizeof url, "%s", fake_store_url);
    else
        snprintf(url, sizeof url, "sqlite:%s/store.db", env->dir);
    assert_int_equal(sy_store_open(url, env->dir, &env->store, err, sizeof err), SY_OK);
    assert_int_equal(sy_runs_record(env->store, env->wf, "{}", &env->run_id, err, sizeof err),
                     SY_OK);

    sy_instance_init(&env->instance, SY_DEFAULT_INSTANCE,
                     fake_descriptor ? fake_descriptor : &fake_executor, NULL);
    assert_int_equal(sy_instance_create(&env->instance, err, sizeof err), SY_OK);
    assert_int_equal(uv_loop_init(&env->loop), 0);
    sy_engine_opts o = {
        .store = env->store,
        .instances = &env->instance,
        .n_instances = 1,
        .owner = FAKE_OWNER,
        .clock = fake_clock,
        .lease_ms = lease_ms,
        .max_recoveries = 5, /* the configuration's default */
        .map_window = fake_map_window,
        .serve = serve,
    };
    assert_int_equal(sy_engine_new(&env->engine, &env->loop, &o, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(env->engine, env->run_id, true, err, sizeof err), SY_OK);
}

void fake_close(fake_env *env)
{
    sy_engine_free(env->engine);
    assert_int_equal(uv_loop_close(&env->loop), 0);
    sy_instance_destroy(&env->instance);
    sy_store_close(env->store);
    sy_workflow_free(env->wf);
    th_rmtree(env->dir);
}

void fake_turn(fake_env *env)
{
    /* Each turn takes one step down the graph; a bound keeps a bug from
     * hanging the test. */
    for (int i = 0; i < 64; i++)
        uv_run(&env->loop, UV_RUN_NOWAIT);
}

void fake_advance(fake_env *env, int64_t ms)
{
    fake_now += ms;
    fake_turn(env);
}

void fake_complete(fake_env *env, const char *task_id, sy_outcome outcome)
{
    fake_submission *s = held(NULL, task_id);
    assert_non_null(s);
    finish(s, outcome, outcome == SY_OUTCOME_SUCCEEDED ? NULL : "told to end so");
    fake_turn(env);
}

void fake_finish_attempt(const char *task_id, uint32_t attempt, sy_outcome outcome,
                         const char *output)
{
    for (size_t i = 0; i < fake.n_subs; i++) {
        fake_submission *s = &fake.subs[i];
        if (s->done || s->attempt != attempt || strcmp(s->task_id, task_id) != 0)
            continue;
        if (output)
            snprintf(s->output, sizeof s->output, "%s", output);
        finish(s, outcome, outcome == SY_OUTCOME_SUCCEEDED ? NULL : "told to end so");
        return;
    }
    fail_msg("no held attempt %u of '%s'", attempt, task_id);
}

void fake_finish(fake_env *env, const char *task_id, const sy_result *res)
{
    fake_submission *s = held(NULL, task_id);
    assert_non_null(s);
    s->done = true;
    fake.in_flight--;
    fake.api->complete(s->c, res);
    fake_turn(env);
}

void fake_wake(void) { fake.api->wake(fake.host); }

const char *fake_input(const char *task_id)
{
    for (size_t i = fake.n_subs; i-- > 0;)
        if (strcmp(fake.subs[i].task_id, task_id) == 0)
            return fake.subs[i].input;
    fail_msg("'%s' was never submitted", task_id);
    return NULL;
}

size_t fake_submits(const char *task_id)
{
    size_t n = 0;
    for (size_t i = 0; i < fake.n_subs; i++)
        n += strcmp(fake.subs[i].task_id, task_id) == 0;
    return n;
}

size_t fake_cancels(const char *task_id)
{
    size_t n = 0;
    for (size_t i = 0; i < fake.n_cancels; i++)
        n += strcmp(fake.subs[fake.cancels[i]].task_id, task_id) == 0;
    return n;
}

struct find {
    const char *id;
    fake_row row;
    bool found;
};

static int find_task(void *arg, const sy_task_record *t)
{
    struct find *f = arg;
    if (strcmp(t->task_id, f->id) != 0)
        return 0;
    f->found = true;
    f->row.state = t->state;
    f->row.attempts = t->attempts;
    f->row.ready_at = t->ready_at;
    snprintf(f->row.error, sizeof f->row.error, "%s", t->error ? t->error : "");
    return 0;
}

fake_row fake_task(fake_env *env, const char *task_id)
{
    struct find f = {.id = task_id};
    assert_int_equal(sy_store_list_tasks(env->store, env->run_id, find_task, &f), SY_OK);
    if (!f.found)
        fail_msg("no task '%s' in run %lld", task_id, (long long)env->run_id);
    return f.row;
}

sy_task_state fake_state(fake_env *env, const char *task_id)
{
    return fake_task(env, task_id).state;
}

sy_run_state fake_run_state(fake_env *env)
{
    sy_run_record r;
    assert_int_equal(sy_store_get_run(env->store, env->run_id, &r), SY_OK);
    sy_run_state state = r.state;
    sy_run_record_clear(&r);
    return state;
}
