/*
 * exec_refresh.c -- an exec credential kept fresh on the loop thread.
 *
 * The command may take seconds (a cloud CLI asking its metadata server),
 * so the loop never runs it: a helper thread does (sy_k8s_exec_run, 30 s
 * at most) and hands the result back under exec_mu through exec_async.  A
 * refresh begins a minute before the credential's expirationTimestamp
 * (half its life before, when it lives less than two minutes) and when
 * the API server answers 401.  Until the new credential arrives, requests
 * carry the old one while it is still good; once it has expired, or after
 * a 401, they are held (sy_k8s_exec_hold) and started when it arrives;
 * the refused request itself is held and sent once more (loop.c), as is
 * one refused after a refresh that came since it was sent.  A refresh
 * that fails (30 s at most) answers the held requests 401 with its one
 * line (the file, the field, the exit status, the stderr tail; never the
 * token), and any refused in the 10 s after it; it is logged, and tried
 * again after those 10 s.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "kubernetes.h"

#define RETRY_MS 10000
#define MARGIN_MS 60000

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *helper(void *arg)
{
    sy_instance *inst = arg;
    sy_k8s_cred cred;
    char err[512];
    int rc = sy_k8s_exec_run(inst->set.conn.exec, &inst->exec_child, &cred,
                             err, sizeof err);
    pthread_mutex_lock(&inst->exec_mu);
    sy_k8s_cred_free(&inst->exec_cred);
    inst->exec_rc = rc;
    if (rc == SY_OK)
        inst->exec_cred = cred;
    else
        snprintf(inst->exec_err, sizeof inst->exec_err, "%s", err);
    if (!inst->exec_closed)
        uv_async_send(&inst->exec_async);
    pthread_mutex_unlock(&inst->exec_mu);
    return NULL;
}

static void begin(sy_instance *inst)
{
    if (inst->exec_running)
        return;
    inst->exec_last_ms = sy_k8s_now_ms();
    int rc = pthread_create(&inst->exec_thread, NULL, helper, inst);
    if (rc != 0) {
        inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: %s: cannot "
                       "start a thread to refresh the credential: %s",
                       inst->set.conn.exec->where, strerror(rc));
        return;
    }
    inst->exec_running = true;
}

static void on_timer(uv_timer_t *t)
{
    begin(t->data);
}

/* The refresh timer, from the credential's expiry (none: no timer). */
static void arm(sy_instance *inst, int64_t obtained_ms)
{
    int64_t exp = inst->set.conn.expiry_ms;
    if (exp <= 0)
        return;
    int64_t life = exp - obtained_ms, margin = MARGIN_MS;
    if (life / 2 < margin)
        margin = life / 2;
    int64_t delay = exp - margin - wall_ms();
    if (delay < 1000)
        delay = 1000;
    uv_timer_start(&inst->exec_timer, on_timer, (uint64_t)delay, 0);
}

static void replace(char **slot, char *v, size_t len)
{
    if (*slot) {
        OPENSSL_cleanse(*slot, len);
        free(*slot);
    }
    *slot = v;
}

/* r's answer made the server's refusal, `why` its Status message. */
static void refuse(sy_k8s_req *r, const char *why)
{
    json_t *st = json_pack("{s:s, s:s, s:i}", "kind", "Status", "message",
                           why, "code", 401);
    char *body = st ? json_dumps(st, JSON_COMPACT) : NULL;
    json_decref(st);
    free(r->body);
    r->body = body;
    r->body_len = r->body_cap = body ? strlen(body) : 0;
    r->status = 401;
    r->code = CURLE_OK;
}

/* The held requests: started with the new credential (err NULL), or
 * answered as the server would refuse them, the command's error their
 * Status message. */
static void release(sy_instance *inst, const char *err)
{
    sy_k8s_req *r = inst->exec_held;
    inst->exec_held = NULL;
    inst->exec_stale = false;
    while (r) {
        sy_k8s_req *next = r->held_next;
        char why[512];
        r->held_next = NULL;
        if (!err && sy_k8s_http_start(inst, r, why, sizeof why) == SY_OK) {
            r = next;
            continue;
        }
        refuse(r, err ? err : why);
        r->done(inst, r); /* may free r */
        r = next;
    }
}

bool sy_k8s_exec_hold(sy_instance *inst, sy_k8s_req *r)
{
    const sy_k8s_conn *c = &inst->set.conn;
    if (!c->exec)
        return false;
    bool expired = c->expiry_ms > 0 && wall_ms() >= c->expiry_ms;
    if (!expired && !inst->exec_stale)
        return false;
    /* a refresh that just failed is not run again for each request */
    if (!inst->exec_running && inst->exec_failed_ms &&
        sy_k8s_now_ms() - inst->exec_failed_ms < RETRY_MS)
        return false;
    begin(inst);
    if (!inst->exec_running)
        return false;
    sy_k8s_req **p = &inst->exec_held;
    while (*p)
        p = &(*p)->held_next;
    r->held_next = NULL;
    *p = r;
    return true;
}

void sy_k8s_exec_unhold(sy_instance *inst, sy_k8s_req *r)
{
    for (sy_k8s_req **p = &inst->exec_held; r && *p; p = &(*p)->held_next)
        if (*p == r) {
            *p = r->held_next;
            r->held_next = NULL;
            return;
        }
}

static void on_result(uv_async_t *a)
{
    sy_instance *inst = a->data;
    sy_k8s_conn *c = &inst->set.conn;
    if (!inst->exec_running)
        return;
    pthread_join(inst->exec_thread, NULL);
    inst->exec_running = false;
    pthread_mutex_lock(&inst->exec_mu);
    sy_k8s_cred cred = inst->exec_cred;
    int rc = inst->exec_rc;
    char err[512];
    snprintf(err, sizeof err, "%s", inst->exec_err);
    memset(&inst->exec_cred, 0, sizeof inst->exec_cred);
    pthread_mutex_unlock(&inst->exec_mu);
    if (rc != SY_OK) {
        inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: cannot refresh "
                       "the credential: %s; trying again in %d s", err,
                       RETRY_MS / 1000);
        inst->exec_failed_ms = sy_k8s_now_ms();
        uv_timer_start(&inst->exec_timer, on_timer, RETRY_MS, 0);
        release(inst, err);
        return;
    }
    char *h = NULL;
    if (cred.token && asprintf(&h, "Authorization: Bearer %s",
                               cred.token) < 0) {
        sy_k8s_cred_free(&cred);
        uv_timer_start(&inst->exec_timer, on_timer, RETRY_MS, 0);
        return;
    }
    replace(&inst->auth_header, h,
            inst->auth_header ? strlen(inst->auth_header) : 0);
    replace(&c->token, cred.token, c->token ? strlen(c->token) : 0);
    if (cred.cert) {
        /* requests copy the blobs (loop.c), so the old ones can go */
        replace(&c->cert, cred.cert, c->cert_len);
        c->cert_len = cred.cert_len;
        replace(&c->key, cred.key, c->key_len);
        c->key_len = cred.key_len;
    } else {
        free(cred.cert);
        if (cred.key) {
            OPENSSL_cleanse(cred.key, cred.key_len);
            free(cred.key);
        }
    }
    c->expiry_ms = cred.expiry_ms;
    inst->api->log(inst->host, SY_LOG_DEBUG, "kubernetes: %s: the credential "
                   "was refreshed; new requests use it", c->exec->where);
    inst->exec_failed_ms = 0;
    inst->exec_credential++;
    arm(inst, wall_ms());
    release(inst, NULL);
}

void sy_k8s_exec_start(sy_instance *inst)
{
    uv_timer_init(sy_http_loop_uv(inst->http), &inst->exec_timer);
    inst->exec_timer.data = inst;
    uv_async_init(sy_http_loop_uv(inst->http), &inst->exec_async, on_result);
    inst->exec_async.data = inst;
    if (inst->set.conn.exec)
        arm(inst, wall_ms());
}

bool sy_k8s_exec_unauthorized(sy_instance *inst, sy_k8s_req *r)
{
    if (!inst->set.conn.exec)
        return false;
    if (inst->exec_running) {
        /* a refresh already on its way: what follows waits for it */
        inst->exec_stale = true;
        return true;
    }
    if (r->credential != inst->exec_credential)
        return true; /* sent before the refresh: it goes with the new one */
    if (inst->exec_failed_ms &&
        sy_k8s_now_ms() - inst->exec_failed_ms < RETRY_MS) {
        /* refused after a refresh that failed: what failed is the why,
         * as for the requests that waited for it (not the server's bare
         * "Unauthorized") */
        char err[512];
        pthread_mutex_lock(&inst->exec_mu);
        snprintf(err, sizeof err, "%s", inst->exec_err);
        pthread_mutex_unlock(&inst->exec_mu);
        refuse(r, err);
        return false;
    }
    if (inst->exec_last_ms && sy_k8s_now_ms() - inst->exec_last_ms < 5000)
        return false;
    inst->api->log(inst->host, SY_LOG_INFO, "kubernetes: the API server "
                   "answered 401; running the exec credential plugin again");
    begin(inst);
    inst->exec_stale = inst->exec_running;
    return inst->exec_stale;
}

void sy_k8s_exec_join(sy_instance *inst)
{
    int pid = inst->exec_child;
    if (pid > 0)
        kill((pid_t)pid, SIGKILL); /* a command stuck on a network */
    if (inst->exec_running)
        pthread_join(inst->exec_thread, NULL);
    inst->exec_running = false;
    sy_k8s_cred_free(&inst->exec_cred);
}
