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

static void keep(row_arg *a, const sy_task_record *t)
{
    a->st = t->state;
    a->attempts = t->attempts;
    snprintf(a->err, sizeof a->err, "%s", t->error ? t->error : "");
}

static int find_row(void *arg, const sy_task_record *t)
{
    row_arg *a = arg;
    if (strcmp(t->task_id, a->id) == 0)
        keep(a, t);
    return 0;
}

static row_arg row(env *v, const char *id)
{
    row_arg a = {id, 0, 0, ""};
    assert_int_equal(sy_store_list_tasks(v->store, v->run_id, find_row, &a), SY_OK);
    return a;
}

/* A workflow retrying 3 times whose tasks share key db of 1 slot, its
 * strategy cancel_in_progress (its tasks follow). */
#define CANCEL_DB \
    "workflow = { name = \"w\"; retry = { attempts = 3; };\n" \
    "  limits = ( { key = \"db\"; limit = 1; strategy = \"cancel_in_progress\"; } );\n"

static const char *const WHY = "cancelled for a newer task on key:db (strategy "
                               "cancel_in_progress)";

/* The holder `was` cancelled, b took its slot and ran to its end: the
 * holder's attempt, when its plugin ends it, changes nothing. */
static void b_took_the_slot(env *v, const char *got, const char *was)
{
    assert_string_equal(pools[0].got, got);
    assert_int_equal(held(v, "key:db"), 1);
    assert_int_equal(row(v, "b").st, SY_TASK_RUNNING);
    finish(v, 0, was);
    assert_int_equal(row(v, was).st, SY_TASK_CANCELLED);
    finish(v, 0, "b");
    assert_int_equal(row(v, "b").st, SY_TASK_COMPLETED);
    assert_int_equal(held(v, "key:db"), 0);
}

static void test_oldest_cancelled(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  CANCEL_DB
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
    assert_string_equal(a.err, WHY);
    b_took_the_slot(&v, "a b", "a");
    close_env(&v);
}

/* Element 0's row, and how many elements there are. */
typedef struct { row_arg row; int n; } elem_arg;

static int find_elem(void *arg, int64_t elem, const sy_task_record *t)
{
    elem_arg *a = arg;
    if (elem == 0)
        keep(&a->row, t);
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
                  CANCEL_DB
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
    elem_arg el = {{"m", 0, 0, ""}, 0};
    assert_int_equal(sy_store_list_elements(v.store, v.run_id, 1, false, find_elem, &el), SY_OK);
    assert_int_equal(el.n, 1);
    assert_int_equal(el.row.st, SY_TASK_CANCELLED);
    assert_int_equal(el.row.attempts, 1);
    assert_string_equal(el.row.err, WHY);
    /* The map ended Cancelled, saying why; b took the element's slot. */
    row_arg m = row(&v, "m");
    assert_int_equal(m.st, SY_TASK_CANCELLED);
    assert_string_equal(m.err, "1 of 1 elements did not run to their end; the first: [0] "
                               "cancelled for a newer task on key:db (strategy "
                               "cancel_in_progress)");
    b_took_the_slot(&v, "gate m b", "m");
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
