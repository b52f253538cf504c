/*
 * nullentry.c -- its entry point declines to load (returns NULL).
 * Loader test fixture: the host must refuse it and say why.
 */
#include <switchyard/executor.h>

SY_EXPORT const sy_executor *sy_executor_entry(void) { return NULL; }
