/* What `switchyard limits` shows (service/limits.h). */
#include "service/limits.h"

#include <stdio.h>
#include <string.h>

#include "service/limits_waiters.h"
#include "store/rates.h"
#include "store/slots.h"

static json_t *entry(json_t *keys, const char *key, int64_t limit)
{
    json_t *e = json_object_get(keys, key);
    if (!e) {
        e = json_pack("{s:s, s:I, s:o, s:[], s:I, s:[]}", "key", key, "held", (json_int_t)0,
                      "limit", limit > 0 ? json_integer(limit) : json_null(), "holders",
                      "waiting", (json_int_t)0, "waiters");
        json_object_set_new(keys, key, e);
    }
    return e;
}

static int add_holder(void *arg, const sy_slot_record *r)
{
    if (!r->live)
        return 0;
    json_t *e = entry(arg, r->key, 0);
    json_object_set_new(e, "held",
                        json_integer(json_integer_value(json_object_get(e, "held")) + r->n));
    json_array_append_new(
        json_object_get(e, "holders"),
        json_pack("{s:I, s:I, s:o, s:I, s:I, s:s, s:I}", "run", (json_int_t)r->holder.run_id,
                  "task", (json_int_t)r->holder.idx, "element",
                  r->holder.elem >= 0 ? json_integer(r->holder.elem) : json_null(), "token",
                  (json_int_t)r->holder.token, "slots", (json_int_t)r->n, "host",
                  r->owner ? r->owner : "", "since", (json_int_t)r->taken));
    return 0;
}

/* A bucket as listed: its tokens at the read's `now`, by the take's
 * arithmetic; what a row written before rate and burst were kept cannot
 * say is null. */
typedef struct {
    json_t *list;
    int64_t now;
} bucket_list;

static int add_bucket(void *arg, const sy_rate_bucket_row *b)
{
    bucket_list *c = arg;
    int64_t tokens = 0, next_ms = -1;
    bool known = sy_rate_bucket_at(b, c->now, &tokens, &next_ms);
    json_t *row = json_pack(
        "{s:s, s:o, s:o, s:I, s:o, s:o}", "key", b->key, "tokens",
        known ? json_integer(tokens) : json_null(), "rate",
        known ? json_integer(b->rate) : json_null(), "interval_ms",
        (json_int_t)b->state.interval_ms, "burst", known ? json_integer(b->burst) : json_null(),
        "next_token_ms", known && next_ms >= 0 ? json_integer(next_ms) : json_null());
    json_array_append_new(c->list, row);
    return 0;
}

/* `list`'s objects in the order of their "key" (few: an insertion sort). */
static void sort_by_key(json_t *list)
{
    size_t n = json_array_size(list);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            json_t *a = json_array_get(list, j - 1), *b = json_array_get(list, j);
            if (strcmp(json_string_value(json_object_get(a, "key")),
                       json_string_value(json_object_get(b, "key"))) <= 0)
                break;
            json_incref(a);
            json_array_set(list, j - 1, b);
            json_array_set_new(list, j, a);
        }
}

/* The named rate limits of `flow` no take has made a bucket of yet
 * ("rate:@NAME"): listed full, at their rate, so that the configured
 * ones show before their first task. */
static void add_named_rates(json_t *rates, const sy_flow_config *flow)
{
    for (size_t i = 0; flow && i < flow->n_rates; i++) {
        const sy_rate_config *r = &flow->rates[i];
        char key[80];
        snprintf(key, sizeof key, "rate:@%s", r->name);
        bool listed = false;
        size_t j;
        json_t *row;
        json_array_foreach(rates, j, row)
            listed = listed || strcmp(json_string_value(json_object_get(row, "key")), key) == 0;
        if (!listed)
            json_array_append_new(
                rates, json_pack("{s:s, s:I, s:I, s:I, s:I, s:n}", "key", key, "tokens",
                                 (json_int_t)r->burst, "rate", (json_int_t)r->rate,
                                 "interval_ms", (json_int_t)r->interval_ms, "burst",
                                 (json_int_t)r->burst, "next_token_ms"));
    }
}

json_t *sy_limits_list(sy_store *s, const sy_flow_config *flow, int64_t now, char *err,
                       size_t err_len)
{
    json_t *keys = json_object();
    char name[1100];
    for (size_t i = 0; flow && i < flow->n_pools; i++) {
        snprintf(name, sizeof name, "pool:%s", flow->pools[i].name);
        entry(keys, name, flow->pools[i].size);
    }
    for (size_t i = 0; flow && i < flow->n_tenants; i++) {
        if (flow->tenants[i].max_running <= 0)
            continue;
        snprintf(name, sizeof name, "tenant:%s", flow->tenants[i].name);
        entry(keys, name, flow->tenants[i].max_running);
    }
    if (sy_store_list_slots(s, now, add_holder, keys) != SY_OK) {
        snprintf(err, err_len, "%s", sy_store_errmsg(s));
        json_decref(keys);
        return NULL;
    }
    if (sy_limits_add_waiters(keys, s, flow, now, entry, err, err_len) != SY_OK) {
        json_decref(keys);
        return NULL;
    }
    /* In key order: json objects keep insertion order. */
    json_t *list = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(keys, k, v)
        json_array_append(list, v);
    json_decref(keys);
    sort_by_key(list);
    bucket_list c = {json_array(), now};
    if (sy_store_list_rate_buckets(s, add_bucket, &c) != SY_OK) {
        snprintf(err, err_len, "%s", sy_store_errmsg(s));
        json_decref(c.list);
        json_decref(list);
        return NULL;
    }
    add_named_rates(c.list, flow);
    sort_by_key(c.list);
    return json_pack("{s:o, s:o}", "keys", list, "rates", c.list);
}
