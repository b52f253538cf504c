/* Workflow properties shared by the two workflow targets (wf_check.h). */
#include "wf_check.h"

#include <string.h>

#include "config/glob.h"
#include "fuzz.h"

static void check_graph(const sy_workflow *wf)
{
    size_t n = wf->n_tasks;
    size_t *pos = calloc(n ? n : 1, sizeof *pos);
    bool *seen = calloc(n ? n : 1, sizeof *seen);
    if (!pos || !seen)
        abort();
    for (size_t k = 0; k < n; k++) {
        size_t t = wf->topo[k];
        SY_FUZZ_CHECK(t < n && !seen[t], "topo[%zu] = %zu", k, t);
        seen[t] = true;
        pos[t] = k;
    }
    size_t deps = 0, children = 0;
    for (size_t i = 0; i < n; i++) {
        const sy_task_def *t = &wf->tasks[i];
        for (size_t j = 0; j < t->n_deps; j++) {
            SY_FUZZ_CHECK(t->deps[j] < n && t->deps[j] != i,
                          "task %zu depends on %zu", i, t->deps[j]);
            SY_FUZZ_CHECK(pos[t->deps[j]] < pos[i],
                          "task %zu comes before its dependency", i);
        }
        for (size_t j = 0; j < t->n_children; j++)
            SY_FUZZ_CHECK(t->children[j] < n, "task %zu has child %zu", i,
                          t->children[j]);
        deps += t->n_deps;
        children += t->n_children;
    }
    SY_FUZZ_CHECK(deps == children, "%zu dependencies, %zu children", deps,
                  children);
    free(pos);
    free(seen);
}

void sy_fuzz_check_workflow(const sy_workflow *wf)
{
    SY_FUZZ_CHECK(wf->name && wf->tenant && wf->definition, "parts missing");
    SY_FUZZ_CHECK(strlen(wf->hash) == 64 &&
                  strspn(wf->hash, "0123456789abcdef") == 64,
                  "hash \"%s\"", wf->hash);
    char why[256];
    for (size_t i = 0; i < wf->n_tasks; i++)
        SY_FUZZ_CHECK(sy_ns_validate(wf->tasks[i].ns, why, sizeof why) == 0,
                      "task namespace \"%s\": %s", wf->tasks[i].ns, why);
    check_graph(wf);
    char err[512] = "";
    sy_workflow *back = sy_workflow_from_json(wf->definition, err, sizeof err);
    SY_FUZZ_CHECK(back != NULL, "the canonical definition does not read "
                  "back: %s", err);
    SY_FUZZ_CHECK(strcmp(back->definition, wf->definition) == 0 &&
                  strcmp(back->hash, wf->hash) == 0 &&
                  back->n_tasks == wf->n_tasks,
                  "the definition changes when read back");
    sy_workflow_free(back);
}
