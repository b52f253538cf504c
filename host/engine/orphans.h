/*
 * engine/orphans.h -- killing what a dead host's attempts left running.
 *
 * A host killed with SIGKILL leaves its command processes running.  Before
 * the tasks it had Running are retried, the host that recovers them kills
 * the process groups their attempts recorded (engine/process.h), and waits
 * until they are gone, so that no task ever runs twice at once on this
 * machine.  What is killed is only ever the recorded group: its processes
 * whose start time is at or after the recorded leader's, on the same
 * machine and the same boot.  A pid reused since by an unrelated process
 * started before the record, so it is left alone; a reboot ended the group
 * already; another machine's groups cannot be reached from here (logged,
 * and the retry goes on: see docs/reliability.md).
 */
#ifndef SY_ENGINE_ORPHANS_H
#define SY_ENGINE_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/internal.h"

/* Loop thread, while loading run `r`: kills the groups recorded for the
 * current attempts of its Running tasks (`running[i]` says whether task i
 * was found Running) and waits, at most `wait_ms`, for them to be gone.
 * Returns how many processes were sent SIGKILL. */
size_t sy_orphans_kill(sy_engine *e, sy_live_run *r, const bool *running, int64_t wait_ms);

/* One recorded group on this machine: sends SIGKILL to every process of
 * group `pgid` that started at or after `start_time` (never when it is 0)
 * and waits at most `wait_ms` for them to be gone.  *killed (may be NULL)
 * gets how many were signalled; returns how many are left (0: none). */
size_t sy_orphans_kill_group(int64_t pgid, uint64_t start_time, int64_t wait_ms,
                             size_t *killed);

#endif
