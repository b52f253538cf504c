/*
 * executor/host_api.h -- the host's halves of the opaque handles in executor.h.
 *
 * Whoever submits a task (the dispatcher, the conformance kit, a test)
 * allocates a sy_completion, sets on_complete, and keeps it alive until that
 * callback has run and it has no further use for it.  The callback runs on
 * the plugin's thread, inside sy_host_api.complete: it must be short and
 * thread-safe (the dispatcher only queues the result).
 */
#ifndef SY_HOSTAPI_H
#define SY_HOSTAPI_H

#include <stdatomic.h>

#include <switchyard/executor.h>

struct sy_completion {
    /* Called once, on the completing thread, with the plugin's result
     * (valid only during the call). */
    void (*on_complete)(sy_completion *c, const sy_result *r);
    void *data;          /* the submitter's */
    atomic_int completed; /* set by the first complete(); a second is a
                             plugin bug, logged and ignored */
    const char *who;     /* instance name for messages; not owned */
};

struct sy_host {
    const char *name;                 /* instance name; not owned */
    void (*on_wake)(sy_host *h);      /* may be NULL; any thread */
    void *data;                       /* the owner's */
};

/* The table of host functions handed to every plugin (static storage). */
extern const sy_host_api sy_host_api_table;

/* Prepares a completion for one submit. */
void sy_completion_init(sy_completion *c, const char *who,
                        void (*on_complete)(sy_completion *, const sy_result *),
                        void *data);

#endif
