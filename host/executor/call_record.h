/*
 * executor/call_record.h -- the plugin call in flight, written down before
 * it is made: what the watchdog reports when a call does not return, and
 * what the next start reads when the process died inside plugin code.
 *
 * Every call the host makes into a plugin on its loop (capacity, submit,
 * cancel) is bracketed by sy_call_begin() / sy_call_end().  The record is
 * one small struct in a file mapped into memory (or in plain memory when no
 * file was opened), so writing it costs a few stores and a copy of the
 * task's namespace, and it survives the process: the page is the kernel's
 * once written, whatever kills the process.  A fatal signal's handler adds
 * which loaded plugin the faulting instruction belongs to, so a crash on a
 * plugin's own thread is named too, and says it at once: one line on
 * stderr ("switchyard: fatal: SIGSEGV in plugin 'p' code (+0x1139), inside
 * call submit of plugin 'p', instance 'i', task t::w::a (run 4, attempt
 * 1); the process dies with it"), written with write() alone, before the
 * signal goes on to its previous handler (the default: the process dies
 * of it).
 *
 * Threads: begin/end from one thread at a time (the loop; setup and
 * teardown before and after it).  The watchdog (watchdog.h) reads the
 * record from its own thread.  Registration of plugins: the setup thread,
 * before the loop starts.
 */
#ifndef SY_EXECUTOR_CALL_RECORD_H
#define SY_EXECUTOR_CALL_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "executor/instance.h"

/* What a record says, as read back (the previous process's, or the live
 * one's for the watchdog).  Strings are truncated copies. */
typedef struct sy_call_snapshot {
    pid_t pid;            /* the process that wrote it */
    char owner[96];       /* its host id ("host:pid") */
    bool in_call;         /* a call was in flight */
    uint64_t seq;         /* calls begun so far */
    int64_t started_ns;   /* CLOCK_MONOTONIC of the call's start */
    char plugin[64], instance[64], call[16];
    char ns[256];         /* the task's namespace; "" when the call has none */
    int64_t run_id;       /* 0 when the call has no task */
    uint32_t idx, attempt;
    char fault[192];      /* set by the fatal-signal handler; "" otherwise */
    char fault_plugin[64]; /* the plugin whose code the fault was in; ""
                              when not in a registered plugin's code */
    bool fault_in_call;   /* the fault was on the thread making the call
                             (so the call's task caused it) */
} sy_call_snapshot;

/* Opens (creating) the record at `path`, mapped into memory, stamps it
 * with this process and `owner`, and installs the fatal-signal handler.
 * NULL path: the record lives in memory only (nothing survives a crash,
 * the watchdog still works).  Returns 0, or -1 with err (the host runs on
 * with an in-memory record). */
int sy_call_record_open(const char *path, const char *owner, char *err, size_t err_len);

/* Unmaps and deletes the record: a clean exit leaves nothing to report.
 * Restores the previous signal handlers. */
void sy_call_record_close(void);

/* Remembers where a loaded plugin's code lies (from any address inside it,
 * e.g. its descriptor), so the signal handler can name it.  Up to 64
 * plugins; later ones are not named. */
void sy_call_register_plugin(const char *name, const void *inside);

/* Brackets one call into `e`'s plugin.  `call` is a static string
 * ("submit"); ns may be NULL. */
void sy_call_begin(sy_instance_entry *e, const char *call, const char *ns, int64_t run_id,
                   uint32_t idx, uint32_t attempt);
void sy_call_end(void);

/* sy_call_end, returning how long the call took in nanoseconds (the
 * metrics' plugin call time); -1 when no record is open. */
int64_t sy_call_end_ns(void);

/* The live record, copied consistently (retried while a call begins).  For
 * the watchdog; any thread.  False when no record is open. */
bool sy_call_current(sy_call_snapshot *out, sy_instance_entry **entry);

/* Finds records left by processes that are gone (files `prefix` + ".*"
 * whose process is not running), reports each with one log line, hands the
 * first one that recorded a fatal signal to *out (found = true) and
 * deletes them all.  A record without a fault is a process killed from
 * outside (SIGKILL, the OOM killer): reported, never handed out, since no
 * plugin is to blame.  `prefix` is what sy_call_record_path() starts with. */
bool sy_call_record_take_previous(const char *prefix, sy_call_snapshot *out);

/* The record's file for this process: "<prefix>.<pid>" into buf. */
void sy_call_record_path(const char *prefix, char *buf, size_t len);

/* One line describing a crash record for logs and events ("the host (pid
 * 4242) died inside plugin 'p', instance 'i', call submit, task t::w::a:
 * SIGSEGV in plugin 'p'"). */
void sy_call_describe(const sy_call_snapshot *s, char *buf, size_t len);

#endif
