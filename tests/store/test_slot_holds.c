/* A take carried by the write that starts its attempt (store/slots.h):
 * the holder is listed while the attempt runs and counted while its
 * claim lives, given back with the write that ends it, for a task and
 * for a map's element; a take no start write carried is listed and given
 * back as well; a cancel request names such a holder.  On both stores
 * the take lives in the attempt's row and no slot row is written
 * (checked in the store itself: SQLite's file, a PostgreSQL connection
 * of its own). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/preempt.h"
#include "store/slots.h"
#include "fixture.h"

#define NOW 100 /* inside h1's lease (claimed at 10 until 1000) */

static bool on_sqlite(void)
{
    return strncmp(fx_store_url, "sqlite:", 7) == 0;
}

/* What one integer query on the store answers: on SQLite read from its
 * file, on PostgreSQL on a connection of its own. */
static int64_t ask_store(const fx *f, const char *sql)
{
    if (!on_sqlite())
        return th_pg_int(fx_store_url, sql);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", f->dir, fx_store_url + 7);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

typedef struct {
    const char *key;
    int64_t live, dead;
    sy_slot_holder last;
    char owner[32];
} count_arg;

static int count_key(void *arg, const sy_slot_record *r)
{
    count_arg *c = arg;
    if (strcmp(r->key, c->key) == 0) {
        *(r->live ? &c->live : &c->dead) += r->n;
        c->last = r->holder;
        fx_copy(c->owner, sizeof c->owner, r->owner);
    }
    return 0;
}

static count_arg listed(sy_store *s, const char *key, int64_t now)
{
    count_arg c = {.key = key};
    OK(s, sy_store_list_slots(s, now, count_key, &c));
    return c;
}

/* What key's live holders hold, read as a take of its one slot would
 * read it: a key with no room is counted exactly (store/slots.h). */
static int64_t room(sy_store *s, const char *key, int64_t now)
{
    return fx_room(s, key, 1, now);
}

static sy_slot_take take_of(const fx *f, const char *key, uint32_t idx, int64_t elem)
{
    return (sy_slot_take){key, 10, 1, {f->run, idx, elem, 1}, f->h1.epoch, "public"};
}

static sy_task_record started(uint32_t idx)
{
    return (sy_task_record){.idx = idx, .state = SY_TASK_RUNNING, .attempts = 1,
                            .started = NOW, .fence = 1};
}

/* Takes `t` and starts task idx's attempt 1 in one batch. */
static void take_and_start(fx *f, const sy_slot_take *t, size_t n, uint32_t idx)
{
    bool put = false;
    sy_task_record r = started(idx);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_slots(f->a, "h1", t, n, NOW, &put));
    assert_true(put);
    OK(f->a, sy_store_update_task(f->a, f->run, &f->h1, 0, &r));
    OK(f->a, sy_store_commit(f->a));
}

/* Gives `t` back and writes task idx's end in one batch. */
static void give_back_and_end(fx *f, const sy_slot_take *t, size_t n, uint32_t idx)
{
    sy_task_record r = started(idx);
    r.state = SY_TASK_COMPLETED;
    r.finished = NOW + 1;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", t, n));
    OK(f->a, sy_store_update_task(f->a, f->run, &f->h1, 1, &r));
    OK(f->a, sy_store_commit(f->a));
}

/* A task's takes of two keys: listed with the attempt that took them,
 * counted by the other host too, gone with the attempt's end. */
static void test_task_hold(void **state)
{
    fx *f = *state;
    /* A key with what JSON escapes: read back by the other host. */
    static const char odd[] = "pool:\"g\\p/u\n\x01";
    sy_slot_take t[] = {take_of(f, "db:acme", 0, -1), take_of(f, odd, 0, -1)};
    take_and_start(f, t, 2, 0);
    count_arg c = listed(f->a, "db:acme", NOW);
    assert_int_equal(c.live, 1);
    assert_int_equal(c.last.run_id, f->run);
    assert_int_equal(c.last.idx, 0);
    assert_int_equal(c.last.elem, -1);
    assert_int_equal(c.last.token, 1);
    assert_string_equal(c.owner, "h1");
    assert_int_equal(listed(f->a, odd, NOW).live, 1);
    assert_int_equal(room(f->b, "db:acme", NOW), 1);
    assert_int_equal(room(f->b, odd, NOW), 1);
    /* In the task's row, no slot row. */
    assert_int_equal(ask_store(f, "SELECT count(*) FROM slots"), 0);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM tasks WHERE hold IS NOT NULL"), 1);
    give_back_and_end(f, t, 2, 0);
    assert_int_equal(listed(f->a, "db:acme", NOW).live, 0);
    assert_int_equal(listed(f->a, odd, NOW).live, 0);
    assert_int_equal(room(f->b, "db:acme", NOW), 0);
    assert_int_equal(room(f->b, odd, NOW), 0);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM tasks WHERE hold IS NOT NULL"), 0);
}

/* A map's element: the same, in the element's row on SQLite. */
static void test_element_hold(void **state)
{
    fx *f = *state;
    sy_slot_take t = take_of(f, "db:acme", 1, 1);
    sy_task_record r = started(1);
    bool put = false;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 1, 2));
    OK(f->a, sy_store_put_slots(f->a, "h1", &t, 1, NOW, &put));
    OK(f->a, sy_store_update_element(f->a, f->run, &f->h1, 0, 1, &r));
    OK(f->a, sy_store_commit(f->a));
    count_arg c = listed(f->a, "db:acme", NOW);
    assert_int_equal(c.live, 1);
    assert_int_equal(c.last.idx, 1);
    assert_int_equal(c.last.elem, 1);
    assert_int_equal(room(f->b, "db:acme", NOW), 1);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM slots"), 0);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM task_elements WHERE hold IS NOT NULL"),
                     1);
    r.state = SY_TASK_FAILED;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &t, 1));
    OK(f->a, sy_store_update_element(f->a, f->run, &f->h1, 1, 1, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(listed(f->a, "db:acme", NOW).live, 0);
    assert_int_equal(room(f->b, "db:acme", NOW), 0);
}

/* A turn's writes batched (sy_store_update_tasks, _elements): several
 * attempts holding one text (PostgreSQL sends it once), another text,
 * and a write that starts nothing; each row holds its own, and the
 * elements' rows inserted by the batch hold theirs too. */
static void test_batched_holds(void **state)
{
    fx *f = *state;
    sy_slot_take t[] = {take_of(f, "db:acme", 0, -1), take_of(f, "db:acme", 1, -1)};
    sy_slot_take e[] = {take_of(f, "db:acme", 1, 0), take_of(f, "db:other", 1, 1),
                        take_of(f, "db:acme", 1, 2)};
    sy_task_record r0 = started(0), r1 = started(1), el[3] = {started(1), started(1),
                                                               started(1)};
    sy_store_task_write w[] = {{f->run, &f->h1, 0, &r0}, {f->run, &f->h1, 0, &r1}};
    sy_store_element_write we[4];
    for (int i = 0; i < 3; i++)
        we[i] = (sy_store_element_write){f->run, &f->h1, 0, i, &el[i]};
    sy_task_record idle = {.idx = 1, .state = SY_TASK_READY};
    we[3] = (sy_store_element_write){f->run, &f->h1, 0, 3, &idle};
    fx_refusals refused = {.s = f->a};
    bool put = false;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 1, 4));
    OK(f->a, sy_store_put_slots(f->a, "h1", t, 2, NOW, &put));
    assert_true(put);
    OK(f->a, sy_store_put_slots(f->a, "h1", e, 3, NOW, &put));
    assert_true(put);
    OK(f->a, sy_store_update_tasks(f->a, w, 2, fx_note_refusal, &refused));
    OK(f->a, sy_store_update_elements(f->a, we, 4, fx_note_refusal, &refused));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(refused.n, 0);
    assert_int_equal(listed(f->a, "db:acme", NOW).live, 4);
    assert_int_equal(listed(f->a, "db:other", NOW).live, 1);
    assert_int_equal(room(f->b, "db:acme", NOW), 4);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM slots"), 0);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM tasks WHERE hold IS NOT NULL"), 2);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM task_elements WHERE hold IS NOT NULL"),
                     3);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM task_elements WHERE elem = 1 AND"
                                  " hold LIKE '%db:other%'"),
                     1);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM task_elements WHERE elem = 3 AND"
                                  " hold IS NULL"),
                     1);
}

/* A map of `elems` elements for task 1, and each element's take of
 * key[e] (one key for all when `one`) and its start write. */
static void elements_of(fx *f, size_t elems, char (*key)[16], bool one, sy_slot_take *t,
                        sy_task_record *r, sy_store_element_write *w)
{
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 1, elems));
    OK(f->a, sy_store_commit(f->a));
    for (size_t e = 0; e < elems; e++) {
        t[e] = take_of(f, key[one ? 0 : e], 1, (int64_t)e);
        r[e] = started(1);
        w[e] = (sy_store_element_write){f->run, &f->h1, 0, (int64_t)e, &r[e]};
    }
}

/* Takes t[0..n) and starts their elements (w) in one batch, refusing
 * none. */
static void take_and_start_elements(fx *f, const sy_slot_take *t,
                                    const sy_store_element_write *w, size_t n)
{
    fx_refusals refused = {.s = f->a};
    bool put = false;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_slots(f->a, "h1", t, n, NOW, &put));
    assert_true(put);
    OK(f->a, sy_store_update_elements(f->a, w, n, fx_note_refusal, &refused));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(refused.n, 0);
}

/* Many attempts' holds, more distinct ones than a store keeps built
 * (postgres/holds.c keeps 512, then begins again): the second batch
 * names first holds the first one built, then new ones past the 512, so
 * that a kept text and one built after the store began again meet in one
 * statement.  Each attempt's row names its own key. */
static void test_many_holds(void **state)
{
    fx *f = *state;
    enum { FIRST = 300, AGAIN = 10, NEW = 300, ELEMS = FIRST + AGAIN + NEW };
    static char keys[ELEMS][16];
    static sy_slot_take t[ELEMS];
    static sy_task_record r[ELEMS];
    static sy_store_element_write w[ELEMS];
    for (int e = 0; e < ELEMS; e++) {
        /* keys 0..299, then 0..9 again and 300..599 */
        int k = e < FIRST ? e : e < FIRST + AGAIN ? e - FIRST : e - AGAIN;
        snprintf(keys[e], sizeof keys[e], "k:%d", k);
    }
    elements_of(f, ELEMS, keys, false, t, r, w);
    take_and_start_elements(f, t, w, FIRST);
    take_and_start_elements(f, &t[FIRST], &w[FIRST], ELEMS - FIRST);
    char sql[320];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM task_elements WHERE hold = '{\"e\":%lld,\"k\":[[\"k:' ||"
             " (CASE WHEN elem < %d THEN elem WHEN elem < %d THEN elem - %d ELSE elem - %d"
             " END) || '\",1]]}'",
             (long long)f->h1.epoch, FIRST, FIRST + AGAIN, FIRST, AGAIN);
    assert_int_equal(ask_store(f, sql), ELEMS);
    assert_int_equal(listed(f->a, "k:7", NOW).live, 2);
    assert_int_equal(listed(f->a, "k:599", NOW).live, 1);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM slots"), 0);
}

/* A key's text at one address, taken by many attempts (a store may
 * keep the text it built for it), then changed in place for the next
 * batch: each attempt's row names the key as it was at its take. */
static void test_hold_key_reused(void **state)
{
    fx *f = *state;
    enum { ELEMS = 8 };
    char key[1][16];
    sy_slot_take t[ELEMS];
    sy_task_record r[ELEMS];
    sy_store_element_write w[ELEMS];
    elements_of(f, ELEMS, key, true, t, r, w);
    for (int b = 0; b < 2; b++) {
        snprintf(key[0], sizeof key[0], "db:%s", b ? "other" : "acme");
        take_and_start_elements(f, &t[b * ELEMS / 2], &w[b * ELEMS / 2], ELEMS / 2);
    }
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM task_elements WHERE hold = '{\"e\":%lld,\"k\":[[\"db:' ||"
             " (CASE WHEN elem < %d THEN 'acme' ELSE 'other' END) || '\",1]]}'",
             (long long)f->h1.epoch, ELEMS / 2);
    assert_int_equal(ask_store(f, sql), ELEMS);
    assert_int_equal(listed(f->a, "db:acme", NOW).live, ELEMS / 2);
    assert_int_equal(listed(f->a, "db:other", NOW).live, ELEMS / 2);
}

/* An attempt refused before its start write: its take is listed all the
 * same (a row of its own) and given back by it. */
static void test_take_without_start(void **state)
{
    fx *f = *state;
    sy_slot_take t = take_of(f, "db:acme", 1, -1);
    bool put = false;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_slots(f->a, "h1", &t, 1, NOW, &put));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(listed(f->a, "db:acme", NOW).live, 1);
    assert_int_equal(room(f->b, "db:acme", NOW), 1);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM slots"), 1);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &t, 1));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(listed(f->a, "db:acme", NOW).live, 0);
    assert_int_equal(room(f->b, "db:acme", NOW), 0);
    assert_int_equal(ask_store(f, "SELECT count(*) FROM slots"), 0);
}

/* Another host claims the run once h1's lease ends: h1's hold counts for
 * nothing at once, is listed as not live, and a give-back under the old
 * claim takes nothing off the new one's. */
static void test_hold_after_takeover(void **state)
{
    fx *f = *state;
    sy_slot_take t = take_of(f, "db:acme", 0, -1);
    take_and_start(f, &t, 1, 0);
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 1001, NULL, 0, &got));
    assert_true(got);
    assert_int_equal(room(f->b, "db:acme", 1500), 0);
    count_arg c = listed(f->b, "db:acme", 1500);
    assert_int_equal(c.live, 0);
    /* h2 takes the key for task 1; h1's late give-back changes nothing. */
    sy_store_fence h2 = {"h2", fx_epoch(f->b, f->run)};
    sy_slot_take t2 = {"db:acme", 10, 1, {f->run, 1, -1, 1}, h2.epoch, "public"};
    bool put = false;
    OK(f->b, sy_store_begin(f->b));
    OK(f->b, sy_store_put_slots(f->b, "h2", &t2, 1, 1500, &put));
    OK(f->b, sy_store_commit(f->b));
    assert_int_equal(room(f->b, "db:acme", 1500), 1);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &t, 1));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(room(f->b, "db:acme", 1500), 1);
}

/* Two handles taking under one claim (a host's store and its admin
 * API's, say): each sees the other's takes in the counts, never an old
 * copy of them. */
static void test_two_handles_one_claim(void **state)
{
    fx *f = *state;
    sy_slot_take t0 = take_of(f, "db:acme", 0, -1), t1 = take_of(f, "db:acme", 1, -1);
    bool put = false;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_slots(f->a, "h1", &t0, 1, NOW, &put));
    OK(f->a, sy_store_commit(f->a));
    OK(f->b, sy_store_begin(f->b));
    OK(f->b, sy_store_put_slots(f->b, "h1", &t1, 1, NOW, &put));
    OK(f->b, sy_store_commit(f->b));
    assert_int_equal(room(f->a, "db:acme", NOW), 2);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &t0, 1));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(room(f->b, "db:acme", NOW), 1);
    assert_int_equal(room(f->a, "db:acme", NOW), 1);
    OK(f->b, sy_store_begin(f->b));
    OK(f->b, sy_store_return_takes(f->b, "h1", &t1, 1));
    OK(f->b, sy_store_commit(f->b));
    assert_int_equal(room(f->a, "db:acme", NOW), 0);
}

typedef struct {
    int n;
    sy_slot_holder last;
    char why[32];
} cancels;

static int note_cancel(void *arg, const sy_cancel_request *r)
{
    cancels *c = arg;
    c->n++;
    c->last = r->holder;
    fx_copy(c->why, sizeof c->why, r->why);
    return 0;
}

/* cancel_in_progress names a holder whose take is in its attempt's row,
 * and the request goes with the attempt's end. */
static void test_cancel_request_on_hold(void **state)
{
    fx *f = *state;
    sy_slot_take t = take_of(f, "db:acme", 0, -1);
    take_and_start(f, &t, 1, 0);
    bool asked = false;
    OK(f->b, sy_store_begin(f->b));
    OK(f->b, sy_store_request_slot_cancel(f->b, "db:acme", NOW, "newer", &asked));
    OK(f->b, sy_store_commit(f->b));
    assert_true(asked);
    cancels seen = {0};
    OK(f->a, sy_store_list_cancel_requests(f->a, "h1", NOW, note_cancel, &seen));
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.last.idx, 0);
    assert_int_equal(seen.last.token, 1);
    assert_string_equal(seen.why, "newer");
    give_back_and_end(f, &t, 1, 0);
    seen.n = 0;
    OK(f->a, sy_store_list_cancel_requests(f->a, "h1", NOW, note_cancel, &seen));
    assert_int_equal(seen.n, 0);
}

#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
    const struct CMUnitTest sqlite[] = {
        BOTH(test_task_hold),           BOTH(test_element_hold),
        BOTH(test_take_without_start),  BOTH(test_hold_after_takeover),
        BOTH(test_cancel_request_on_hold), BOTH(test_two_handles_one_claim),
        BOTH(test_batched_holds),
        BOTH(test_many_holds),
        BOTH(test_hold_key_reused),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_task_hold),          PG(test_element_hold),
        PG(test_take_without_start), PG(test_hold_after_takeover),
        PG(test_cancel_request_on_hold), PG(test_two_handles_one_claim),
        PG(test_batched_holds), PG(test_many_holds),
        PG(test_hold_key_reused),
    };
    return fx_run_groups("store_slot_holds", sqlite, SY_ARRAY_LEN(sqlite), pg,
                         SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_slot_holds", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
