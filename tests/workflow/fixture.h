/*
 * tests/workflow/fixture.h -- one workflow file written to a temp dir and
 * loaded, with its diagnostics: the fixture the workflow readers' tests
 * (test_flow, test_map, test_task_cache) share.
 */
#ifndef SY_TESTS_WORKFLOW_FIXTURE_H
#define SY_TESTS_WORKFLOW_FIXTURE_H

#include "../helpers.h"
#include "base/diagnostics.h"
#include "workflow/workflow.h"

typedef struct th_wf_fixture {
    sy_diags d;      /* what the last load said */
    sy_workflow *wf; /* the last load's workflow, or NULL; owned */
    char *tmp;       /* the temp dir the file is written in; owned */
} th_wf_fixture;

/* cmocka's setup and teardown: *state is the fixture. */
int th_wf_setup(void **state);
int th_wf_teardown(void **state);

/* Writes `text` to NAME in the temp dir and loads it (the previous
 * workflow freed); the load's status.  SY_TEST_VERBOSE=1 dumps the
 * diagnostics. */
int th_wf_load(th_wf_fixture *f, const char *name, const char *text);

/* Loads `valid`, padded past the parse cache's 64 KiB floor, twice
 * through the parse cache: the first load a miss, the second a hit
 * without its text and with the same hash; `check` asserts each. */
void th_wf_cached_twice(th_wf_fixture *f, const char *valid,
                        void (*check)(const sy_workflow *wf));

/* The last load's stored definition read back by sy_workflow_from_json
 * (failing the test when it is refused) with the same hash; the caller
 * checks and frees it. */
sy_workflow *th_wf_read_back(th_wf_fixture *f);

/* Each of `bad` (n JSON texts) as the member `member` of task 1 of a
 * stored definition is refused by sy_workflow_from_json with an error
 * that holds `why`. */
void th_wf_refuses_member(const char *member, const char *const *bad, size_t n,
                          const char *why);

/* Fails the test unless a diagnostic holds every string given. */
#define EXPECT(...)                                                  \
    do {                                                             \
        if (!th_diag_has(&f->d, __VA_ARGS__, (const char *)NULL)) {   \
            th_diag_dump(&f->d);                                     \
            fail_msg("diagnostic not found: %s", #__VA_ARGS__);      \
        }                                                            \
    } while (0)

#endif
