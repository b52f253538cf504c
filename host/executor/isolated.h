/*
 * executor/isolated.h -- `isolate_plugin = true`: an instance whose plugin runs in
 * a worker process of its own (switchyard-plugin-worker), so that its
 * crash costs only its own attempts.
 *
 * The host talks to it through a proxy that is an executor like any other:
 * the engine cannot tell.  Each call becomes a message (wire.h) on a
 * socket; a writer thread sends them, so submit() and cancel() never wait
 * for the worker; a reader thread turns the worker's messages back into
 * complete(), log() and wake().  When the worker dies, every attempt it
 * held fails with the cause ("killed by signal 11 (SIGSEGV)"), and a new
 * worker is started after a backoff (100 ms, doubling to 10 s, back to
 * 100 ms once a new worker completes a task); meanwhile the instance has
 * no capacity, and its tasks wait Ready.  A submit the worker's plugin
 * answers SY_EBUSY comes back DEFERRED (not charged).
 *
 * Threads: as executor.h says of any executor.
 */
#ifndef SY_EXECUTOR_ISOLATED_H
#define SY_EXECUTOR_ISOLATED_H

#include "executor/instance.h"
#include "executor/plugin.h"

/* Makes `e` (initialised from `plugin`, with its settings) an isolated
 * instance: its descriptor becomes the proxy's, its settings what the
 * worker is started with.  The plugin stays loaded in the host only for
 * its declarations. */
void sy_isolated_wrap(sy_instance_entry *e, const sy_plugin *plugin);

/* The worker program: $SWITCHYARD_PLUGIN_WORKER, or the installed one. */
const char *sy_isolated_worker_path(void);

#endif
