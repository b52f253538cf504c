/*
 * engine/lease.h -- a host whose lease lapsed.
 *
 * A host holds its runs under leases it renews every third of their
 * length.  When its clock says one of them has passed (the process was
 * stopped, the clock jumped, the store stalled the renewals), another host
 * may have taken the run over, or may at any moment: whatever this host
 * still believes of its runs may be behind the store.  It finds out
 * before its next write (before each batch, each claim, each renewal and
 * each event), and then lapses: it logs one line saying why, takes no more
 * work, cancels every attempt it has with the executors (which end their
 * process groups), and writes nothing more.  Once the attempts are back,
 * `serve` comes back as a new host (a new owner id: its old runs are for
 * any host to take over, this one included), and `run` ends
 * (SY_ENGINE_LAPSED).
 */
#ifndef SY_ENGINE_LEASE_H
#define SY_ENGINE_LEASE_H

#include "engine/internal.h"

/* Whether the host has lapsed: true once a run it works on is past its
 * lease at `now` (the lapse is then made, once), and until
 * sy_lease_reregister.  Cheap while no lease has passed: one pass over the
 * runs. */
bool sy_lease_lapsed(sy_engine *e, int64_t now);

/* Drops the writes a lapsed host still had marked: they are never made. */
void sy_lease_forget_writes(sy_engine *e);

/* Comes back as a new host: a new owner id, and no longer lapsed.  Only
 * once every run of the old one is freed. */
void sy_lease_reregister(sy_engine *e);

#endif
