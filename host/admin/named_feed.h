/*
 * admin/named_feed.h -- named events (docs/events.md) as the event stream
 * (GET /api/v1/events, admin/api_events.c) tells them: the store is read
 * every SY_ADMIN_NAMED_FEED_MS while someone listens, so an event recorded
 * by this host, by `switchyard emit` on the same store or by another host
 * is heard, each once, in the order of its id.
 *
 * Loop thread only.
 */
#ifndef SY_ADMIN_NAMED_FEED_H
#define SY_ADMIN_NAMED_FEED_H

#include <stdint.h>

#include "admin/internal.h"

#define SY_ADMIN_NAMED_FEED_MS 500
/* A payload longer than this (compact JSON) is left out of the stream's
 * event, said by its size: the stream is for watching, and
 * GET /api/v1/named-events has it whole. */
#define SY_ADMIN_NAMED_FEED_DATA_MAX 1024
/* Events read per look: more recorded between two looks are told up to
 * this many, the newest. */
#define SY_ADMIN_NAMED_FEED_BATCH 100

typedef struct sy_admin_named_feed sy_admin_named_feed;

/* Called with each new event as the data of a stream event `named`:
 * {"event_id", "name", "key" (null: none), "created", "data_bytes",
 * "data" (absent over SY_ADMIN_NAMED_FEED_DATA_MAX)}; the string lives
 * for the call. */
typedef void (*sy_admin_named_feed_fn)(void *arg, const char *json);

/* Starts looking from the newest event stored now (older ones are never
 * told).  NULL when out of memory. */
sy_admin_named_feed *sy_admin_named_feed_start(sy_admin *a, sy_admin_named_feed_fn fn,
                                               void *arg);

/* Looks now, before a client joins: it hears only what comes after. */
void sy_admin_named_feed_now(sy_admin_named_feed *f);

/* Looks at the next loop turn: this host just recorded an event. */
void sy_admin_named_feed_soon(sy_admin_named_feed *f);

/* Stops and frees (the timer after the loop turns). */
void sy_admin_named_feed_stop(sy_admin_named_feed *f);

#endif
