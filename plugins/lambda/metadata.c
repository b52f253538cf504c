/*
 * metadata.c -- the last link of the credentials chain: the container
 * endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI, or _RELATIVE_URI under
 * http://169.254.170.2, with AWS_CONTAINER_AUTHORIZATION_TOKEN or
 * _TOKEN_FILE), else the instance metadata service with IMDSv2's session
 * token (AWS_EC2_METADATA_SERVICE_ENDPOINT, default
 * http://169.254.169.254; AWS_EC2_METADATA_DISABLED=true turns it off).
 *
 * Fetched on the loop thread with the same curl multi handle as the
 * invocations, so neither a first fetch nor a refresh blocks the loop:
 * jobs that find no usable credentials wait in inst->waiting and start
 * when they arrive (or fail with the reason).  Credentials within five
 * minutes of their expiry are refreshed in the background while still in
 * use; within one minute they are no longer used.  A timer starts that
 * refresh also when no call comes, so an instance idle for hours does not
 * make its next call wait for a fetch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "lambda.h"

#define REFRESH_BEFORE_MS (5 * 60 * 1000)
#define USABLE_BEFORE_MS (60 * 1000)
#define META_TIMEOUT_MS 2000
/* The refresh timer's shortest wait: credentials handed out already
 * inside the refresh window (or a refresh that failed while the old keys
 * still serve) are fetched again this often, not in a loop. */
#define REFRESH_RETRY_MS (30 * 1000)
#define META_MAX_BODY 65536

enum { META_CONTAINER, META_IMDS };
enum { STEP_TOKEN, STEP_ROLE, STEP_CREDS };

typedef struct sy_lambda_meta {
    int kind;
    char *url;          /* container: the full URL; IMDS: the base */
    char *auth;         /* container: the Authorization value, or NULL */
    int step;
    CURL *easy;         /* the fetch in flight, or NULL */
    struct curl_slist *headers;
    char *body;
    size_t len;
    char *imds_token;   /* IMDSv2 session token; never logged */
    char *role;
} sy_lambda_meta;

static char *read_token_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
    return strdup(buf);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

int sy_lambda_meta_init(sy_instance *inst, char *err, size_t err_len)
{
    sy_lambda_meta *m = calloc(1, sizeof *m);
    if (!m) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char *off = env("AWS_EC2_METADATA_DISABLED");
    char url[4096];
    if (full || rel) {
        m->kind = META_CONTAINER;
        snprintf(url, sizeof url, "%s%s", full ? "" : "http://169.254.170.2",
                 full ? full : rel);
        const char *tok = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
        const char *file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
        if (file) {
            m->auth = read_token_file(file);
            if (!m->auth) {
                sy_sdk_errf(err, err_len, "AWS_CONTAINER_AUTHORIZATION_"
                            "TOKEN_FILE: cannot read %s", file);
                free(m);
                return SY_EINVAL;
            }
        } else if (tok) {
            m->auth = strdup(tok);
        }
    } else if (!off || strcasecmp(off, "true") != 0) {
        m->kind = META_IMDS;
        const char *base = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
        snprintf(url, sizeof url, "%s", base ? base : "http://169.254.169.254");
        size_t n = strlen(url);
        while (n > 0 && url[n - 1] == '/')
            url[--n] = '\0';
    } else {
        free(m);
        sy_sdk_errf(err, err_len, "no AWS credentials: none in the settings "
                    "(access_key_id), the environment (AWS_ACCESS_KEY_ID), "
                    "the shared credentials file, or a container endpoint, "
                    "and AWS_EC2_METADATA_DISABLED is set");
        return SY_EINVAL;
    }
    m->url = strdup(url);
    if (!m->url) {
        free(m->auth);
        free(m);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->meta = m;
    return SY_OK;
}

static void end_fetch(sy_instance *inst, sy_lambda_meta *m)
{
    if (m->easy) {
        if (inst->multi)
            curl_multi_remove_handle(inst->multi, m->easy);
        curl_easy_cleanup(m->easy);
        m->easy = NULL;
    }
    curl_slist_free_all(m->headers);
    m->headers = NULL;
    free(m->body);
    m->body = NULL;
    m->len = 0;
}

void sy_lambda_meta_free(sy_instance *inst)
{
    sy_lambda_meta *m = inst->meta;
    if (!m)
        return;
    end_fetch(inst, m);
    free(m->url);
    free(m->auth);
    free(m->imds_token);
    free(m->role);
    free(m);
    inst->meta = NULL;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    sy_lambda_meta *m = arg;
    size_t len = size * n;
    if (m->len + len > META_MAX_BODY)
        return 0;
    char *b = realloc(m->body, m->len + len + 1);
    if (!b)
        return 0;
    memcpy(b + m->len, data, len);
    m->len += len;
    b[m->len] = '\0';
    m->body = b;
    return len;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Starts the request of the current step. */
static bool start_step(sy_instance *inst, sy_lambda_meta *m)
{
    char url[4096 + 256], line[4096 + 64];
    m->easy = curl_easy_init();
    if (!m->easy)
        return false;
    CURL *e = m->easy;
    if (m->kind == META_CONTAINER) {
        snprintf(url, sizeof url, "%s", m->url);
        if (m->auth) {
            snprintf(line, sizeof line, "Authorization: %s", m->auth);
            m->headers = curl_slist_append(NULL, line);
        }
    } else if (m->step == STEP_TOKEN) {
        snprintf(url, sizeof url, "%s/latest/api/token", m->url);
        m->headers = curl_slist_append(
            NULL, "X-aws-ec2-metadata-token-ttl-seconds: 21600");
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
    } else {
        snprintf(url, sizeof url,
                 "%s/latest/meta-data/iam/security-credentials/%s", m->url,
                 m->step == STEP_CREDS ? m->role : "");
        snprintf(line, sizeof line, "X-aws-ec2-metadata-token: %s",
                 m->imds_token);
        m->headers = curl_slist_append(NULL, line);
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, m->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, m);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)META_TIMEOUT_MS);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)META_TIMEOUT_MS);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (curl_multi_add_handle(inst->multi, e) != CURLM_OK) {
        end_fetch(inst, m);
        return false;
    }
    return true;
}

static void fail_waiting(sy_instance *inst, const char *why)
{
    sy_lambda_job *w = inst->waiting;
    inst->waiting = NULL;
    char msg[512];
    snprintf(msg, sizeof msg, "no AWS credentials: %s", why);
    inst->api->log(inst->host, SY_LOG_ERROR, "%s", msg);
    while (w) {
        sy_lambda_job *next = w->next;
        w->next = NULL;
        sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_FAILED,
                       .error = msg};
        sy_lambda_job_finish(inst, w, &r);
        w = next;
    }
}

static void resume_waiting(sy_instance *inst)
{
    sy_lambda_job *w = inst->waiting;
    inst->waiting = NULL;
    while (w) {
        sy_lambda_job *next = w->next;
        w->next = NULL;
        sy_lambda_loop_begin(inst, w);
        w = next;
    }
}

/* Takes the credentials document; false (with why) when unusable. */
static bool take_creds(sy_instance *inst, sy_lambda_meta *m, char *why,
                       size_t why_len)
{
    json_t *j = json_loadb(m->body ? m->body : "", m->len, 0, NULL);
    const char *ak = json_string_value(json_object_get(j, "AccessKeyId"));
    const char *sk = json_string_value(json_object_get(j, "SecretAccessKey"));
    const char *tok = json_string_value(json_object_get(j, "Token"));
    const char *exp = json_string_value(json_object_get(j, "Expiration"));
    struct tm tm = {0};
    bool ok = ak && sk && ak[0] && sk[0];
    if (!ok)
        snprintf(why, why_len, "the metadata answer has no "
                 "AccessKeyId/SecretAccessKey");
    int64_t expires = 0;
    if (ok && exp) {
        const char *end = strptime(exp, "%Y-%m-%dT%H:%M:%S", &tm);
        if (end)
            expires = (int64_t)timegm(&tm) * 1000;
    }
    if (ok) {
        sy_lambda_creds c = {0};
        c.access_key = strdup(ak);
        c.secret_key = strdup(sk);
        c.session_token = tok && tok[0] ? strdup(tok) : NULL;
        c.expires_ms = expires;
        snprintf(c.source, sizeof c.source, "%s",
                 m->kind == META_CONTAINER ? "the container endpoint"
                                           : "the instance metadata service");
        if (!c.access_key || !c.secret_key || (tok && tok[0] && !c.session_token)) {
            sy_lambda_creds_clear(&c);
            snprintf(why, why_len, "out of memory");
            ok = false;
        } else {
            sy_lambda_creds_clear(&inst->creds);
            inst->creds = c;
            inst->creds_gen++;
        }
    }
    json_decref(j);
    return ok;
}

static void on_refresh_due(uv_timer_t *t)
{
    sy_instance *inst = t->data;
    if (!inst->meta)
        return;
    /* The timer runs on the loop's clock, the expiry on the wall clock: a
     * timer that fires before the refresh window opens (the loop's cached
     * time ran behind when it was armed) is armed again for what is left;
     * sy_lambda_meta_ready would find nothing stale and the idle refresh
     * would stop here. */
    int64_t left = inst->creds.expires_ms - REFRESH_BEFORE_MS - wall_ms();
    if (inst->creds.expires_ms != 0 && left > 0) {
        uv_timer_start(t, on_refresh_due, (uint64_t)left, 0);
        return;
    }
    (void)sy_lambda_meta_ready(inst);
}

/* Arms the idle refresh for credentials that expire. */
static void arm_refresh(sy_instance *inst, int64_t delay_ms)
{
    if (inst->creds.expires_ms == 0)
        return;
    if (delay_ms <= 0)
        delay_ms = REFRESH_RETRY_MS;
    /* From now, not from the loop's time cached before this callback. */
    uv_update_time(inst->refresh_timer.loop);
    uv_timer_start(&inst->refresh_timer, on_refresh_due, (uint64_t)delay_ms, 0);
}

bool sy_lambda_meta_done(sy_instance *inst, CURL *easy, CURLcode code)
{
    sy_lambda_meta *m = inst->meta;
    if (!m || easy != m->easy)
        return false;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    char why[300] = "";
    bool ok = code == CURLE_OK && status == 200 && m->body;
    if (!ok)
        snprintf(why, sizeof why, "%s answered %s (%ld)",
                 m->kind == META_CONTAINER ? "the container endpoint"
                                           : "the instance metadata service",
                 code == CURLE_OK ? "with an error" : curl_easy_strerror(code),
                 status);
    char *body = ok ? strndup(m->body, m->len) : NULL;
    if (ok && m->kind == META_IMDS && m->step != STEP_CREDS) {
        if (body) {
            body[strcspn(body, "\r\n")] = '\0';
            free(m->step == STEP_TOKEN ? m->imds_token : m->role);
            *(m->step == STEP_TOKEN ? &m->imds_token : &m->role) = body;
            body = NULL;
            m->step++;
            end_fetch(inst, m);
            if (start_step(inst, m))
                return true;
            snprintf(why, sizeof why, "cannot start a metadata request");
        }
        ok = false;
    } else if (ok) {
        ok = take_creds(inst, m, why, sizeof why);
    }
    free(body);
    end_fetch(inst, m);
    if (ok) {
        arm_refresh(inst, inst->creds.expires_ms - REFRESH_BEFORE_MS - wall_ms());
        resume_waiting(inst);
    } else if (inst->creds.access_key &&
               (inst->creds.expires_ms == 0 ||
                wall_ms() < inst->creds.expires_ms - USABLE_BEFORE_MS)) {
        /* A failed refresh: the old keys still serve; the next job tries
         * again. */
        inst->api->log(inst->host, SY_LOG_WARN,
                       "refreshing credentials failed: %s", why);
        arm_refresh(inst, REFRESH_RETRY_MS);
        resume_waiting(inst);
    } else {
        fail_waiting(inst, why);
    }
    return true;
}

int sy_lambda_meta_ready(sy_instance *inst)
{
    sy_lambda_meta *m = inst->meta;
    const sy_lambda_creds *c = &inst->creds;
    if (!m)
        return c->access_key != NULL ? 1 : -1;
    int64_t now = wall_ms();
    bool usable = c->access_key &&
                  (c->expires_ms == 0 || now < c->expires_ms - USABLE_BEFORE_MS);
    bool stale = !usable ||
                 (c->expires_ms != 0 && now >= c->expires_ms - REFRESH_BEFORE_MS);
    if (stale && !m->easy) {
        m->step = m->kind == META_IMDS ? STEP_TOKEN : STEP_CREDS;
        if (!start_step(inst, m) && !usable)
            return -1;
    }
    return usable ? 1 : 0;
}
