/* The Waiting state (engine/waiting.h): a task that finds its key full is
 * Waiting in the store with what it waits for; the reason is written once,
 * not again when the task is offered and finds the key still full; it is
 * cleared when the task starts; the metrics count it by kind; a host that
 * takes the run over offers a Waiting task (or element) again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../helpers.h"
#include "pool_executor.h"
#include "base/util.h"
#include "engine/engine.h"
#include "engine/metrics.h"
#include "engine/waiting.h"
#include "store/store.h"

static const char *const ONE = "routes = { default = \"local\"; };";

static const char *const KEYED =
    "workflow = { name = \"w\"; limits = ( { key = \"db:{@workflow}\"; limit = 2; } );"
    " tasks = (\n"
    "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }, { id = \"d\"; }\n); };\n";

typedef struct {
    const char *id;
    sy_task_state st;
    char why[256];
    bool has_why;
} row_arg;

static int find_row(void *arg, const sy_task_record *t)
{
    row_arg *a = arg;
    if (strcmp(t->task_id, a->id) == 0) {
        a->st = t->state;
        a->has_why = t->waiting_for != NULL;
        snprintf(a->why, sizeof a->why, "%s", t->waiting_for ? t->waiting_for : "");
    }
    return 0;
}

static row_arg row_of(env *v, const char *id)
{
    row_arg a = {.id = id};
    assert_int_equal(sy_store_list_tasks(v->store, v->run_id, find_row, &a), SY_OK);
    return a;
}

/* Counts the Waiting events the engine writes for task `task`. */
typedef struct {
    const char *task;
    int waiting;
    char last[256];
} seen;

static void on_event(void *arg, const sy_engine_event *ev)
{
    seen *s = arg;
    if (ev->task && strcmp(ev->task, s->task) == 0 && strcmp(ev->state, "Waiting") == 0) {
        s->waiting++;
        snprintf(s->last, sizeof s->last, "%s", ev->waiting_for ? ev->waiting_for : "");
    }
}

static uint64_t waiting_keys(env *v)
{
    uint64_t n[SY_ENGINE_WAITING_KINDS];
    sy_engine_metrics_waiting(v->engine, n);
    assert_string_equal(sy_engine_waiting_kind(0), "key");
    assert_int_equal(n[1] + n[2] + n[3], 0); /* no pool, tenant or other */
    return n[0];
}

static void test_waiting_says_why_once(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v, KEYED, ONE, 4, 0);
    assert_string_equal(pools[0].got, "a b");
    row_arg c = row_of(&v, "c"), a = row_of(&v, "a");
    assert_int_equal(c.st, SY_TASK_WAITING);
    assert_string_equal(c.why, "waiting for key:db:w (2 of 2 held)");
    assert_int_equal(a.st, SY_TASK_RUNNING);
    assert_false(a.has_why);
    assert_int_equal(row_of(&v, "d").st, SY_TASK_WAITING);
    assert_int_equal(waiting_keys(&v), 2);

    /* a ends: c starts (its reason cleared); d is offered again, finds the
     * key full again, and nothing is written for it. */
    seen s = {.task = "d"};
    sy_engine_observe(v.engine, on_event, &s);
    finish(&v, 0, "a");
    assert_string_equal(pools[0].got, "a b c");
    c = row_of(&v, "c");
    assert_int_equal(c.st, SY_TASK_RUNNING);
    assert_false(c.has_why);
    assert_int_equal(row_of(&v, "d").st, SY_TASK_WAITING);
    assert_int_equal(s.waiting, 0);
    assert_int_equal(waiting_keys(&v), 1);

    finish(&v, 0, "b");
    finish(&v, 0, "c");
    finish(&v, 0, "d");
    assert_string_equal(pools[0].got, "a b c d");
    row_arg d = row_of(&v, "d");
    assert_int_equal(d.st, SY_TASK_COMPLETED);
    assert_false(d.has_why);
    assert_int_equal(waiting_keys(&v), 0);
    sy_engine_observe(v.engine, NULL, NULL);
    close_env(&v);
}

/* A Waiting task offered again when its key has room but its executor
 * has none says so, instead of naming the key it no longer waits for;
 * it starts when a worker is free. */
static void test_waiting_for_capacity(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v, KEYED, ONE, 4, 0);
    assert_string_equal(pools[0].got, "a b");
    assert_string_equal(row_of(&v, "c").why, "waiting for key:db:w (2 of 2 held)");
    pools[0].slots = 1; /* b alone fills the executor once a ends */
    finish(&v, 0, "a");
    assert_string_equal(pools[0].got, "a b");
    row_arg c = row_of(&v, "c");
    assert_int_equal(c.st, SY_TASK_WAITING);
    assert_string_equal(c.why, "waiting for capacity: executor 'local' is full");
    pools[0].slots = 4;
    finish(&v, 0, "b");
    assert_string_equal(pools[0].got, "a b c d");
    c = row_of(&v, "c");
    assert_int_equal(c.st, SY_TASK_RUNNING);
    assert_false(c.has_why);
    finish(&v, 0, "c");
    finish(&v, 0, "d");
    assert_int_equal(row_of(&v, "d").st, SY_TASK_COMPLETED);
    close_env(&v);
}

/* A host stopped with tasks Waiting: the next one offers them at once,
 * and they start as slots allow. */
static void test_waiting_taken_over(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v, KEYED, ONE, 4, 0);
    assert_string_equal(pools[0].got, "a b");
    assert_int_equal(row_of(&v, "d").st, SY_TASK_WAITING);
    pool_env_restart(&v);
    /* a and b were running on the old host: recovered and offered with
     * c and d; two hold the key, two wait. */
    assert_int_equal(pools[0].n_held, 2);
    int waiting = 0;
    static const char *const ids[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        row_arg r = row_of(&v, ids[i]);
        assert_true(r.st == SY_TASK_RUNNING || r.st == SY_TASK_WAITING);
        if (r.st == SY_TASK_WAITING) {
            waiting++;
            assert_string_equal(r.why, "waiting for key:db:w (2 of 2 held)");
        }
    }
    assert_int_equal(waiting, 2);
    for (int guard = 0; guard < 8 && pools[0].n_held; guard++) {
        char id[32];
        snprintf(id, sizeof id, "%s", pools[0].held[0].task_id);
        finish(&v, 0, id);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(row_of(&v, ids[i]).st, SY_TASK_COMPLETED);
    close_env(&v);
}

/* Cancelling the run skips its Waiting tasks as it does Ready ones. */
static void test_waiting_cancelled(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v, KEYED, ONE, 4, 0);
    assert_int_equal(row_of(&v, "c").st, SY_TASK_WAITING);
    assert_int_equal(sy_engine_cancel(v.engine, v.run_id, "cancelled on request"), SY_OK);
    turn(&v);
    row_arg c = row_of(&v, "c");
    assert_int_equal(c.st, SY_TASK_SKIPPED);
    assert_false(c.has_why);
    assert_int_equal(waiting_keys(&v), 0);
    close_env(&v);
}

/* What a reason is: its kind for the metrics, and whether two are the
 * same wait (the counts do not matter). */
static void test_reasons(void **state)
{
    (void)state;
    assert_int_equal(sy_waiting_kind_of("waiting for key:db (2 of 2 held)"), SY_WAITING_KEY);
    assert_int_equal(sy_waiting_kind_of("waiting for pool:gpu (4 of 4 held)"), SY_WAITING_POOL);
    assert_int_equal(sy_waiting_kind_of("waiting for tenant:a (1 of 1 held)"),
                     SY_WAITING_TENANT);
    assert_int_equal(sy_waiting_kind_of("waiting for keys"), SY_WAITING_OTHER);
    assert_int_equal(sy_waiting_kind_of("rate limit api: next token in 80ms"), SY_WAITING_OTHER);
    assert_int_equal(sy_waiting_kind_of(NULL), SY_WAITING_OTHER);
    assert_string_equal(sy_waiting_kind_name(SY_WAITING_TENANT), "tenant");
    assert_true(sy_waiting_same("waiting for key:db (2 of 2 held)",
                                "waiting for key:db (3 of 3 held)"));
    assert_true(sy_waiting_same("waiting for key:db (2 of 2 held)",
                                "waiting for key:db (being taken by another host)"));
    assert_false(sy_waiting_same("waiting for key:db (2 of 2 held)",
                                 "waiting for key:db2 (2 of 2 held)"));
    assert_false(sy_waiting_same("waiting for key:db", "waiting for key:d"));
    assert_true(sy_waiting_same("free text", "free text"));
    assert_false(sy_waiting_same(NULL, "x"));
    assert_true(sy_waiting_same(NULL, NULL));
}

/* A map's elements wait as tasks do, in their own rows; a host that
 * takes the run over offers them again. */
typedef struct {
    int waiting, running, completed;
    char why[256];
} elems;

static int count_element(void *arg, int64_t elem, const sy_task_record *t)
{
    (void)elem;
    elems *c = arg;
    c->waiting += t->state == SY_TASK_WAITING;
    c->running += t->state == SY_TASK_RUNNING;
    c->completed += t->state == SY_TASK_COMPLETED;
    if (t->state == SY_TASK_WAITING)
        snprintf(c->why, sizeof c->why, "%s", t->waiting_for ? t->waiting_for : "(null)");
    return 0;
}

static elems elements_of(env *v)
{
    elems c = {0};
    assert_int_equal(sy_store_list_elements(v->store, v->run_id, 0, false, count_element, &c),
                     SY_OK);
    return c;
}

static void test_elements_wait(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; tasks = ( { id = \"m\"; map_range = [0, 3];"
                  " limits = ( { key = \"k\"; limit = 1; } ); } ); };\n",
                  ONE, 4, 0);
    assert_int_equal(pools[0].n_held, 1);
    elems c = elements_of(&v);
    assert_int_equal(c.running, 1);
    assert_int_equal(c.waiting, 2);
    assert_string_equal(c.why, "waiting for key:k (1 of 1 held)");
    assert_int_equal(waiting_keys(&v), 2);
    pool_env_restart(&v);
    assert_int_equal(pools[0].n_held, 1);
    c = elements_of(&v);
    assert_int_equal(c.running, 1);
    assert_int_equal(c.waiting, 2);
    for (int guard = 0; guard < 8 && pools[0].n_held; guard++)
        finish(&v, 0, "m");
    c = elements_of(&v);
    assert_int_equal(c.completed, 3);
    assert_int_equal(row_of(&v, "m").st, SY_TASK_COMPLETED);
    close_env(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_waiting_says_why_once),
        cmocka_unit_test(test_waiting_for_capacity),
        cmocka_unit_test(test_waiting_taken_over),
        cmocka_unit_test(test_waiting_cancelled),
        cmocka_unit_test(test_elements_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
