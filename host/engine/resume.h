/*
 * engine/resume.h -- taking over an attempt that an earlier host started
 * and lost (executor ABI 1.4, sy_executor.resume): instead of abandoning
 * it and retrying the task, the host hands the same attempt number to the
 * plugin, which follows the work that still runs elsewhere (a cluster's
 * job) or starts it, keyed so, when none exists.  Loop thread only.
 */
#ifndef SY_ENGINE_RESUME_H
#define SY_ENGINE_RESUME_H

#include <stdbool.h>

#include "engine/internal.h"

/* Task idx of r, found Running when this host took the run: when the
 * instance it ran on (`ran_on`, as recorded; NULL: its route's) exists
 * here and its plugin resumes attempts, queues the take-over for the next
 * turn's submits and returns true.  The task stays Running; its row moves
 * to a new attempt token, naming this host, in the next batch.  `host`,
 * the one that lost it (may be NULL), is named in what follows.
 * False: nothing done, the caller abandons the attempt as before. */
bool sy_resume_offer(sy_live_run *r, size_t idx, const char *ran_on, const char *host);

/* The plugin took the take-over `a` (after the commit, in the submit
 * step): counted, and the run's events say "resumed" from that host. */
void sy_resume_taken(sy_attempt *a);

/* The plugin refused the take-over `a` with status rc and `err` (after
 * the commit, in the submit step): the attempt is abandoned as it would
 * have been without resume(), and the task retried.  The caller releases
 * `a`. */
void sy_resume_refused(sy_attempt *a, int rc, const char *err);

#endif
