/* The strategy cancel_in_progress (engine/preempt.h): a task that finds
 * its key full has the key's oldest holder cancelled (its task ends
 * Cancelled with why, and is not retried), then takes the slot given
 * back; the key never holds more than its limit. */
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
#include "store/slots.h"
#include "store/store.h"

static const char *const ONE = "routes = { default = \"local\"; };";

static int64_t held(env *v, const char *key) { return pool_env_held(v, key, NULL); }

typedef struct { const char *id; sy_task_state st; uint32_t attempts; char err[512]; } row_arg;

static int find_row(void *arg, const sy_task_record *t)
{
    row_arg *a = arg;
    if (strcmp(t->task_id, a->id) == 0) {
        a->st = t->state;
        a->attempts = t->attempts;
        snprintf(a->err, sizeof a->err, "%s", t->error ? t->error : "");
    }
    return 0;
}

static row_arg row(env *v, const char *id)
{
    row_arg a = {id, 0, 0, ""};
    assert_int_equal(sy_store_list_tasks(v->store, v->run_id, find_row, &a), SY_OK);
    return a;
}

static void test_oldest_cancelled(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; retry = { attempts = 3; };\n"
                  "  limits = ( { key = \"db\"; limit = 1; strategy = \"cancel_in_progress\"; }"
                  " );\n"
                  "  tasks = ( { id = \"a\"; }, { id = \"b\"; } ); };\n",
                  ONE, 4, 0);
    /* a holds the key; b asked for a's cancel and waits. */
    assert_string_equal(pools[0].got, "a");
    assert_int_equal(held(&v, "key:db"), 1);
    pool_env_now += 1;
    turn(&v);
    /* a ended Cancelled, with why, not retried; b took its slot. */
    row_arg a = row(&v, "a");
    assert_int_equal(a.st, SY_TASK_CANCELLED);
    assert_int_equal(a.attempts, 1);
    assert_string_equal(a.err, "cancelled for a newer task on key:db (strategy "
                               "cancel_in_progress)");
    assert_string_equal(pools[0].got, "a b");
    assert_int_equal(held(&v, "key:db"), 1);
    assert_int_equal(row(&v, "b").st, SY_TASK_RUNNING);
    /* a's attempt, when its plugin ends it, changes nothing. */
    finish(&v, 0, "a");
    assert_int_equal(row(&v, "a").st, SY_TASK_CANCELLED);
    finish(&v, 0, "b");
    assert_int_equal(row(&v, "b").st, SY_TASK_COMPLETED);
    assert_int_equal(held(&v, "key:db"), 0);
    close_env(&v);
}

typedef struct { sy_task_state st; uint32_t attempts; char err[512]; int n; } elem_arg;

static int find_elem(void *arg, int64_t elem, const sy_task_record *t)
{
    elem_arg *a = arg;
    if (elem == 0) {
        a->st = t->state;
        a->attempts = t->attempts;
        snprintf(a->err, sizeof a->err, "%s", t->error ? t->error : "");
    }
    a->n++;
    return 0;
}

/* The oldest holder an element of a map: its attempt is cancelled as a
 * plain task's is, the element ends Cancelled with why, and its map,
 * as for any cancelled element, ends Cancelled. */
static void test_element_cancelled(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; retry = { attempts = 3; };\n"
                  "  limits = ( { key = \"db\"; limit = 1; strategy = \"cancel_in_progress\"; }"
                  " );\n"
                  "  tasks = ( { id = \"gate\"; limits = (); },\n"
                  "            { id = \"m\"; map_range = 1; },\n"
                  "            { id = \"b\"; after = [\"gate\"]; } ); };\n",
                  ONE, 4, 0);
    /* m's element 0 holds the key; b waits for gate. */
    assert_string_equal(pools[0].got, "gate m");
    assert_int_equal(held(&v, "key:db"), 1);
    /* b asks for the element's cancel; the host reads the request at
     * its next turn. */
    finish(&v, 0, "gate");
    pool_env_now += 1;
    turn(&v);
    elem_arg el = {0, 0, "", 0};
    assert_int_equal(sy_store_list_elements(v.store, v.run_id, 1, false, find_elem, &el), SY_OK);
    assert_int_equal(el.n, 1);
    assert_int_equal(el.st, SY_TASK_CANCELLED);
    assert_int_equal(el.attempts, 1);
    assert_string_equal(el.err, "cancelled for a newer task on key:db (strategy "
                                "cancel_in_progress)");
    /* b took the element's slot; the map ended Cancelled. */
    assert_string_equal(pools[0].got, "gate m b");
    assert_int_equal(held(&v, "key:db"), 1);
    assert_int_equal(row(&v, "b").st, SY_TASK_RUNNING);
    assert_int_equal(row(&v, "m").st, SY_TASK_CANCELLED);
    /* The element's attempt, when its plugin ends it, changes nothing. */
    finish(&v, 0, "m");
    assert_int_equal(row(&v, "m").st, SY_TASK_CANCELLED);
    finish(&v, 0, "b");
    assert_int_equal(row(&v, "b").st, SY_TASK_COMPLETED);
    assert_int_equal(held(&v, "key:db"), 0);
    close_env(&v);
}

/* queue, the default, cancels nobody. */
static void test_queue_cancels_nobody(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; limits = ( { key = \"db\"; limit = 1; } );\n"
                  "  tasks = ( { id = \"a\"; }, { id = \"b\"; } ); };\n",
                  ONE, 4, 0);
    assert_string_equal(pools[0].got, "a");
    pool_env_now += 1000;
    turn(&v);
    assert_string_equal(pools[0].got, "a");
    assert_int_equal(row(&v, "a").st, SY_TASK_RUNNING);
    finish(&v, 0, "a");
    assert_string_equal(pools[0].got, "a b");
    finish(&v, 0, "b");
    close_env(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oldest_cancelled),
        cmocka_unit_test(test_element_cancelled),
        cmocka_unit_test(test_queue_cancels_nobody),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
