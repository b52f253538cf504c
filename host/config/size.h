/*
 * config/size.h -- a size setting: an integer of bytes, or a string "N",
 * "NB", "NKiB" or "NMiB" (log_limit, admin.max_body, admin.max_header).
 *
 * Threading: no shared state; any thread.
 */
#ifndef SY_CFG_SIZE_H
#define SY_CFG_SIZE_H

#include <libconfig.h>

/* The setting's size in bytes, or -1 when it is none of the forms above
 * or over `hi` (the caller says which bound it breaks). */
long long sy_cfg_size(const config_setting_t *s, long long hi);

#endif
