/*
 * nvml.h -- the part of NVML the gpu plugin uses, loaded with dlopen.
 *
 * The plugin neither includes nvml.h nor links libnvidia-ml: it builds on
 * any machine, and loads on one without a driver (it then has no device
 * and says why).  The few types and constants below are NVML's own, as
 * its header defines them; their values are part of NVML's stable ABI.
 */
#ifndef SY_GPU_NVML_H
#define SY_GPU_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"

#define SY_NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"

/* NVML's event types (nvmlEventType*). */
#define SY_NVML_EVENT_DBE 0x2ULL   /* nvmlEventTypeDoubleBitEccError */
#define SY_NVML_EVENT_XID 0x8ULL   /* nvmlEventTypeXidCriticalError */

/* One device tasks are given: a whole GPU, or with `mig = true` one MIG
 * instance of a GPU in MIG mode. */
typedef struct sy_nvml_dev_info {
    unsigned index;          /* NVML's index of the GPU */
    char uuid[96];           /* "GPU-..." or "MIG-..." */
    char gpu_uuid[96];       /* the GPU's (the same for a whole GPU) */
    char name[96];
    int64_t mem_mib;
    int mig;                 /* 1: MIG mode on, 0: off, -1: unknown */
    int mig_instance;        /* the MIG device's index, -1: a whole GPU */
    int island;
    uint64_t watched;        /* the SY_NVML_EVENT_* types NVML accepted to
                                report for its GPU (0: unwatched) */
} sy_nvml_dev_info;

/* A health event read from NVML. */
typedef struct sy_nvml_event {
    int dev;                 /* a loaded device on the GPU it came from
                                (events are per GPU, not per MIG
                                instance), or -1 */
    uint64_t type;           /* SY_NVML_EVENT_* */
    uint64_t data;           /* the Xid for XID events */
} sy_nvml_event;

typedef struct sy_nvml sy_nvml;

/* Opens `library` (NULL: libnvidia-ml.so.1), initialises NVML and lists
 * the devices, keeping those whose UUID is in `only` (n_only == 0: all),
 * at most SY_GS_MAX_DEVS.  With `mig`, a GPU in MIG mode is listed as its
 * MIG instances instead of whole.  Never fails for lack of a driver: returns an
 * sy_nvml with zero devices and the reason in sy_nvml_reason().  NULL
 * only out of memory. */
sy_nvml *sy_nvml_open(const char *library, const char *const *only,
                      size_t n_only, bool mig);
void sy_nvml_close(sy_nvml *n);

/* Why there is no device ("" when there are some). */
const char *sy_nvml_reason(const sy_nvml *n);
/* True when health events are watched. */
bool sy_nvml_watching(const sy_nvml *n);

size_t sy_nvml_count(const sy_nvml *n);
const sy_nvml_dev_info *sy_nvml_dev(const sy_nvml *n, size_t i);

/* Reads one pending health event without waiting (timeout 0).  1 with
 * *ev filled, 0 when none is pending (or events are not watched). */
int sy_nvml_poll(sy_nvml *n, sy_nvml_event *ev);

/* True when an Xid is the application's own fault (13, 31, 43, 45, 68,
 * 109: the classification Kubernetes' device plugin uses), so the device
 * stays in service. */
bool sy_nvml_xid_is_app(uint64_t xid);

#endif
