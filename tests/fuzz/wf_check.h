/*
 * wf_check.h -- properties every workflow the host accepts must have,
 * whichever format it came from (workflow.c and definition.c).
 */
#ifndef SY_FUZZ_WF_CHECK_H
#define SY_FUZZ_WF_CHECK_H

#include "workflow/workflow.h"

/* The graph is sound (topo a permutation that puts every dependency
 * first, children the mirror of deps), names are valid namespaces, the
 * hash is hex, and the canonical definition reads back to itself. */
void sy_fuzz_check_workflow(const sy_workflow *wf);

#endif
