/*
 * workflow.c -- fuzz target: a workflow file (libconfig) through
 * sy_workflow_load_file: names, tasks, `after`, cycles, durations, retry,
 * triggers, `when` conditions, schedules, then the canonical definition.
 *
 * Input: the file's text.  Properties: the result and the diagnostics
 * agree; an accepted workflow passes sy_fuzz_check_workflow (so the
 * stored JSON form reads back to the same definition and hash).
 */
#include "fuzz.h"
#include "wf_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sy_fuzz_reads_outside(data, size))
        return 0;
    const char *path = sy_fuzz_write("workflow.cfg", data, size);
    sy_workflow *wf = NULL;
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_workflow_load_file(path, NULL, NULL, &wf, &d);
    SY_FUZZ_CHECK((errors == 0) == (wf != NULL) &&
                  (errors == 0) == (d.errors == 0),
                  "%d errors, %zu reported, workflow %p", errors, d.errors,
                  (void *)wf);
    if (wf)
        sy_fuzz_check_workflow(wf);
    sy_fuzz_render(&d);
    sy_workflow_free(wf);
    sy_diags_free(&d);
    return 0;
}
