/* The host function table lent to plugins (sy_host_api in executor.h), and
 * the slot table behind completion tokens. */
#include "executor/host_api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/json_params.h>

#include "base/log.h"
#include "base/util.h"
#include "executor/emit.h"

/* A token is (generation << HALF) | (index + 1): never 0, and a value a
 * plugin invents or keeps too long names no live slot, because a slot's
 * generation changes every time it is given back. */
#define SY_TOKEN_HALF (sizeof(uintptr_t) * 4)
#define SY_TOKEN_MASK (((uintptr_t)1 << SY_TOKEN_HALF) - 1)

enum { SLOT_FREE, SLOT_LIVE, SLOT_CLAIMED };

/* Who held a slot, copied so that a refusal can be reported after the
 * record, the run and its workflow are gone. */
typedef struct {
    sy_host *host; /* cleared by sy_completion_forget_host */
    char who[48];
    char ns[64];
} slot_owner;

typedef struct {
    uintptr_t gen;       /* of the current (or next) occupant */
    int state;
    sy_completion *rec;  /* LIVE or CLAIMED: the submitter's record */
    slot_owner cur;
    uintptr_t prev_gen;  /* the occupant before, for late calls */
    slot_owner prev;
    size_t next_free;
} slot;

/* One lock for the table: every access is a few stores, and a submit, its
 * complete() and its retire each take it once. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *slots;
static size_t n_slots, cap_slots;
static size_t free_head = SIZE_MAX;
static atomic_uint_fast64_t refused_unknown;
static atomic_int refused_unknown_logged;

/* A bounded copy, NUL-terminated: every submit makes two, so no printf. */
static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static void owner_set(slot_owner *o, sy_host *host, const char *who, const char *ns)
{
    o->host = host;
    copy_name(o->who, sizeof o->who, who ? who : "?");
    copy_name(o->ns, sizeof o->ns, ns);
}

/* Takes a slot (a freed one first) and packs its index and generation
 * into the token. */
static void mint(sy_completion *c, sy_host *host, const char *who, const char *ns,
                 void (*on_complete)(sy_completion *, const sy_result *), void *data)
{
    *c = (sy_completion){.on_complete = on_complete, .data = data, .host = host,
                         .who = who, .ns = ns};
    pthread_mutex_lock(&table_lock);
    size_t i = free_head;
    if (i != SIZE_MAX) {
        free_head = slots[i].next_free;
    } else {
        if (n_slots == SY_TOKEN_MASK) {
            /* Only reachable with 16-bit halves (32-bit hosts): more
             * submits in flight than a token can number. */
            fputs("switchyard: too many completions in flight\n", stderr);
            abort();
        }
        if (n_slots == cap_slots) {
            size_t cap = cap_slots ? cap_slots * 2 : 64;
            slot *v = sy_xmalloc(cap * sizeof *v);
            if (n_slots)
                memcpy(v, slots, n_slots * sizeof *v);
            free(slots);
            slots = v;
            cap_slots = cap;
        }
        i = n_slots++;
        slots[i] = (slot){.gen = 1};
    }
    slot *s = &slots[i];
    s->state = SLOT_LIVE;
    s->rec = c;
    owner_set(&s->cur, host, who, ns);
    c->token = (sy_completion *)(((s->gen & SY_TOKEN_MASK) << SY_TOKEN_HALF) | (i + 1));
    pthread_mutex_unlock(&table_lock);
}

void sy_completion_init_for(sy_completion *c, sy_host *host, const char *ns,
                            void (*on_complete)(sy_completion *, const sy_result *),
                            void *data)
{
    mint(c, host, host ? host->name : NULL, ns, on_complete, data);
}

void sy_completion_init(sy_completion *c, const char *who,
                        void (*on_complete)(sy_completion *, const sy_result *),
                        void *data)
{
    mint(c, NULL, who, NULL, on_complete, data);
}

bool sy_completion_retire(sy_completion *c)
{
    if (!c->token)
        return false;
    size_t i = ((uintptr_t)c->token & SY_TOKEN_MASK) - 1;
    pthread_mutex_lock(&table_lock);
    slot *s = &slots[i];
    bool claimed = s->state == SLOT_CLAIMED;
    s->prev_gen = s->gen;
    s->prev = s->cur;
    s->gen = (s->gen + 1) & SY_TOKEN_MASK;
    if (!s->gen)
        s->gen = 1;
    s->state = SLOT_FREE;
    s->rec = NULL;
    s->next_free = free_head;
    free_head = i;
    pthread_mutex_unlock(&table_lock);
    c->token = NULL;
    return claimed;
}

void sy_completion_forget_host(const sy_host *h)
{
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < n_slots; i++) {
        if (slots[i].cur.host == h)
            slots[i].cur.host = NULL;
        if (slots[i].prev.host == h)
            slots[i].prev.host = NULL;
    }
    pthread_mutex_unlock(&table_lock);
}

uint64_t sy_completion_refused(const sy_host *h)
{
    return h ? atomic_load(&h->refused) : atomic_load(&refused_unknown);
}

/* Counts a refused complete() against its instance (when one can be
 * named) and logs only the instance's first.  Under table_lock, so that
 * forget_host cannot race the use of the host. */
static void refuse(const slot_owner *o, const char *why)
{
    sy_host *h = o ? o->host : NULL;
    atomic_int *logged = h ? &h->refused_logged : &refused_unknown_logged;
    atomic_fetch_add(h ? &h->refused : &refused_unknown, 1);
    if (atomic_exchange(logged, 1))
        return;
    if (!o) {
        sy_log(SY_LOG_ERROR, NULL,
               "plugin bug: complete() %s; refused (further refusals without a known "
               "instance are counted, not logged)",
               why);
        return;
    }
    const char *plugin = h && h->plugin ? h->plugin : "?";
    sy_log(SY_LOG_ERROR, o->who,
           "plugin bug: executor '%s', instance '%s'%s%s%s: complete() %s; refused "
           "(further refusals for this instance are counted, not logged)",
           plugin, o->who, o->ns[0] ? ", task namespace '" : "", o->ns,
           o->ns[0] ? "'" : "", why);
}

static void api_complete(sy_completion *token, const sy_result *r)
{
    uintptr_t v = (uintptr_t)token;
    uintptr_t gen = v >> SY_TOKEN_HALF;
    size_t i = (size_t)(v & SY_TOKEN_MASK);
    pthread_mutex_lock(&table_lock);
    slot *s = i && i <= n_slots ? &slots[i - 1] : NULL;
    if (!token) {
        refuse(NULL, "with a NULL token");
    } else if (!s) {
        refuse(NULL, "with a token the host did not hand out");
    } else if (s->gen == gen && s->state == SLOT_LIVE) {
        sy_completion *c = s->rec;
        s->state = SLOT_CLAIMED;
        pthread_mutex_unlock(&table_lock);
        /* Outside the lock: the record stays alive until it is retired,
         * and its owner retires it only after on_complete has queued it. */
        sy_result failed = {.size = sizeof failed, .outcome = SY_OUTCOME_FAILED, .output = NULL, .output_len = 0, .error = "plugin bug: complete() with a NULL or unsized result"};
        if (!r || !SY_HAS_FIELD(r, sy_result, error))
            r = &failed;
        c->on_complete(c, r);
        return;
    } else if (s->gen == gen && s->state == SLOT_CLAIMED) {
        refuse(&s->cur, "called a second time for one submit");
    } else if (s->prev_gen == gen && gen) {
        refuse(&s->prev, "after its submit was over (refused, completed, or released)");
    } else {
        refuse(NULL, "with a token the host did not hand out, or one long stale");
    }
    pthread_mutex_unlock(&table_lock);
}

/* The record stays alive while the plugin has not completed it, and the
 * contract has the plugin call this before complete(): the lookup is
 * checked under the lock, the (possibly long) recording runs outside. */
static int attempt_process(sy_completion *token, int64_t pgid, uint64_t start_time,
                           void (*answer)(void *arg, int status), void *arg)
{
    uintptr_t v = (uintptr_t)token;
    uintptr_t gen = v >> SY_TOKEN_HALF;
    size_t i = (size_t)(v & SY_TOKEN_MASK);
    if (!token || pgid <= 1)
        return SY_EINVAL;
    pthread_mutex_lock(&table_lock);
    slot *s = i && i <= n_slots ? &slots[i - 1] : NULL;
    sy_completion *c = s && s->gen == gen && s->state == SLOT_LIVE ? s->rec : NULL;
    /* Completed already, or its submit is over: nothing to record for. */
    bool over = !c && s && (s->gen == gen || s->prev_gen == gen);
    pthread_mutex_unlock(&table_lock);
    if (!c)
        return over ? SY_ESTATE : SY_EINVAL;
    if (!c->on_process)
        return SY_ENOTSUP;
    return c->on_process(c, pgid, start_time, answer, arg);
}

static int api_attempt_process(sy_completion *token, int64_t pgid, uint64_t start_time)
{
    return attempt_process(token, pgid, start_time, NULL, NULL);
}

static int api_attempt_process_async(sy_completion *token, int64_t pgid,
                                     uint64_t start_time,
                                     void (*answer)(void *arg, int status), void *arg)
{
    if (!answer)
        return SY_EINVAL;
    return attempt_process(token, pgid, start_time, answer, arg);
}

static void api_log(sy_host *h, sy_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_log_fields f = {.instance = h ? h->name : NULL};
    sy_vlogf(level, h ? h->name : NULL, &f, fmt, ap);
    va_end(ap);
}

static void api_wake(sy_host *h)
{
    if (h && h->on_wake)
        h->on_wake(h);
}

const sy_host_api sy_host_api_table = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .complete = api_complete,
    .log = api_log,
    .wake = api_wake,
    /* Settings and task parameters are jansson objects (the views of
     * switchyard/json_params.h): the getters are the SDK's, the same the
     * conformance kit and the test host lend. */
    SY_SDK_JSON_PARAMS_INIT,
    .attempt_process = api_attempt_process,
    .attempt_process_async = api_attempt_process_async,
    .emit_event = sy_emit_event,
};
