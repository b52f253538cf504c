/*
 * fake.h -- the engine's unit tests' harness: an in-memory executor (a
 * sy_executor descriptor, no dlopen), a fake clock, and an engine driving
 * one run of a workflow written inline, on a SQLite store in a temp dir.
 *
 * The fake executor reads these task parameters: `fail = true` fails every
 * attempt, `hold = true` keeps the attempt until fake_complete(),
 * `output = "{...}"` is what a success returns, `twice = true` completes
 * once more (with FAKE_SECOND_OUTPUT) right after the first, `huge = true`
 * claims an output of FAKE_HUGE_LEN bytes that are not there, and
 * `refuse = true` makes submit() fail without completing, and
 * `complete_then_refuse = true` completes and then fails submit().  Other
 * tasks succeed inside submit().  fake.busy > 0 answers that many submits
 * SY_EBUSY first.  Everything runs on the test's thread:
 * turning the loop (fake_turn) is the only way time passes.
 */
#ifndef SY_TEST_ENGINE_FAKE_H
#define SY_TEST_ENGINE_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "engine/engine.h"
#include "executor/instance.h"

#define FAKE_MAX 2048
#define FAKE_SECOND_OUTPUT "{\"second\": true}"
#define FAKE_HUGE_LEN ((size_t)1 << 40)

typedef struct fake_submission {
    sy_completion *c;
    char task_id[64];
    uint32_t attempt;
    bool done;
    char input[512];   /* the attempt's input context, as handed over */
    char output[512];  /* the `output` parameter: returned on success */
    char cancel_note[128]; /* the `cancel_note` parameter: the note of the
                              result cancel() completes with */
} fake_submission;

/* One resume() call: the attempt number and timeout it was handed. */
typedef struct fake_resumption {
    uint32_t attempt;
    int64_t timeout_ms;
} fake_resumption;

/* The fake plugin's state (one instance). */
typedef struct fake_plugin {
    const sy_host_api *api;
    sy_host *host;
    int64_t capacity;      /* SY_CAPACITY_UNLIMITED, or slots in all */
    int64_t in_flight;
    fake_submission subs[FAKE_MAX]; /* every submit, in order */
    size_t n_subs;
    size_t cancels[FAKE_MAX];       /* the submissions cancel() was called
                                       for (indices into subs) */
    size_t n_cancels;
    int busy;                       /* submits still to answer SY_EBUSY */
    uint32_t busy_attempts[FAKE_MAX]; /* the attempt numbers they carried */
    size_t n_busy;
    sy_completion *refused[FAKE_MAX]; /* tokens of submits refused */
    size_t n_refused;
    size_t n_deferred;              /* submits of `defer = true` tasks */
    fake_resumption resumes[FAKE_MAX]; /* resume() calls, in order */
    size_t n_resumes;
} fake_plugin;

extern fake_plugin fake;
extern const sy_executor fake_executor;
/* The same with resume() (ABI 1.4): `refuse_resume = true` refuses it,
 * otherwise it takes the attempt as submit() takes one. */
extern const sy_executor fake_executor_resuming;
/* The descriptor fake_open's instance gets from now on (NULL, the
 * default: fake_executor). */
extern const sy_executor *fake_descriptor;

/* The engine's clock in these tests; starts at a fixed time. */
extern int64_t fake_now;
int64_t fake_clock(void);

typedef struct fake_env {
    char *dir;
    sy_store *store;
    sy_workflow *wf;
    sy_instance_entry instance;
    uv_loop_t loop;
    sy_engine *engine;
    int64_t run_id;
} fake_env;

/* Loads `workflow` (libconfig text), records a run of it, makes the engine
 * (on the fake clock, instance "default" of the fake executor, owner
 * FAKE_OWNER) and adopts the run.  Resets the fake plugin first; set
 * fake.capacity after.  The lease is FAKE_LEASE_MS: the engine renews
 * leases on libuv's clock, which these tests do not move, so a test that
 * moves the fake clock further would find its lease lapsed. */
#define FAKE_OWNER "test:1"
#define FAKE_LEASE_MS ((int64_t)24 * 3600 * 1000)
void fake_open(fake_env *env, const char *workflow);

/* The engine's map_window for the engines fake_open makes from now on
 * (0: the engine's default). */
extern uint32_t fake_map_window;

/* The store the engines fake_open makes from now on use: a URL, or NULL
 * (the default) for a SQLite file in the test's temp dir. */
extern const char *fake_store_url;

/* fake_open with a lease of `lease_ms`; with `serve` the engine comes back
 * as a new host after its lease lapsed instead of stopping.  (Its timers
 * for polling and renewing start in sy_engine_run, which these tests never
 * call: they turn the loop themselves.) */
void fake_open_lease(fake_env *env, const char *workflow, int64_t lease_ms,
                     bool serve);
void fake_close(fake_env *env);

/* Turns the loop until nothing is left to do now (bounded). */
void fake_turn(fake_env *env);

/* Moves the fake clock forward, then turns the loop. */
void fake_advance(fake_env *env, int64_t ms);

/* Completes the held attempt of `task_id`, then turns the loop. */
void fake_complete(fake_env *env, const char *task_id, sy_outcome outcome);

/* Completes the held attempt `attempt` of `task_id` (of whichever engine
 * submitted it), without turning any loop. */
void fake_finish_attempt(const char *task_id, uint32_t attempt, sy_outcome outcome,
                         const char *output);

/* Completes the held attempt of `task_id` with `res` as the plugin wrote
 * it, then turns the loop. */
void fake_finish(fake_env *env, const char *task_id, const sy_result *res);

/* The plugin calls wake(): capacity freed. */
void fake_wake(void);

/* The input of the latest submit of `task_id` (fails the test when it
 * never was). */
const char *fake_input(const char *task_id);

/* How many submits `task_id` got. */
size_t fake_submits(const char *task_id);
size_t fake_cancels(const char *task_id);

/* A task's row, read from the store. */
typedef struct fake_row {
    sy_task_state state;
    uint32_t attempts;
    int64_t ready_at;
    char error[512];
} fake_row;
fake_row fake_task(fake_env *env, const char *task_id);
sy_task_state fake_state(fake_env *env, const char *task_id);
sy_run_state fake_run_state(fake_env *env);

#endif
