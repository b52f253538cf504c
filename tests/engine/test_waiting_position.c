/* A Waiting task's place in its key's queue and what the key's holders
 * hold, computed when read (service/runs.h, sy_runs_add_waiting): from
 * the store's waiter rows in grant order and the key's holders, while
 * the engine's stored reason keeps the counts first seen; the reason's
 * text gets them whatever its shape, and a text that names no key is
 * left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../helpers.h"
#include "pool_executor.h"
#include "engine/engine.h"
#include "service/runs.h"
#include "store/store.h"

static const char *const ONE = "routes = { default = \"local\"; };";

static const char *const KEYED =
    "workflow = { name = \"w\"; limits = ( { key = \"db:{@workflow}\"; limit = 1; } );"
    " tasks = (\n"
    "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }, { id = \"d\"; }\n); };\n";

/* The run as status reads it, each Waiting task placed. */
static json_t *view(env *v)
{
    json_t *run = NULL;
    char err[512] = "";
    assert_int_equal(sy_runs_status(v->store, v->run_id, 0, &run, err, sizeof err), SY_OK);
    assert_int_equal(sy_runs_add_waiting(v->store, NULL, pool_env_now, v->run_id,
                                         json_object_get(run, "tasks"), err, sizeof err),
                     SY_OK);
    return run;
}

static json_t *task(json_t *run, size_t idx)
{
    return json_array_get(json_object_get(run, "tasks"), idx);
}

static const char *why(json_t *run, size_t idx)
{
    return json_string_value(json_object_get(task(run, idx), "waiting_for"));
}

/* "P/N" from the task's fields, "-" for null, "absent" when none. */
static const char *place(json_t *run, size_t idx, char *buf, size_t len)
{
    json_t *p = json_object_get(task(run, idx), "waiting_position");
    json_t *n = json_object_get(task(run, idx), "waiting_count");
    if (!p || !n)
        snprintf(buf, len, "absent");
    else if (json_is_null(p) && json_is_null(n))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%lld/%lld", (long long)json_integer_value(p),
                 (long long)json_integer_value(n));
    return buf;
}

static const char *key(json_t *run, size_t idx)
{
    return json_string_value(json_object_get(task(run, idx), "waiting_key"));
}

/* The reason as the engine stored it. */
static int stored_of(void *arg, const sy_task_record *t)
{
    if (strcmp(t->task_id, "c") == 0)
        snprintf(arg, 256, "%s", t->waiting_for ? t->waiting_for : "");
    return 0;
}

static void test_place_is_current(void **state)
{
    (void)state;
    env v;
    char buf[32];
    pool_env_open(&v, KEYED, ONE, 4, 0);
    assert_string_equal(pools[0].got, "a");
    json_t *run = view(&v);
    assert_string_equal(place(run, 0, buf, sizeof buf), "absent"); /* a runs */
    assert_null(json_object_get(task(run, 0), "waiting_key"));
    assert_string_equal(place(run, 1, buf, sizeof buf), "1/3");
    assert_string_equal(place(run, 2, buf, sizeof buf), "2/3");
    assert_string_equal(place(run, 3, buf, sizeof buf), "3/3");
    assert_string_equal(key(run, 3), "key:db:w");
    assert_non_null(strstr(why(run, 2), "position 2 of 3 waiting)"));
    json_decref(run);
    char stored[256] = "";
    assert_int_equal(sy_store_list_tasks(v.store, v.run_id, stored_of, stored), SY_OK);

    /* a ends, b takes the key: c is first of 2 now, though its stored
     * reason is unchanged. */
    finish(&v, 0, "a");
    assert_string_equal(pools[0].got, "a b");
    run = view(&v);
    assert_string_equal(place(run, 1, buf, sizeof buf), "absent");
    assert_string_equal(place(run, 2, buf, sizeof buf), "1/2");
    assert_string_equal(place(run, 3, buf, sizeof buf), "2/2");
    assert_non_null(strstr(why(run, 2), "position 1 of 2 waiting)"));
    assert_null(strstr(why(run, 2), "of 3"));
    json_decref(run);
    char again[256] = "";
    assert_int_equal(sy_store_list_tasks(v.store, v.run_id, stored_of, again), SY_OK);
    assert_string_equal(again, stored);

    finish(&v, 0, "b");
    finish(&v, 0, "c");
    finish(&v, 0, "d");
    run = view(&v);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(place(run, i, buf, sizeof buf), "absent");
    json_decref(run);
    close_env(&v);
}

/* Reason texts of every shape (a store edited by hand included): c (first
 * of 2 once b holds the key) given each in turn. */
static void test_reason_shapes(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out, *key, *place;
    } cases[] = {
        {"waiting for key:db:w", "waiting for key:db:w (position 1 of 2 waiting)", "key:db:w",
         "1/2"},
        {"waiting for key:db:w (position 9 of 9 waiting)",
         "waiting for key:db:w (position 1 of 2 waiting)", "key:db:w", "1/2"},
        {"waiting for key:db:w (1 of 1 held)",
         "waiting for key:db:w (1 of 1 held; position 1 of 2 waiting)", "key:db:w", "1/2"},
        /* The count held is the key's now (b holds it), not the text's. */
        {"waiting for key:db:w (7 of 1 held)",
         "waiting for key:db:w (1 of 1 held; position 1 of 2 waiting)", "key:db:w", "1/2"},
        {"waiting for key:db:w (x of 1 held)",
         "waiting for key:db:w (x of 1 held; position 1 of 2 waiting)", "key:db:w", "1/2"},
        {"waiting for key:db:w (7 of held)",
         "waiting for key:db:w (7 of held; position 1 of 2 waiting)", "key:db:w", "1/2"},
        {"waiting for key:db:w (position 9 of 9 waiting) and more",
         "waiting for key:db:w (position 1 of 2 waiting) and more", "key:db:w", "1/2"},
        {"waiting for key:db:w (position", "waiting for key:db:w (position (position 1 of 2 "
         "waiting)", "key:db:w", "1/2"},
        {"waiting for key:other (1 of 1 held)", "waiting for key:other (1 of 1 held)",
         "key:other", "-"},
        {"waiting for rate:api (next token in 80 ms)",
         "waiting for rate:api (next token in 80 ms)", "rate:api", "-"},
        {"waiting for capacity: executor 'local' is full",
         "waiting for capacity: executor 'local' is full", NULL, "absent"},
        {"waiting for key: (1 of 1 held)", "waiting for key: (1 of 1 held)", "key:", "-"},
        {"waiting for ", "waiting for ", NULL, "absent"},
        {"waiting for  (x)", "waiting for  (x)", NULL, "absent"},
        {"held up by something", "held up by something", NULL, "absent"},
        {"", "", NULL, "absent"},
    };
    env v;
    char buf[32];
    pool_env_open(&v, KEYED, ONE, 4, 0);
    finish(&v, 0, "a");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *run = NULL;
        char err[512] = "";
        assert_int_equal(sy_runs_status(v.store, v.run_id, 0, &run, err, sizeof err), SY_OK);
        json_object_set_new(task(run, 2), "waiting_for", json_string(cases[i].in));
        /* b runs: never placed, whatever it says. */
        json_object_set_new(task(run, 1), "waiting_for", json_string(cases[i].in));
        assert_int_equal(sy_runs_add_waiting(v.store, NULL, pool_env_now, v.run_id,
                                             json_object_get(run, "tasks"), err, sizeof err),
                         SY_OK);
        assert_string_equal(why(run, 2), cases[i].out);
        if (cases[i].key)
            assert_string_equal(key(run, 2), cases[i].key);
        else
            assert_null(json_object_get(task(run, 2), "waiting_key"));
        assert_string_equal(place(run, 2, buf, sizeof buf), cases[i].place);
        /* With a waiter row, the key's holders now: b. */
        json_t *held = json_object_get(task(run, 2), "waiting_held");
        if (strcmp(cases[i].place, "1/2") == 0)
            assert_int_equal(json_integer_value(held), 1);
        else
            assert_null(held);
        assert_string_equal(place(run, 1, buf, sizeof buf), "absent");
        assert_string_equal(why(run, 1), cases[i].in);
        json_decref(run);
    }
    close_env(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_place_is_current),
        cmocka_unit_test(test_reason_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
