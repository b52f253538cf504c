/*
 * kit.h -- the conformance kit's shared types.
 *
 * switchyard-conformance loads one executor plugin and runs the contract of
 * api/switchyard/executor.h against it.  The modules:
 *
 *   main.c      options, the summary, the exit status
 *   inputs.c    the --params file: instance, task and bad settings
 *   harness.c   runs each check in a forked child with a time limit, so a
 *               plugin that crashes or hangs fails that check only
 *   driver.c    the kit's side of the ABI: instances, submits with their
 *               completions counted, wake() counted, threads counted
 *   check_*.c   the checks, one job each
 *
 * The kit plays the host with the SDK's parts that both sides of the ABI
 * share: it opens the plugin with the host's checks (switchyard/loader.h)
 * and lends the SDK's test host (switchyard/testhost.h), whose complete()
 * counts a second completion instead of only logging it, with parameters
 * read from JSON the way the host holds them (switchyard/json_params.h).
 * It builds with the ABI and SDK headers alone, and links no host code.
 */
#ifndef SY_KIT_H
#define SY_KIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <libconfig.h>

#include <switchyard/config_json.h>
#include <switchyard/executor.h>
#include <switchyard/json_params.h>
#include <switchyard/limits.h>
#include <switchyard/loader.h>
#include <switchyard/sdk.h>
#include <switchyard/testhost.h>

/* ------------------------------------------------------------------------ */
/* Inputs (inputs.c)                                                        */
/* ------------------------------------------------------------------------ */

/* What the --params file gives; every group optional.  Filled once in the
 * parent, read-only afterwards (the children inherit it). */
typedef struct kit_inputs {
    config_t cfg;           /* the parsed file (for declaration checks) */
    bool have_file;
    char *path;             /* owned; the file as given, or NULL */
    char *base_dir;         /* owned; the file's directory, or the cwd */
    json_t *instance;       /* owned; `instance = {...}`, or {} */
    json_t *task;           /* owned; `task = {...}`, or {} */
    json_t *long_task;      /* owned; `long_task`, or NULL: tasks that run
                               until cancelled (for the cancel and wake
                               checks) */
    json_t *bad_instance;   /* owned; `bad_instance`, or NULL */
    json_t *bad_task;       /* owned; `bad_task`, or NULL */
    char *input;            /* owned; `input` (a JSON object), or "{}" */
    size_t max_context_bytes; /* `max_context_bytes`: the host's bound on
                               an output, SY_MAX_CONTEXT_BYTES_DEFAULT by
                               default */
    const config_setting_t *instance_setting; /* in cfg, or NULL */
    const config_setting_t *task_setting;     /* in cfg, or NULL */
} kit_inputs;

/* Reads `path` (NULL: defaults only).  Returns 0, or -1 with "FILE:LINE:
 * reason" in err. */
int kit_inputs_load(kit_inputs *in, const char *path, char *err,
                    size_t err_len);
void kit_inputs_free(kit_inputs *in);

/* Bad instances for the plugin's declarations: `base` with one declared
 * setting given a value of the wrong type, one set per declared setting
 * (at most 8), or `base` with an unknown key when the plugin declares
 * nothing (instance_params NULL: create() judges every key itself).
 * Returns a JSON array of {"what": "...", "settings": {...}} the caller
 * owns, or NULL when nothing can be derived, with the reason in *why. */
json_t *kit_derive_bad(const json_t *base, const sy_param_spec *const *spec,
                       const char **why);

/* ------------------------------------------------------------------------ */
/* The run (main.c, harness.c)                                              */
/* ------------------------------------------------------------------------ */

typedef struct kit {
    const char *plugin_path;
    kit_inputs in;
    bool verbose;
    int log_level;          /* the plugin's log lines shown: a sy_log_level */
    double scale;           /* multiplies every time limit (valgrind) */
} kit;

typedef enum kit_verdict { KIT_PASS, KIT_FAIL, KIT_SKIP } kit_verdict;

/* What a check reports: a verdict and one line (the reason for FAIL and
 * SKIP; a note for PASS shown with --verbose). */
typedef struct kit_report {
    kit_verdict verdict;
    char msg[512];
    char detail[1024];      /* extra lines for --verbose */
} kit_report;

/* What a check works with inside its child: the run, and the plugin as the
 * host's checks accepted it (or why they refused it). */
typedef struct kit_ctx {
    const kit *k;
    sy_sdk_plugin plugin;   /* plugin.desc NULL: refused, see `reason` */
    char reason[SY_SDK_LOAD_REASON_MAX];
    const sy_executor *d;   /* plugin.desc */
} kit_ctx;

typedef kit_verdict (*kit_check_fn)(kit_ctx *x, kit_report *r);

typedef struct kit_check {
    const char *name;
    const char *needs;      /* a check that must pass first, or NULL */
    kit_check_fn run;
    const char *about;      /* one line for --list */
} kit_check;

/* The checks, in run order, NULL-name terminated (checks.c). */
extern const kit_check kit_checks[];

/* Runs one check in a forked child; fills r.  Never returns KIT_PASS for a
 * child that crashed, hung, or exited non-zero after passing (a sanitizer
 * or valgrind report). */
void kit_run_isolated(const kit *k, const kit_check *c, kit_report *r);

/* Sends `r` as the check's report and ends the child at once, from any
 * thread and from a signal handler (only write() and _exit()). */
_Noreturn void kit_report_now(const kit_report *r);

/* Sets the verdict and message; returns the verdict. */
kit_verdict kit_pass(kit_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
kit_verdict kit_fail(kit_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
kit_verdict kit_skip(kit_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends one line to r->detail (shown with --verbose). */
void kit_note(kit_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------------ */
/* The driver (driver.c)                                                    */
/* ------------------------------------------------------------------------ */

/* The state of one submit attempt. */
enum { CALL_FREE, CALL_SUBMITTING, CALL_ACCEPTED, CALL_REFUSED };

/* One submit attempt and its completion.  Never reused: a plugin that
 * completes late or twice always finds its own record. */
typedef struct kit_call {
    sy_completion c;          /* handed to the plugin; the test host's */
    sy_task task;             /* handed to the plugin; lives with the call */
    struct kit_inst *ki;
    atomic_int state;         /* CALL_* */
    atomic_int outcome;       /* of the first, or -1 */
    atomic_bool in_submit;    /* submit() for it is running */
    pthread_t submitter;      /* the thread in that submit() */
    double kit_ms;            /* time the kit spent in complete() called
                                 from inside that submit() (on the
                                 submitting thread), left out of its
                                 duration */
    int status;               /* what submit() returned */
    char ns[64], task_id[32];
} kit_call;

/* One instance under test and every call made on it. */
typedef struct kit_inst {
    const kit *k;
    const sy_executor *d;
    sy_instance *inst;        /* NULL until created, after destroyed */
    sy_host host;             /* the test host: counts double completions
                                 (host.doubles) and wakes (host.wakes) */
    const sy_host_api *api;   /* the test host's table */

    const char *input;        /* the tasks' input (NUL-terminated) in place
                                 of the run's, or NULL; set after
                                 kit_open(), not owned */
    kit_call *calls;          /* owned, ncalls records */
    size_t ncalls;
    atomic_size_t next;       /* the next free record */

    atomic_long accepted, completed, refused, busy;
    atomic_long after_refusal;/* completions of refused submits */
    atomic_long malformed;
    atomic_long inside_submit;/* completions from inside submit() */
    atomic_long outcomes[5];  /* by sy_outcome, DEFERRED included */
    atomic_long oversize;     /* outputs over max_context_bytes */
    size_t oversize_len;      /* the first one's length (guarded by lock) */
    char oversize_task[32];   /* and its task (guarded by lock) */
    char malformed_why[256];  /* the first malformed result (guarded by
                                 lock) */
    atomic_long long_errors;  /* error texts over SY_RESULT_ERROR_MAX */
    size_t long_error_len;    /* the first one's length (guarded by lock) */
    char long_error_task[32]; /* and its task (guarded by lock) */
    /* Every submit() (resume()) and cancel() is timed by kit_submit() and
     * kit_cancel(); a call over SY_CALL_BOUND_MS, the bound the host's
     * watchdog enforces (times --time-scale), fails the check
     * (kit_calls_in_bound()). */
    atomic_long over_bound;   /* calls over SY_CALL_BOUND_MS */
    bool bound_judged_later;  /* set: kit_close() leaves the bound to a
                                 later check */
    char over_bound_why[96];  /* the first, e.g. "submit() of task-0 took
                                 5000.3 ms" (guarded by lock) */
    char first_error[256];    /* the first result's error text, for
                                 --verbose (guarded by lock) */
    /* The result-stable check: with `probe_stable` set (before any
     * submit), each first completion's output and error are read twice,
     * a moment apart, while complete() has not returned yet. */
    bool probe_stable;
    /* The resume check: with `resume_calls` set (before any submit),
     * kit_submit() calls resume() (ABI 1.4) instead of submit(). */
    bool resume_calls;
    atomic_long unstable;     /* results that changed meanwhile */
    char unstable_why[320];   /* the first one (guarded by lock) */

    pthread_mutex_t lock;     /* for the condition below */
    pthread_cond_t changed;   /* a completion or a wake arrived */
} kit_inst;

/* Prepares ki for up to `ncalls` submits (no instance yet).  0 or -1. */
int kit_inst_init(kit_inst *ki, kit_ctx *x, size_t ncalls);
/* Frees the records; the instance must be destroyed (or abandoned). */
void kit_inst_fini(kit_inst *ki);

/* create() with `settings`.  Returns what create() returned; err gets its
 * message. */
int kit_create(kit_inst *ki, const json_t *settings, char *err,
               size_t err_len);
void kit_destroy(kit_inst *ki);

/* Takes the next record, filled with a task of `params` (a JSON object)
 * and the run's input.  NULL when the records are used up. */
kit_call *kit_call_new(kit_inst *ki, const json_t *params);

/* submit() for `call`; *ms gets its wall time in milliseconds.  Returns
 * what submit() returned; err gets its message. */
int kit_submit(kit_inst *ki, kit_call *call, double *ms, char *err,
               size_t err_len);

/* Counts a call into the plugin (`what`: "submit") that took `ms`, when
 * over SY_CALL_BOUND_MS; the first is described in ki->over_bound_why.
 * Any thread (checks.c). */
void kit_note_duration(kit_inst *ki, const kit_call *call, const char *what,
                       double ms);

/* cancel() for `call`, timed like kit_submit() (checks.c); *ms (may be NULL) gets
 * its wall time.  Returns what cancel() returned. */
int kit_cancel(kit_inst *ki, kit_call *call, double *ms);

/* Waits until every accepted submit has completed, at most `ms` (scaled).
 * True when all did. */
bool kit_wait_all(kit_inst *ki, double ms);
/* Waits until `cond(ki)` holds, at most `ms` (scaled), re-testing on every
 * completion and wake. */
bool kit_wait_for(kit_inst *ki, double ms, bool (*cond)(kit_inst *, void *),
                  void *arg);

/* Accepted and not yet completed, now. */
long kit_in_flight(kit_inst *ki);

/* Sums the verdict of the exactly-once rules over every call so far:
 * twice, after a refusal, malformed.  Writes the first problem into msg
 * and returns false. */
bool kit_once_ok(kit_inst *ki, char *msg, size_t len);

/* One line listing what never completed, e.g. "3 of 200 never completed
 * (first: task-17)". */
void kit_describe_missing(kit_inst *ki, char *msg, size_t len);

/* ------------------------------------------------------------------------ */
/* Small helpers (driver.c)                                                 */
/* ------------------------------------------------------------------------ */

double kit_now_ms(void);
void kit_sleep_ms(double ms);
/* Threads of this process (/proc/self/task), or -1. */
int kit_thread_count(void);
/* The names (comm) of this process's threads but the caller's, ", "
 * between them, into buf (truncated to len). */
void kit_thread_names(char *buf, size_t len);
/* Open file descriptors of this process (/proc/self/fd), or -1. */
int kit_fd_count(void);
/* Waits up to `ms` (scaled) for the thread count to fall to `want`;
 * returns the last count seen. */
int kit_wait_threads(const kit *k, int want, double ms);

const char *kit_status_name(int status);
const char *kit_outcome_name(int outcome);

/* A time limit scaled by --time-scale, at most by `cap` (0: no cap).
 * Limits that tell a correct plugin from a broken one (how long a submit
 * may take, how long an excess must last) scale only a little, or a
 * generous scale would let broken plugins pass. */
double kit_scaled(const kit *k, double ms, double cap);

/* Time limits, before scaling. */
#define KIT_DEADLINE_MS 3000.0   /* for completions to arrive */
#define KIT_BUDGET_MS 700.0      /* for a stress loop */
#define KIT_BLOCK_MS 50.0        /* a submit or cancel slower than this
                                    blocks */
#define KIT_CHECK_LIMIT_MS 15000.0 /* a whole check, then it is killed */

/* Fields are only appended, so any real layout of a struct that crosses
 * the ABI is a whole number of its alignment and far under a page; a size
 * past that is garbage (an uninitialised or miscomputed field), and a
 * host that trusted it would read fields the plugin never wrote. */
#define KIT_MAX_STRUCT_SIZE 4096u


#endif
