/*
 * service/audit.h -- writing the audit trail (store/audit.h) for the
 * command line, signals and the admin API, and keeping it to audit_keep.
 *
 * Loop thread (or the command line's one thread).
 */
#ifndef SY_SERVICE_AUDIT_H
#define SY_SERVICE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "store/audit.h"

struct sy_service;

/* How often a serving host deletes audit rows past audit_keep. */
#define SY_AUDIT_PRUNE_MS ((int64_t)3600 * 1000)

/* Adds r to the store's audit trail (r->at 0: now).  A row that cannot
 * be written is logged in one line (naming the action), never the
 * change's failure: the change is made by then.  No store: nothing. */
void sy_service_audit(struct sy_service *sv, const sy_audit_record *r);

/* The command line's row: who is this process's user, role "local",
 * origin "cli".  The command line records the changes it made: one it
 * refused changed nothing, the store included (the API records its
 * refusals: they come from elsewhere). */
void sy_service_audit_local(struct sy_service *sv, const char *action, const char *target,
                            bool ok, const char *detail);

/* One row as the API and `switchyard audit --json` give it: {"id", "at",
 * "who", "role", "action", "target", "origin", "ok", "status",
 * "detail"}; a new reference. */
json_t *sy_audit_json(const sy_audit_record *r);

/* The name of this process's user ("uid N" without a passwd entry). */
void sy_audit_user(char *buf, size_t len);

/* Deletes the rows older than audit_keep before `now`; *deleted how
 * many.  SY_OK or the store's error in err. */
int sy_service_audit_prune(struct sy_service *sv, int64_t now, size_t *deleted, char *err,
                           size_t err_len);

/* While serving: prunes at once and every SY_AUDIT_PRUNE_MS, on the
 * loop, logging what it deleted; stopped by sy_service_audit_stop. */
void sy_service_audit_start(struct sy_service *sv);
void sy_service_audit_stop(struct sy_service *sv);

#endif
