/*
 * service/events_keep.h -- keeping named events and what triggers made of
 * them to events_keep (docs/events.md): `serve` hourly, `gc` when it runs.
 *
 * What no trigger needs is deleted: each trigger of the workflows this
 * process read is asked for the oldest item it has not settled (a pending
 * part of an `all`, events held by a debounce or max_in_flight); nothing
 * from then on is deleted for it.  Single-threaded, as service.h.
 */
#ifndef SY_SERVICE_EVENTS_KEEP_H
#define SY_SERVICE_EVENTS_KEEP_H

#include "service/service.h"
#include "store/named_events.h"

/* Deletes what is older than events_keep before `now` and needed by no
 * trigger; *pruned says how much.  SY_OK, or the store's error in err. */
int sy_service_events_prune(sy_service *sv, int64_t now, sy_named_pruned *pruned, char *err,
                            size_t err_len);

/* The serving host's hourly pass: prunes and logs what it deleted, or why
 * it could not. */
void sy_service_events_prune_logged(sy_service *sv);

#endif
