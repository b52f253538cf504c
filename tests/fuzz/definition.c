/*
 * definition.c -- fuzz target: the canonical JSON definition a run keeps
 * in the store, read back by sy_workflow_from_json (a store written by an
 * older host, or damaged, must give a reason, never a crash).
 *
 * Input: the JSON text.  Properties: a refusal says why; an accepted
 * definition passes sy_fuzz_check_workflow.
 */
#include "fuzz.h"
#include "wf_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = sy_fuzz_str(data, size);
    char err[512] = "";
    sy_workflow *wf = sy_workflow_from_json(text, err, sizeof err);
    SY_FUZZ_CHECK(wf || err[0], "refused without a reason");
    if (wf)
        sy_fuzz_check_workflow(wf);
    sy_workflow_free(wf);
    free(text);
    return 0;
}
