/*
 * engine/process.h -- recording the process groups attempts run
 * (sy_host_api.attempt_process, ABI 1.2).
 *
 * A plugin reports a group from its own thread and waits there: the
 * request is queued to the loop, written in the loop's next batch (fenced
 * by the run's claim and the attempt's token, like every write of the
 * attempt), and answered once that batch has committed.  One call from
 * the loop thread itself (a plugin that starts a process inside submit())
 * is written at once, alone.  Every request is answered: with the
 * commit's status, SY_ESTATE when the attempt is no longer current or the
 * host lapsed, SY_EIO when the store failed; once the loop has stopped,
 * at once with SY_ESTATE.  A plugin that asks without waiting (1.3) is
 * answered by a call on the loop thread instead of a wake-up; the plugin
 * completes the attempt only after that call, so the request's attempt
 * is alive until it is answered.
 */
#ifndef SY_ENGINE_PROCESS_H
#define SY_ENGINE_PROCESS_H

#include "engine/internal.h"

/* Reads this machine's identity; the loop thread is the caller's. */
void sy_process_init(sy_engine *e);
void sy_process_free(sy_engine *e);

/* The sy_completion.on_process of every attempt: any thread.  With
 * `answer` (attempt_process_async, ABI 1.3) nobody waits: the request is
 * queued (SY_ENOMEM when it cannot be), and answer(arg, status) is called
 * on the loop thread once the batch that wrote it has committed (at once,
 * before this returns, from the loop thread itself). */
int sy_process_on_attempt(sy_completion *c, int64_t pgid, uint64_t start_time,
                          void (*answer)(void *arg, int status), void *arg);

/* Loop thread: whether requests wait. */
bool sy_process_pending(sy_engine *e);

/* Loop thread, inside the turn's batch: writes what waits. */
void sy_process_write(sy_engine *e, int64_t now);

/* Loop thread, after the batch: answers what was written, with `status`
 * when the commit failed (SY_OK: each request's own). */
void sy_process_answer(sy_engine *e, int status);

/* Answers every request, written or waiting, with `status`; with `close`,
 * later ones are answered at once with SY_ESTATE (the loop has
 * stopped). */
void sy_process_refuse_all(sy_engine *e, int status, bool close);

#endif
