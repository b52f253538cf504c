/* The workflow model once loaded: freeing it, finding a task by id. */
#include <stdlib.h>
#include <string.h>

#include "workflow/internal.h"
#include "workflow/start_trigger.h"

void sy_workflow_free(sy_workflow *wf)
{
    if (!wf)
        return;
    for (size_t i = 0; wf->tasks && i < wf->n_tasks; i++) {
        sy_task_def *t = &wf->tasks[i];
        free(t->id);
        free(t->ns);
        if (!wf->edges) {
            free(t->deps);
            free(t->children);
        }
        free(t->map);
        sy_flow_free(t->flow);
        sy_task_cache_free(t->cache);
        sy_conds_free(t->when, t->n_when);
        json_decref(t->params);
    }
    free(wf->tasks);
    sy_start_triggers_free(wf->triggers, wf->n_triggers);
    free(wf->name);
    free(wf->tenant);
    free(wf->description);
    free(wf->schedule);
    free(wf->timezone);
    free(wf->file);
    free(wf->base_dir);
    free(wf->topo);
    free(wf->edges);
    free(wf->definition);
    free(wf);
}

long sy_workflow_task_index(const sy_workflow *wf, const char *id)
{
    for (size_t i = 0; wf && id && i < wf->n_tasks; i++)
        if (wf->tasks[i].id && strcmp(wf->tasks[i].id, id) == 0)
            return (long)i;
    return -1;
}
