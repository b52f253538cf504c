/*
 * lambda.h -- the lambda executor's internals, shared by its files.
 *
 *   lambda.c     the descriptor, create/destroy, capacity, submit, cancel,
 *                validate
 *   settings.c   instance settings and task parameters
 *   creds.c      the credentials chain: settings, environment, shared file
 *   metadata.c   credentials from the container or instance metadata
 *                endpoints, fetched and refreshed on the loop
 *   loop.c       the plugin's side of its thread, the SDK's HTTP loop
 *                (switchyard/http.h): jobs begun, retried, finished
 *   request.c    one invocation's HTTP request: URL, headers, signature
 *   response.c   what an answer means: output, failure, deferral, retry
 *   stats.c      the adaptive limit, the pause, and the metrics
 *   sigv4.c      the signer (sigv4.h)
 *
 * Threads: submit(), cancel(), capacity() and metrics() run on host
 * threads and never block: submit() posts the job to the loop thread
 * (sy_http_loop_post: a queue under a mutex and a uv_async_t); cancel()
 * takes the job's completion and posts it the same way.  Everything that touches
 * curl, the credentials or a job's transfer runs on the loop thread, which
 * also completes every attempt accepted into the queue.
 */
#ifndef SY_LAMBDA_H
#define SY_LAMBDA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <uv.h>

#include <switchyard/executor.h>
#include <switchyard/http.h>
#include <switchyard/sdk.h>

#define SY_LAMBDA_DEFAULT_MAX_IN_FLIGHT 1000
#define SY_LAMBDA_MAX_IN_FLIGHT 100000
#define SY_LAMBDA_DEFAULT_CONNECT_MS 5000
/* The 15-minute Lambda maximum plus a margin for the round trip. */
#define SY_LAMBDA_DEFAULT_TIMEOUT_MS (15 * 60 * 1000 + 30 * 1000)
#define SY_LAMBDA_DEFAULT_SYNC_LIMIT (6 * 1024 * 1024)
#define SY_LAMBDA_DEFAULT_ASYNC_LIMIT (1024 * 1024)
#define SY_LAMBDA_DEFAULT_RETRIES 3
#define SY_LAMBDA_DEFAULT_RETRY_BASE_MS 100
#define SY_LAMBDA_DEFAULT_RETRY_CAP_MS 5000
/* Lambda's log tail is 4 KB; its answer at most the sync payload limit. */
#define SY_LAMBDA_LOG_TAIL_MAX 4096

enum { SY_LAMBDA_SYNC = 0, SY_LAMBDA_EVENT = 1 };

/* ------------------------------------------------------------------------ */
/* Credentials (creds.c, metadata.c)                                         */
/* ------------------------------------------------------------------------ */

typedef struct sy_lambda_creds {
    char *access_key;     /* owned; NULL when none yet */
    char *secret_key;     /* owned; never logged */
    char *session_token;  /* owned; NULL for none; never logged */
    int64_t expires_ms;   /* wall clock (ms since the epoch); 0: never */
    char source[160];     /* where they came from, for messages */
} sy_lambda_creds;

void sy_lambda_creds_clear(sy_lambda_creds *c);

/* Takes the first of: the settings' keys, the environment, the shared
 * credentials file.  SY_OK with *found true or false (then the metadata
 * endpoints are the source), or SY_EINVAL with one line in err (a key
 * without its secret, a profile that is not in the file). */
int sy_lambda_creds_static(const char *access_key, const char *secret_key,
                           const char *session_token, const char *profile,
                           sy_lambda_creds *out, bool *found, char *err,
                           size_t err_len);

/* ------------------------------------------------------------------------ */
/* Settings (settings.c)                                                     */
/* ------------------------------------------------------------------------ */

typedef struct sy_lambda_settings {
    char *function;          /* owned; the default function, or NULL */
    char *qualifier;         /* owned; the default qualifier, or NULL */
    char *region;            /* owned */
    char *endpoint;          /* owned; scheme://authority, no trailing / */
    char *host;              /* owned; the authority, for Host and signing */
    bool custom_endpoint;    /* endpoint_url or AWS_ENDPOINT_URL_LAMBDA */
    int invocation_type;     /* SY_LAMBDA_SYNC or SY_LAMBDA_EVENT */
    bool log_tail;
    char *client_context;    /* owned; base64 of the JSON, or NULL */
    int64_t max_in_flight;
    int64_t connect_timeout_ms;
    int64_t timeout_ms;
    int64_t max_payload_sync;
    int64_t max_payload_async;
    int64_t retries;
    int64_t retry_base_ms;
    int64_t retry_cap_ms;
    bool adaptive;
    char *access_key;        /* owned; from the settings, or NULL */
    char *secret_key;        /* owned */
    char *session_token;     /* owned */
    char *profile;           /* owned */
    char *ca_file;           /* owned; CAs for the endpoint, or NULL */
} sy_lambda_settings;

extern const sy_param_spec *const sy_lambda_instance_params[];
extern const sy_param_spec *const sy_lambda_task_params[];

int sy_lambda_settings_read(const sy_host_api *api, const sy_params *cfg,
                            sy_lambda_settings *s, char *err, size_t err_len);
void sy_lambda_settings_free(sy_lambda_settings *s);

/* A task's choices, over the instance's defaults.  Strings point into the
 * task's params or the settings (valid while the attempt runs). */
typedef struct sy_lambda_call {
    const char *function;
    const char *qualifier;      /* NULL for none */
    int invocation_type;
    bool log_tail;
    char *client_context;       /* owned (base64), or NULL */
} sy_lambda_call;

int sy_lambda_call_read(const sy_host_api *api, const sy_lambda_settings *s,
                        const sy_params *p, sy_lambda_call *call, char *err,
                        size_t err_len);

/* Base64 of `len` bytes (malloc'd), or NULL when out of memory. */
char *sy_lambda_base64(const void *data, size_t len);

/* ------------------------------------------------------------------------ */
/* Jobs and the instance                                                     */
/* ------------------------------------------------------------------------ */

typedef struct sy_lambda_job {
    struct sy_lambda_job *next;        /* in the waiting list */
    sy_http_link posted;               /* in the loop's submit queue */
    sy_http_link cancelled;            /* in the loop's cancel queue; the
                                          in-flight table's value */
    sy_instance *inst;
    sy_completion *c;
    const sy_task *task;               /* host-owned, valid until complete */
    sy_lambda_call call;

    /* loop thread only */
    CURL *easy;                        /* while a try is in flight */
    struct curl_slist *headers;
    char *url;
    int sends;                         /* requests curl began this try */
    char *body;                        /* the answer */
    size_t body_len, body_cap;
    bool body_too_big;
    char function_error[64];
    char executed_version[64];
    char error_type[128];
    char retry_after[32];
    char *log_result;                  /* base64, owned */
    long tries;                        /* tries made */
    uv_timer_t timer;                  /* the backoff before a retry */
    bool timer_live;                   /* timer initialised, not closed */
    bool abandoned;                    /* cancel() owns the completion */
    uint64_t start_ns;                 /* when the loop took it */
} sy_lambda_job;

/* Latency histogram: bucket i holds [2^(i/4), 2^((i+1)/4)) microseconds. */
#define SY_LAMBDA_HIST 128
#define SY_LAMBDA_NAMES 32

typedef struct sy_lambda_names {
    char name[SY_LAMBDA_NAMES][96]; /* metric-ready names */
    int64_t count[SY_LAMBDA_NAMES];
    size_t n;
    int64_t other;                  /* names past the table */
} sy_lambda_names;

typedef struct sy_lambda_stats {
    pthread_mutex_t mu;             /* guards the tables below */
    int64_t hist[SY_LAMBDA_HIST];
    int64_t hist_n;
    sy_lambda_names throttled;      /* 429s by Reason */
    sy_lambda_names errors;         /* failures by error type */
    _Atomic int64_t submitted;
    _Atomic int64_t by_outcome[5];  /* indexed by sy_outcome, DEFERRED too */
    _Atomic int64_t retries;        /* tries repeated inside the plugin */
    _Atomic int64_t queued;         /* accepted, not yet on the wire */
    _Atomic int64_t connections;    /* connections opened (curl's
                                       CURLINFO_NUM_CONNECTS, summed) */
    _Atomic int64_t http2;          /* answers that came over HTTP/2 */
} sy_lambda_stats;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    sy_lambda_settings set;

    /* capacity: read by any thread, written by the loop (limit, pause) and
     * by submit/complete (used) */
    _Atomic int64_t used;
    _Atomic int64_t limit;          /* the adaptive limit, <= max_in_flight */
    _Atomic int64_t paused_until;   /* monotonic ms; 0 when not paused */
    int64_t aimd_acc;               /* loop only: successes since a raise */
    int64_t aimd_last_cut;          /* loop only: monotonic ms */

    sy_sdk_inflight inflight;
    sy_lambda_stats stats;

    /* loop thread */
    sy_http_loop *http;             /* the thread, its queues, the multi */
    uv_timer_t pause_timer;
    uv_timer_t refresh_timer;       /* expiring metadata credentials
                                       fetched again, idle or not */
    CURLM *multi;                   /* http's; NULL once it stops */
    CURL *spare[1024];              /* easy handles kept for reuse */
    size_t n_spare;
    uint64_t rng;
    sy_lambda_job *waiting;         /* jobs waiting for credentials */
    sy_lambda_creds creds;          /* loop only after create() */
    uint64_t creds_gen;             /* loop only: bumped when creds change */
    unsigned char sign_key[32];     /* loop only: the day's signing key */
    char sign_day[9];               /* its YYYYMMDD, "" for none */
    uint64_t sign_gen;              /* the creds_gen it was derived from */
    struct sy_lambda_meta *meta;    /* metadata fetch state, or NULL */

    int64_t (*now_ms)(void);        /* the monotonic clock (tests inject) */
    time_t (*wall)(time_t *);       /* the wall clock for X-Amz-Date */
};

/* loop.c */
/* In create(): the HTTP loop made and its thread started.  SY_OK, or an
 * error with one line in err (nothing left running). */
int sy_lambda_loop_start(sy_instance *inst, char *err, size_t err_len);
/* In destroy(): the loop stopped, joined and freed; no-op when none. */
void sy_lambda_loop_stop(sy_instance *inst);
/* Starts (or restarts) a job's try on the loop thread. */
void sy_lambda_loop_begin(sy_instance *inst, sy_lambda_job *job);
/* Runs job again after delay_ms, on the loop. */
void sy_lambda_loop_retry_later(sy_instance *inst, sy_lambda_job *job,
                                int64_t delay_ms);
/* Pauses the instance for ms (capacity() is 0), waking the host after. */
void sy_lambda_loop_pause(sy_instance *inst, int64_t ms);
/* Completes (when it still owns the completion) and frees the job. */
void sy_lambda_job_finish(sy_instance *inst, sy_lambda_job *job,
                          const sy_result *r);
int64_t sy_lambda_now_ms(void);

/* request.c: builds the easy handle's request for one try.  SY_OK, or an
 * error with one line in err (the attempt then fails). */
int sy_lambda_request_prepare(sy_instance *inst, sy_lambda_job *job,
                              CURL *easy, char *err, size_t err_len);

/* response.c: what a finished transfer means, acted on. */
void sy_lambda_response_done(sy_instance *inst, sy_lambda_job *job,
                             CURL *easy, CURLcode code);

/* stats.c */
void sy_lambda_stats_init(sy_lambda_stats *s);
void sy_lambda_stats_fini(sy_lambda_stats *s);
void sy_lambda_stats_latency(sy_lambda_stats *s, uint64_t ns);
void sy_lambda_stats_name(sy_lambda_stats *s, sy_lambda_names *t,
                          const char *name);
void sy_lambda_stats_emit(sy_instance *inst, sy_metric_fn emit, void *sink);
int64_t sy_lambda_capacity(sy_instance *inst);
/* The adaptive limit: one more after `limit` successes, halved on a 429
 * (at most once per 500 ms, so one burst of 429s cuts it once). */
void sy_lambda_aimd_success(sy_instance *inst);
void sy_lambda_aimd_throttled(sy_instance *inst);

/* metadata.c: credentials from the metadata endpoints. */
int sy_lambda_meta_init(sy_instance *inst, char *err, size_t err_len);
void sy_lambda_meta_free(sy_instance *inst);
/* On the loop: 1 when the credentials are usable now (a refresh may have
 * started in the background); 0 when a fetch is under way and the caller
 * parks the job in inst->waiting; -1 when none can be fetched. */
int sy_lambda_meta_ready(sy_instance *inst);
/* On the loop: a metadata transfer finished (true when `easy` was one). */
bool sy_lambda_meta_done(sy_instance *inst, CURL *easy, CURLcode code);

#endif /* SY_LAMBDA_H */
