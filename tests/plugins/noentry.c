/*
 * noentry.c -- a valid shared object with no sy_executor_entry: an
 * ordinary library dropped into a plugin directory by mistake.
 * Loader test fixture: the host must refuse it and say why.
 */
#include <switchyard/executor.h>

SY_EXPORT int sy_noentry_answer(void);

SY_EXPORT int sy_noentry_answer(void) { return 42; }
