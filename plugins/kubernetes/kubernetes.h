/*
 * kubernetes.h -- the kubernetes executor's internals, shared by its files.
 *
 *   kubernetes.c  the descriptor: create/destroy, capacity, submit,
 *                 resume, cancel, validate, metrics
 *   settings.c    instance settings and task parameters
 *   kubeconfig.c  the cluster's address and credentials: a kubeconfig
 *                 file (YAML, read with libyaml) or the in-cluster
 *                 service account
 *   exec_auth.c   exec credential plugins (users[].user.exec): run,
 *                 their ExecCredential read
 *   exec_refresh.c  an exec credential refreshed on the loop: a helper
 *                 thread runs the command before it expires, or on a 401
 *   loop.c        the plugin's side of its thread, the SDK's HTTP loop
 *                 (switchyard/http.h); one HTTP request (sy_k8s_req) at a
 *                 time per purpose, streamed or buffered
 *   job.c         one attempt's Job: its name, labels and manifest
 *   watch.c       the instance's two watches (Jobs, Pods): list, watch
 *                 from the list's resourceVersion, resume, relist on 410
 *   follow.c      an attempt's state machine: create (or adopt), follow,
 *                 delete, complete
 *   judge.c       what its Job and Pod say: failures named, outcomes
 *   logs.c        the pod's log: the output, or a failure's tail
 *   stats.c       the metrics
 *
 * Threads: submit(), resume(), cancel(), capacity() and metrics() run on
 * host threads and never block: submit() and resume() build the manifest
 * (no I/O), take a slot and post the attempt to the loop thread
 * (sy_http_loop_post: a queue under a mutex and a uv_async_t); cancel()
 * takes the attempt's completion from the in-flight table and posts it
 * the same way.
 * Everything else -- curl, the watches, the object cache, every attempt's
 * state after the queue -- belongs to the loop thread, which completes
 * every attempt it accepted.
 *
 * Secrets: the bearer token and the client key are held in memory only
 * (sy_k8s_conn) and go out only as an Authorization header or a TLS key;
 * no message, log line or metric carries them.
 */
#ifndef SY_KUBERNETES_H
#define SY_KUBERNETES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>
#include <uv.h>

#include <switchyard/executor.h>
#include <switchyard/http.h>
#include <switchyard/sdk.h>

#define SY_K8S_DEFAULT_MAX_IN_FLIGHT 500
#define SY_K8S_MAX_IN_FLIGHT 100000
/* An environment variable's value goes into the Job object, which etcd
 * bounds at about 1.5 MiB as a whole; 128 KiB keeps a Job well clear. */
#define SY_K8S_DEFAULT_MAX_INPUT (128 * 1024)
#define SY_K8S_DEFAULT_PULL_TIMEOUT_MS 60000
#define SY_K8S_DEFAULT_UNSCHED_TIMEOUT_MS (5 * 60 * 1000)
/* A 429 on a create whose Retry-After is longer than this completes the
 * attempt DEFERRED (the host waits, holding no slot) instead of holding
 * the slot through the wait. */
#define SY_K8S_DEFAULT_RETRY_WAIT_MS 10000
/* The most of a pod's log read: its output, or the tail of a failure. */
#define SY_K8S_LOG_MAX (4 * 1024 * 1024)
#define SY_K8S_TAIL_LINES 20
#define SY_K8S_NAME_MAX 63

/* ------------------------------------------------------------------------ */
/* The cluster's address and credentials (kubeconfig.c)                    */
/* ------------------------------------------------------------------------ */

/* Owned by the instance (its settings), written once in create(), read by
 * the loop thread after (which alone replaces the token, the client pair
 * and expiry_ms when a token file or an exec plugin gives new ones).
 * Secrets are wiped before they are freed. */
typedef struct sy_k8s_exec sy_k8s_exec;

typedef struct sy_k8s_conn {
    char *server;        /* scheme://host[:port], no trailing `/` */
    char *ca;            /* PEM bytes of the CAs to trust, or NULL: the
                            system's store */
    size_t ca_len;
    char *token;         /* bearer token, or NULL; never logged */
    char *token_file;    /* where it was read (tokenFile, the service
                            account), or NULL: read again every minute,
                            as projected tokens rotate */
    char *cert;          /* PEM client certificate, or NULL */
    size_t cert_len;
    char *key;           /* PEM client key (with cert); never logged */
    size_t key_len;
    char *ns;            /* the context's namespace, or NULL */
    sy_k8s_exec *exec;   /* owned: the user's exec credential plugin, or
                            NULL; token or cert/key came from it */
    int64_t expiry_ms;   /* the exec credential's expirationTimestamp
                            (Unix ms), 0 when none; loop only after
                            create() */
    char source[512];    /* where it came from, for messages ("kubeconfig
                            FILE, context C" or "in-cluster service
                            account") */
} sy_k8s_conn;

void sy_k8s_conn_free(sy_k8s_conn *c);

/* Reads kubeconfig `path` with context `context` (NULL: current-context).
 * SY_OK, or SY_EINVAL / SY_EIO with one line in err naming the file and
 * the field (never a secret's value). */
int sy_k8s_kubeconfig_load(const char *path, const char *context,
                           sy_k8s_conn *out, char *err, size_t err_len);

/* Reads a token file (trailing newline dropped) into *out (malloc'd).
 * SY_OK, or SY_EIO with errno set. */
int sy_k8s_read_token(const char *path, char **out);

/* The in-cluster service account: KUBERNETES_SERVICE_HOST/PORT and the
 * files under `sa_dir` (token, ca.crt, namespace).  SY_OK with *found;
 * *found false (SY_OK) when not in a cluster; an error when the
 * environment says a cluster but a file is missing. */
int sy_k8s_incluster_load(const char *sa_dir, sy_k8s_conn *out, bool *found,
                          char *err, size_t err_len);

/* An exec credential plugin as configured (users[].user.exec).  Owned by
 * the conn; written in create(), read-only after (the refresh helper
 * thread reads it). */
struct sy_k8s_exec {
    char *api_version;   /* client.authentication.k8s.io/v1 or v1beta1 */
    char **argv;         /* the resolved command, then args; NULL-ended */
    char **env;          /* exec.env as NAME=VALUE; NULL-ended, or NULL */
    char *info;          /* KUBERNETES_EXEC_INFO's value (JSON) */
    char where[512];     /* "kubeconfig FILE: users[U].user.exec" */
};

/* One ExecCredential's status.  Owned by whoever holds it; secrets wiped
 * when freed. */
typedef struct sy_k8s_cred {
    char *token;         /* status.token, or NULL; never logged */
    char *cert;          /* status.clientCertificateData (PEM), or NULL */
    size_t cert_len;
    char *key;           /* status.clientKeyData (PEM); never logged */
    size_t key_len;
    int64_t expiry_ms;   /* status.expirationTimestamp, Unix ms; 0 none */
} sy_k8s_cred;

void sy_k8s_cred_free(sy_k8s_cred *c);
void sy_k8s_exec_free(sy_k8s_exec *x);
/* Reads users[].user.exec (`where` names the user, `dir` the kubeconfig's
 * directory), runs the command once (blocking, 30 s at most) and puts its
 * credential in conn (conn->server and conn->ca already read).  SY_OK, or
 * an error with one line in err naming the file and the field. */
int sy_k8s_exec_read(json_t *exec, const char *where, const char *dir,
                     const char *path, sy_k8s_conn *conn, char *err,
                     size_t err_len);
/* Runs the command (any thread; blocks up to 30 s).  SY_OK with *out, or
 * SY_EIO / SY_EINVAL with one line in err: the file, the field, the exit
 * status and the tail of its stderr (never its stdout).  `child`, when
 * not NULL, holds the command's pid while it runs (0 otherwise), for
 * destroy() to kill it. */
int sy_k8s_exec_run(const sy_k8s_exec *x, _Atomic int *child,
                    sy_k8s_cred *out, char *err, size_t err_len);
/* Reads an ExecCredential (JSON) of `api_version`.  SY_OK, or SY_EINVAL
 * with one line in err (no secret). */
int sy_k8s_exec_parse(const char *text, size_t len, const char *api_version,
                      sy_k8s_cred *out, char *err, size_t err_len);
/* An RFC 3339 time as Unix milliseconds.  SY_OK or SY_EINVAL. */
int sy_k8s_rfc3339_ms(const char *s, int64_t *out);

/* ------------------------------------------------------------------------ */
/* Settings (settings.c)                                                     */
/* ------------------------------------------------------------------------ */

/* Owned by the instance; written in create(), read-only after (any
 * thread). */
typedef struct sy_k8s_settings {
    sy_k8s_conn conn;
    char *ns;                   /* the namespace Jobs go to */
    char *image;                /* default image, or NULL (then a task
                                   must name one) */
    char *instance;             /* the value of switchyard.dev/instance:
                                   what the watches select and names hash */
    char *service_account;      /* or NULL */
    json_t *node_selector;      /* object, or NULL */
    json_t *tolerations;        /* array, or NULL */
    json_t *image_pull_secrets; /* array of {name}, or NULL */
    int64_t max_in_flight;
    int64_t max_input;          /* bytes of SWITCHYARD_INPUT */
    int64_t pull_timeout_ms;    /* ErrImagePull/ImagePullBackOff bound */
    int64_t unsched_timeout_ms; /* Unschedulable bound */
    int64_t keep_finished_s;    /* ttlSecondsAfterFinished; -1: delete
                                   each Job once its logs are read */
    int64_t retry_wait_ms;      /* see SY_K8S_DEFAULT_RETRY_WAIT_MS */
    int64_t connect_timeout_ms;
} sy_k8s_settings;

extern const sy_param_spec *const sy_k8s_instance_params[];
extern const sy_param_spec *const sy_k8s_task_params[];

int sy_k8s_settings_read(const sy_host_api *api, const sy_params *cfg,
                         sy_k8s_settings *s, char *err, size_t err_len);
void sy_k8s_settings_free(sy_k8s_settings *s);

/* A task's container, read from its parameters over the instance's
 * defaults.  Everything owned (jansson references). */
typedef struct sy_k8s_spec {
    const char *image;       /* points into `params` or the settings */
    json_t *params;          /* the task's parameters as JSON */
    json_t *command;         /* array of strings, or NULL */
    json_t *env;             /* array of {name, value} */
    json_t *resources;       /* {limits, requests}, or NULL */
    json_t *node_selector;   /* merged object, or NULL */
    json_t *annotations;     /* pod template annotations, or NULL */
} sy_k8s_spec;

int sy_k8s_spec_read(const sy_host_api *api, const sy_k8s_settings *s,
                     const sy_params *p, sy_k8s_spec *out, char *err,
                     size_t err_len);
void sy_k8s_spec_free(sy_k8s_spec *sp);

/* ------------------------------------------------------------------------ */
/* HTTP (loop.c)                                                             */
/* ------------------------------------------------------------------------ */

typedef struct sy_k8s_req sy_k8s_req;
typedef void (*sy_k8s_done_fn)(sy_instance *inst, sy_k8s_req *r);
/* A streamed answer's lines (a watch): `line` is NUL-terminated, valid
 * during the call. */
typedef void (*sy_k8s_line_fn)(sy_instance *inst, sy_k8s_req *r,
                               char *line, size_t len);

/* One request.  Owned by whoever made it (a job, a watch); lives on the
 * loop thread only.  `done` runs once, on the loop, when the transfer
 * ends (not when it is aborted with sy_k8s_http_abort). */
struct sy_k8s_req {
    CURL *easy;                 /* while in flight */
    struct curl_slist *headers; /* owned: this try's headers (the token's
                                   among them: never logged) */
    char *url;                  /* owned */
    char *send;                 /* owned request body, or NULL */
    const char *method;         /* static: "GET", "POST", "DELETE" */
    char *body;                 /* the answer (buffered requests) */
    size_t body_len, body_cap;  /* bytes held, bytes allocated */
    size_t limit;               /* most bytes held: more fails the
                                   transfer with too_big set */
    bool too_big;
    long status;                /* HTTP status, 0 when none */
    CURLcode code;              /* curl's result, when done */
    char retry_after[32];       /* the Retry-After header, "" for none */
    bool stream;                /* hand lines to `line`, keep no body */
    sy_k8s_line_fn line;        /* a stream's lines (with `stream`) */
    sy_k8s_done_fn done;        /* the end of the transfer */
    void *arg;                  /* the owner (a sy_k8s_job, a watch) */
    sy_k8s_req *held_next;      /* in inst->exec_held: waiting for an
                                   exec credential's refresh */
    bool resent;                /* sent again once after a 401 */
    unsigned credential;        /* inst->exec_credential when sent */
};

/* Makes a request for path (which starts with `/`; the server is
 * prepended).  NULL when out of memory. */
sy_k8s_req *sy_k8s_req_new(sy_instance *inst, const char *method,
                           const char *path, char *send, sy_k8s_done_fn done,
                           void *arg);
void sy_k8s_req_free(sy_k8s_req *r);
/* Starts it on the loop.  SY_OK, or an error with one line in err. */
int sy_k8s_http_start(sy_instance *inst, sy_k8s_req *r, char *err,
                      size_t err_len);
/* Takes it off the wire; `done` is not called.  The caller frees it. */
void sy_k8s_http_abort(sy_instance *inst, sy_k8s_req *r);
/* Milliseconds of the answer's Retry-After (seconds or an HTTP date), or
 * -1 when none. */
int64_t sy_k8s_retry_after_ms(const sy_k8s_req *r);
/* The Status message of an error answer, or its first bytes, into buf. */
const char *sy_k8s_status_message(const sy_k8s_req *r, char *buf,
                                  size_t len);
int64_t sy_k8s_now_ms(void);

/* ------------------------------------------------------------------------ */
/* Attempts (job.c, follow.c) and the object cache                          */
/* ------------------------------------------------------------------------ */

/* Where an attempt is, on the loop thread. */
enum {
    SY_K8S_QUEUED = 0,  /* handed to the loop, not yet posted */
    SY_K8S_CREATING,    /* the POST is in flight, or waiting to retry */
    SY_K8S_FOLLOWING,   /* the Job exists: the watches decide */
    SY_K8S_LOGS,        /* reading the pod's log */
    SY_K8S_DELETING,    /* the DELETE is in flight, the outcome decided */
    SY_K8S_POD_WAIT,    /* cancelled, the Job deleted: waiting (10 s at
                           most) for the watch to see its pod go */
    SY_K8S_HANDOFF,     /* decided, but cancel() took the completion: its
                           queued message completes the attempt */
};

typedef struct sy_k8s_entry sy_k8s_entry;

/* One accepted attempt.  Made by submit()/resume() (host thread), then
 * the loop's alone; freed by the loop after complete(). */
typedef struct sy_k8s_job {
    sy_http_link posted;            /* in the loop's submit queue */
    sy_http_link cancelled;         /* in the loop's cancel queue; the
                                       in-flight table's value */
    sy_instance *inst;
    sy_completion *c;               /* the host's token, completed once */
    const sy_task *task;            /* host-owned, valid until complete */
    char name[SY_K8S_NAME_MAX + 1]; /* the Job's name */
    char *manifest;                 /* owned: the POST body */
    bool resumed;                   /* came through resume() */
    int64_t deadline_s;             /* activeDeadlineSeconds, 0 none */
    char memory_limit[64];          /* for the OOMKilled message */
    char uid[64];                   /* loop only: the followed Job's uid,
                                       "" until known; objects of an
                                       earlier Job of the same name (a
                                       deferred attempt made again) are
                                       told apart by it */

    /* loop thread only */
    int state;
    sy_k8s_entry *entry;            /* its cache entry once created */
    sy_k8s_req *req;                /* the request in flight, or NULL */
    bool abandoned;                 /* cancel() owns the completion */
    bool cancel_seen;               /* the cancel was applied */
    bool created;                   /* the Job exists (201 or 409) */
    bool running_seen;              /* latency counted */
    int tries;                      /* tries of the current request */
    int64_t created_ms;
    int64_t pull_since_ms;          /* first seen waiting on a pull */
    int64_t unsched_since_ms;       /* first seen Unschedulable */
    int64_t pod_wait_since_ms;      /* Job failed, pod's end not seen */
    uv_timer_t timer;               /* retries and the bounds above */
    bool timer_live;
    /* the outcome, once decided (state DELETING) */
    sy_outcome outcome;
    char *output;                   /* owned */
    char *error;                    /* owned */
    char *log;                      /* owned: the log tail of a failure */
    int64_t retry_after_ms;
    const char *reason;             /* the failure's metric name */
    bool log_complete;              /* the log read is for the output */
} sy_k8s_job;

/* The last state of one Job and its pod as the watches saw them, by Job
 * name; `att` the attempt that follows it, if any.  Loop thread only. */
struct sy_k8s_entry {
    sy_k8s_entry *hnext;
    char name[SY_K8S_NAME_MAX + 1];
    json_t *job;                    /* the Job object, or NULL */
    json_t *pod;                    /* its newest pod, or NULL */
    bool job_gone, pod_gone;        /* DELETED seen */
    sy_k8s_job *att;
};

/* job.c */
/* The Job's deterministic name for (instance, run, task, element,
 * attempt); element is -1 for a task that is not a map's element. */
void sy_k8s_job_name(const char *instance, const char *run,
                     const char *task, int64_t element, uint32_t attempt,
                     char out[SY_K8S_NAME_MAX + 1]);
/* A label value: at most 63 of [A-Za-z0-9-_.], alphanumeric at both
 * ends ("x" when nothing is left). */
void sy_k8s_label_value(const char *in, char out[SY_K8S_NAME_MAX + 1]);
/* The manifest (compact JSON) of the attempt's Job into job->manifest.
 * SY_OK, or SY_EINVAL / SY_ENOMEM with one line in err. */
int sy_k8s_job_manifest(const sy_k8s_settings *s, const sy_task *task,
                        const sy_k8s_spec *sp, sy_k8s_job *job, char *err,
                        size_t err_len);

/* follow.c (loop thread, every function) */
/* Takes an attempt off the submit queue: links its cache entry, POSTs
 * its Job.  Always ends in complete(), however the create goes. */
void sy_k8s_follow_begin(sy_instance *inst, sy_k8s_job *job);
/* Applies a cancel() (the completion is the loop's now): the Job is
 * deleted when it exists or its create is on its way. */
void sy_k8s_follow_cancel(sy_instance *inst, sy_k8s_job *job);
/* The entry changed (a watch event): re-judge its attempt. */
void sy_k8s_follow_update(sy_instance *inst, sy_k8s_entry *e);
/* The outcome is decided (the first decision stands): the Job is deleted
 * unless kept, then the attempt completes.  `reason` names the failure
 * for metrics (sy_k8s_reason_name), NULL for none; `fmt` the error. */
void sy_k8s_decide(sy_instance *inst, sy_k8s_job *job, sy_outcome o,
                   const char *reason, const char *fmt, ...) SY_PRINTF(5, 6);
/* Starts (or restarts) the attempt's timer on the loop. */
void sy_k8s_job_timer(sy_instance *inst, sy_k8s_job *job, int64_t ms,
                      uv_timer_cb cb);
/* judge.c: the attempt's Job and pod as last seen, acted on (a decision,
 * a log read, or a timer for a bound); nothing unless FOLLOWING. */
void sy_k8s_judge(sy_instance *inst, sy_k8s_job *job);
/* logs.c: reads the pod's log; `complete`: its last JSON object is the
 * output, else its tail goes into the failure with the exit code. */
void sy_k8s_read_log(sy_instance *inst, sy_k8s_job *job, bool complete);
/* Frees what the loop holds of an attempt that never reached
 * complete() (shutdown). */
void sy_k8s_follow_drop(sy_instance *inst, sy_k8s_job *job);
/* Frees the attempt's memory (after its timer's handle is closed). */
void sy_k8s_job_free(sy_k8s_job *job);

/* Reading the API server's objects and watch events (event.c) */
/* The uid of a Job, or of a pod's owning Job; NULL when absent.  The
 * string belongs to `obj`. */
const char *sy_k8s_uid(json_t *obj, bool owner);
/* metadata.a (metadata.a.b when `b`) of `obj` when a string, else NULL;
 * the string belongs to `obj`. */
const char *sy_k8s_meta_str(json_t *obj, const char *a, const char *b);

typedef enum {
    SY_K8S_EVENT_SKIP,     /* not JSON, no type or object, another ERROR */
    SY_K8S_EVENT_GONE,     /* an ERROR event with a 410 Status: relist */
    SY_K8S_EVENT_BOOKMARK, /* only a resourceVersion */
    SY_K8S_EVENT_OBJECT    /* ADDED, MODIFIED, DELETED (any other type) */
} sy_k8s_event_kind;

typedef struct sy_k8s_event {
    sy_k8s_event_kind kind;
    json_t *root;          /* owned: the parsed line, NULL when not JSON */
    const char *type;      /* in root: "ADDED"..., NULL when absent */
    json_t *object;        /* in root: BOOKMARK and OBJECT only */
    const char *rv;        /* in root: its metadata.resourceVersion */
} sy_k8s_event;

/* One line of a watch stream (any bytes, any thread); the event holds
 * what it read until sy_k8s_event_free, whatever the kind. */
sy_k8s_event_kind sy_k8s_event_read(const char *line, size_t len,
                                    sy_k8s_event *out);
void sy_k8s_event_free(sy_k8s_event *ev);

/* o.key when a string, else `def`; the string belongs to `o`. */
const char *sy_k8s_str(json_t *o, const char *key, const char *def);

/* What a Job and its pod say, for sy_k8s_judge; every pointer is into
 * the objects given (any thread, no instance). */
typedef struct sy_k8s_state {
    json_t *pod;            /* the pod, NULL when none or an earlier Job's */
    const char *phase;      /* the pod's status.phase, "" when none */
    json_t *disruption;     /* its DisruptionTarget condition, or NULL */
    bool evicted;           /* its status.reason is Evicted */
    json_t *terminated;     /* its container's state.terminated, or NULL */
    json_t *waiting;        /* its container's state.waiting, or NULL */
    const char *wait_reason; /* waiting.reason, "" when none */
    json_t *unschedulable;  /* PodScheduled False Unschedulable, or NULL */
    json_t *failed;         /* the Job's Failed condition, or NULL */
    bool complete;          /* the Job's Complete condition holds */
} sy_k8s_state;

/* `uid`: the attempt's Job's uid ("" or NULL unknown): a pod owned by
 * another Job is not read. */
void sy_k8s_state_read(json_t *job, json_t *pod, const char *uid,
                       sy_k8s_state *out);

/* the cache (watch.c) */
/* The entry of Job `name` (loop thread), made when `create`; NULL when
 * absent, or out of memory. */
sy_k8s_entry *sy_k8s_entry_get(sy_instance *inst, const char *name,
                               bool create);
/* Drops the entry when nothing holds it any more. */
void sy_k8s_entry_release(sy_instance *inst, sy_k8s_entry *e);

/* ------------------------------------------------------------------------ */
/* Watches (watch.c)                                                         */
/* ------------------------------------------------------------------------ */

typedef struct sy_k8s_watch {
    sy_instance *inst;
    bool pods;                 /* Pods, else Jobs */
    char path[512];            /* the collection's path */
    char rv[64];               /* last resourceVersion seen, "" none */
    sy_k8s_req *req;           /* the list or watch in flight */
    bool listing;              /* `req` is a list, not a watch */
    int64_t list_ms;           /* when the last list was asked for */
    bool got_event;            /* this stream delivered something */
    uv_timer_t timer;          /* the backoff before a restart */
    int64_t backoff_ms;        /* the next backoff: 0, then 100 ms
                                  doubling to 5 s while streams end empty */
} sy_k8s_watch;

/* On the loop: both watches listed and then watched (restarted for
 * ever, never failing: a failure is logged and tried again). */
void sy_k8s_watch_start(sy_instance *inst);
/* On the loop, at shutdown: their requests and timers stopped. */
void sy_k8s_watch_stop(sy_instance *inst);

/* ------------------------------------------------------------------------ */
/* The instance                                                              */
/* ------------------------------------------------------------------------ */

/* Failure reasons, for `failures.REASON` metrics. */
enum {
    SY_K8S_R_EXIT = 0, SY_K8S_R_OOM, SY_K8S_R_PULL, SY_K8S_R_UNSCHED,
    SY_K8S_R_DEADLINE, SY_K8S_R_EVICTED, SY_K8S_R_PREEMPTED,
    SY_K8S_R_OUTPUT, SY_K8S_R_API, SY_K8S_R_INPUT, SY_K8S_R_GONE,
    SY_K8S_R_THROTTLED, SY_K8S_R_N
};

/* Counters: atomics, written by any thread, read by metrics(); owned by
 * the instance.  All count since create(). */
typedef struct sy_k8s_stats {
    _Atomic int64_t submitted;      /* submits and resumes accepted */
    _Atomic int64_t resumed;        /* of those, through resume() */
    _Atomic int64_t by_outcome[5];  /* completions, indexed by sy_outcome */
    _Atomic int64_t creates;        /* creates answered 201 */
    _Atomic int64_t adoptions;      /* creates answered 409: followed */
    _Atomic int64_t deletes;        /* Jobs deleted (200, 202, 404) */
    _Atomic int64_t throttled;      /* 429s on creates, deletes, logs */
    _Atomic int64_t watch_restarts; /* watch streams that ended */
    _Atomic int64_t gone_410;       /* of those and lists, 410 Gone */
    _Atomic int64_t relists;        /* lists (the first two included) */
    _Atomic int64_t jobs;           /* Jobs of attempts that exist (gauge) */
    _Atomic int64_t run_latency_ms; /* sum of create-to-Running times */
    _Atomic int64_t run_latency_n;  /* how many the sum holds */
    _Atomic int64_t failures[SY_K8S_R_N]; /* attempts not succeeded, by
                                             reason */
} sy_k8s_stats;

#define SY_K8S_BUCKETS 1024

/* One configured instance: made by create() (host thread), freed by
 * destroy() after the loop thread is joined. */
struct sy_instance {
    const sy_host_api *api;         /* the host's, static */
    sy_host *host;                  /* the host's, until destroy() */
    sy_k8s_settings set;            /* read-only after create() */
    sy_sdk_inflight inflight;       /* completion -> job->cancelled, for
                                       cancel(); any thread */
    sy_k8s_stats stats;
    _Atomic int64_t used;           /* slots: accepted until the Job is
                                       deleted (or kept) and complete()d */

    /* loop thread (the rest, but exec_mu's fields) */
    sy_http_loop *http;             /* the thread, its queues and the
                                       multi; freed by destroy() */
    CURLM *multi;                   /* http's: every request of the
                                       instance; NULL once it stops */
    char *auth_header;              /* "Authorization: Bearer ..." or NULL;
                                       never logged; loop only once the
                                       loop runs (the token refresh) */
    uv_timer_t token_timer;         /* re-reads conn.token_file */
    uv_timer_t exec_timer;          /* the exec credential's refresh */
    uv_async_t exec_async;          /* the helper thread's result is in */
    pthread_t exec_thread;          /* the helper running the command */
    _Atomic int exec_child;         /* its command's pid, 0 none (any
                                       thread): killed by destroy() */
    bool exec_running;              /* loop only: exec_thread is live */
    int64_t exec_last_ms;           /* loop only: the last refresh began */
    int64_t exec_failed_ms;         /* loop only: the last one failed */
    unsigned exec_credential;       /* loop only: refreshes that worked */
    bool exec_stale;                /* loop only: a 401 began the refresh */
    sy_k8s_req *exec_held;          /* loop only: requests started while
                                       the credential is expired or was
                                       refused, until the refresh ends */
    sy_k8s_cred exec_cred;          /* under exec_mu: the helper's result */
    int exec_rc;                    /* under exec_mu: its SY_* code */
    char exec_err[512];             /* under exec_mu: its error, one line */
    sy_k8s_entry *buckets[SY_K8S_BUCKETS]; /* the cache, by Job name */
    sy_k8s_watch watch_jobs, watch_pods;
    bool watching;                  /* loop only: the watches began (with
                                       the first attempt) */
    char selector[160];             /* the label selector, URL-encoded */

    pthread_mutex_t exec_mu;        /* guards the helper's result and
                                       exec_closed */
    bool exec_closed;               /* the loop stops: exec_async is
                                       closing, not to be sent */
};

/* loop.c */
/* In create(): the loop thread started (the watches begin with the first
 * attempt).  SY_OK,
 * or an error with one line in err and nothing left running. */
int sy_k8s_loop_start(sy_instance *inst, char *err, size_t err_len);
/* In destroy(): the loop told to stop, its handles closed, joined. */
void sy_k8s_loop_stop(sy_instance *inst);

/* exec_refresh.c (loop thread, but sy_k8s_exec_join) */
/* In sy_k8s_loop_start, before the thread: the refresh's handles, its
 * timer set from conn.expiry_ms.  Nothing when there is no exec plugin. */
void sy_k8s_exec_start(sy_instance *inst);
/* r's answer was 401: refresh, unless one runs or ran in the last 5 s.
 * True when r may go again (a refresh is on its way, or a newer
 * credential came since r was sent); false with no exec plugin, or
 * after a refresh: the 401 stands (the line of one that failed). */
bool sy_k8s_exec_unauthorized(sy_instance *inst, sy_k8s_req *r);
/* In sy_k8s_http_start: true when the request is held until a refresh
 * ends (the credential expired, or a 401 began the refresh); it is then
 * started with the new credential, or answered 401 with the command's
 * error as its Status message (30 s at most). */
bool sy_k8s_exec_hold(sy_instance *inst, sy_k8s_req *r);
/* In sy_k8s_http_abort: the request taken off the held list. */
void sy_k8s_exec_unhold(sy_instance *inst, sy_k8s_req *r);
/* In sy_k8s_loop_stop, after the loop thread is joined: the helper's
 * command killed, the helper joined. */
void sy_k8s_exec_join(sy_instance *inst);

/* stats.c */
/* metrics(): any thread, reads atomics only. */
void sy_k8s_stats_emit(sy_instance *inst, sy_metric_fn emit, void *sink);
/* The metric name of a SY_K8S_R_* reason ("oom_killed"). */
const char *sy_k8s_reason_name(int reason);

#endif /* SY_KUBERNETES_H */
