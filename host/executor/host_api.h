/*
 * executor/host_api.h -- the host's halves of the opaque handles in executor.h.
 *
 * Whoever submits a task (the dispatcher, a test) owns a sy_completion
 * record, prepares it with sy_completion_init and hands the plugin the
 * record's token (sy_completion_token), never the record's address.  The
 * token is an index and a generation packed into a pointer-sized value: the
 * host finds the record through its own slot table, so a plugin handing
 * back a stale, repeated, foreign or NULL token is refused without the
 * host ever reading memory the plugin named.  The record must stay alive
 * until sy_completion_retire has returned; after that its token is stale
 * for good (a slot is reused only under a new generation).
 *
 * The callback runs on the plugin's thread, inside sy_host_api.complete:
 * it must be short and thread-safe (the dispatcher only queues the result).
 */
#ifndef SY_HOSTAPI_H
#define SY_HOSTAPI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <switchyard/executor.h>

struct sy_completion {
    /* Called at most once, on the completing thread, with the plugin's
     * result (valid only during the call). */
    void (*on_complete)(sy_completion *c, const sy_result *r);
    void *data;          /* the submitter's */
    sy_host *host;       /* the instance misuse is charged to; may be NULL */
    const char *who;     /* instance name for messages; not owned */
    const char *ns;      /* the task's namespace for messages; may be NULL */
    sy_completion *token; /* what the plugin is given; NULL once retired */
    /* sy_host_api.attempt_process (1.2) and attempt_process_async (1.3)
     * for this submit: runs on the plugin's thread.  With `answer` NULL it
     * blocks until the record is durable and returns its status; else it
     * returns SY_OK once asked and calls answer(arg, status) later, once
     * (any other return: never).  NULL: the caller gets SY_ENOTSUP.  Set
     * after init by the submitter. */
    int (*on_process)(sy_completion *c, int64_t pgid, uint64_t start_time,
                      void (*answer)(void *arg, int status), void *arg);
};

struct sy_host {
    const char *name;                 /* instance name; not owned */
    void (*on_wake)(sy_host *h);      /* may be NULL; any thread */
    void *data;                       /* the owner's */
    const char *plugin;               /* the plugin's name; may be NULL */
    /* complete() calls refused for this instance (second, stale; any
     * thread).  Only the first is logged, so a plugin that misbehaves on
     * every task cannot flood the log. */
    atomic_uint_fast64_t refused;
    atomic_int refused_logged;
};

/* The table of host functions handed to every plugin (static storage). */
extern const sy_host_api sy_host_api_table;

/* Prepares a completion for one submit and mints its token.  `host` (may
 * be NULL) is charged with misuse of the token; `ns` names the task's
 * namespace in the message about it. */
void sy_completion_init(sy_completion *c, const char *who,
                        void (*on_complete)(sy_completion *, const sy_result *),
                        void *data);
void sy_completion_init_for(sy_completion *c, sy_host *host, const char *ns,
                            void (*on_complete)(sy_completion *, const sy_result *),
                            void *data);

/* The token to hand the plugin in submit() and cancel(). */
static inline sy_completion *sy_completion_token(const sy_completion *c)
{
    return c->token;
}

/* Invalidates the token; any complete() for it from now on is refused.
 * True when a complete() was accepted first: its on_complete has run or is
 * running, so the record is no longer only the caller's.  Idempotent. */
bool sy_completion_retire(sy_completion *c);

/* Stops charging misuse to `h` (its instance is going away): later refusals
 * of its tokens are counted as of an unknown instance. */
void sy_completion_forget_host(const sy_host *h);

/* complete() calls refused for instance `h`, or (h NULL) for tokens no
 * instance can be named for (NULL, foreign, long stale). */
uint64_t sy_completion_refused(const sy_host *h);

#endif
