/* NVML through dlopen (see nvml.h): the library, the devices, their
 * islands and the health events. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

/* NVML's own types, as far as this file needs them. */
typedef int nvml_ret;                  /* nvmlReturn_t */
typedef void *nvml_device;             /* nvmlDevice_t */
typedef void *nvml_event_set;          /* nvmlEventSet_t */
typedef struct nvml_memory {           /* nvmlMemory_t */
    unsigned long long total, free, used;
} nvml_memory;
typedef struct nvml_event_data {       /* nvmlEventData_t */
    nvml_device device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvml_event_data;

#define NVML_SUCCESS 0
/* nvmlGpuTopologyLevel_t: devices below one PCIe switch (or closer) form
 * an island; NVML_TOPOLOGY_MULTIPLE is 20. */
#define NVML_TOPOLOGY_MULTIPLE 20

struct sy_nvml {
    void *lib;
    bool inited;
    char reason[256];
    nvml_event_set events;
    size_t count;
    nvml_device handle[SY_GS_MAX_DEVS];  /* each device's own */
    nvml_device parent[SY_GS_MAX_DEVS];  /* its GPU's */
    sy_nvml_dev_info info[SY_GS_MAX_DEVS];

    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*get_count)(unsigned *);
    nvml_ret (*by_index)(unsigned, nvml_device *);
    nvml_ret (*get_uuid)(nvml_device, char *, unsigned);
    nvml_ret (*get_name)(nvml_device, char *, unsigned);
    nvml_ret (*get_memory)(nvml_device, nvml_memory *);
    nvml_ret (*get_mig)(nvml_device, unsigned *, unsigned *);
    nvml_ret (*max_mig)(nvml_device, unsigned *);
    nvml_ret (*mig_by_index)(nvml_device, unsigned, nvml_device *);
    nvml_ret (*topology)(nvml_device, nvml_device, int *);
    nvml_ret (*set_create)(nvml_event_set *);
    nvml_ret (*set_free)(nvml_event_set);
    nvml_ret (*register_events)(nvml_device, unsigned long long,
                                nvml_event_set);
    nvml_ret (*set_wait)(nvml_event_set, nvml_event_data *, unsigned);
};

bool sy_nvml_xid_is_app(uint64_t xid)
{
    return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68 ||
           xid == 109;
}

static const char *errstr(const sy_nvml *n, nvml_ret rc)
{
    const char *s = n->error_string ? n->error_string(rc) : NULL;
    return s ? s : "unknown NVML error";
}

/* dlsym into a function pointer without the object-to-function cast
 * warning. */
static void sym(void *lib, const char *name, void *fnptr)
{
    void *p = dlsym(lib, name);
    memcpy(fnptr, &p, sizeof p);
}

static bool bind(sy_nvml *n)
{
    void *l = n->lib;
    sym(l, "nvmlInit_v2", &n->init);
    sym(l, "nvmlShutdown", &n->shutdown);
    sym(l, "nvmlErrorString", &n->error_string);
    sym(l, "nvmlDeviceGetCount_v2", &n->get_count);
    sym(l, "nvmlDeviceGetHandleByIndex_v2", &n->by_index);
    sym(l, "nvmlDeviceGetUUID", &n->get_uuid);
    sym(l, "nvmlDeviceGetName", &n->get_name);
    sym(l, "nvmlDeviceGetMemoryInfo", &n->get_memory);
    /* Optional: older drivers and the fake may lack them. */
    sym(l, "nvmlDeviceGetMigMode", &n->get_mig);
    sym(l, "nvmlDeviceGetMaxMigDeviceCount", &n->max_mig);
    sym(l, "nvmlDeviceGetMigDeviceHandleByIndex", &n->mig_by_index);
    sym(l, "nvmlDeviceGetTopologyCommonAncestor", &n->topology);
    sym(l, "nvmlEventSetCreate", &n->set_create);
    sym(l, "nvmlEventSetFree", &n->set_free);
    sym(l, "nvmlDeviceRegisterEvents", &n->register_events);
    sym(l, "nvmlEventSetWait_v2", &n->set_wait);
    if (!n->set_wait)
        sym(l, "nvmlEventSetWait", &n->set_wait);
    const char *missing = !n->init ? "nvmlInit_v2"
        : !n->shutdown ? "nvmlShutdown"
        : !n->get_count ? "nvmlDeviceGetCount_v2"
        : !n->by_index ? "nvmlDeviceGetHandleByIndex_v2"
        : !n->get_uuid ? "nvmlDeviceGetUUID"
        : !n->get_name ? "nvmlDeviceGetName"
        : !n->get_memory ? "nvmlDeviceGetMemoryInfo" : NULL;
    if (missing)
        snprintf(n->reason, sizeof n->reason, "the NVML library lacks %s",
                 missing);
    return !missing;
}

static bool wanted(const char *uuid, const char *const *only, size_t n_only)
{
    if (!n_only)
        return true;
    for (size_t i = 0; i < n_only; i++)
        if (strcmp(only[i], uuid) == 0)
            return true;
    return false;
}

/* UUID, name and memory of a GPU or a MIG device. */
static bool read_unit(sy_nvml *n, nvml_device h, sy_nvml_dev_info *d)
{
    nvml_memory mem = {0, 0, 0};
    if (n->get_uuid(h, d->uuid, sizeof d->uuid) != NVML_SUCCESS)
        return false;
    d->uuid[sizeof d->uuid - 1] = '\0';
    if (n->get_name(h, d->name, sizeof d->name) != NVML_SUCCESS)
        snprintf(d->name, sizeof d->name, "unknown");
    d->name[sizeof d->name - 1] = '\0';
    if (n->get_memory(h, &mem) == NVML_SUCCESS)
        d->mem_mib = (int64_t)(mem.total / (1024 * 1024));
    return true;
}

static bool read_device(sy_nvml *n, unsigned idx, sy_nvml_dev_info *d,
                        nvml_device *h)
{
    unsigned cur = 0, pend = 0;
    if (n->by_index(idx, h) != NVML_SUCCESS || !read_unit(n, *h, d))
        return false;
    memcpy(d->gpu_uuid, d->uuid, sizeof d->uuid);
    d->mig = -1;
    d->mig_instance = -1;
    if (n->get_mig && n->get_mig(*h, &cur, &pend) == NVML_SUCCESS)
        d->mig = cur ? 1 : 0;
    d->index = idx;
    return true;
}

/* Islands: devices whose closest common ancestor is at most one PCIe
 * switch away join one island (union by smallest index).  Without the
 * topology call, every device is its own island of one... which would
 * split multi-device tasks arbitrarily, so they all share island 0. */
static void find_islands(sy_nvml *n)
{
    for (size_t i = 0; i < n->count; i++)
        n->info[i].island = n->topology ? (int)i : 0;
    if (!n->topology)
        return;
    for (size_t i = 0; i < n->count; i++)
        for (size_t j = i + 1; j < n->count; j++) {
            int level = 0;
            /* MIG instances of one GPU are one island. */
            if (n->parent[i] == n->parent[j] ||
                (n->topology(n->parent[i], n->parent[j], &level) ==
                     NVML_SUCCESS &&
                 level <= NVML_TOPOLOGY_MULTIPLE)) {
                int a = n->info[i].island, b = n->info[j].island;
                int lo = a < b ? a : b, hi = a < b ? b : a;
                for (size_t k = 0; k < n->count; k++)
                    if (n->info[k].island == hi)
                        n->info[k].island = lo;
            }
        }
}

static void watch(sy_nvml *n)
{
    if (!n->set_create || !n->register_events || !n->set_wait ||
        n->set_create(&n->events) != NVML_SUCCESS) {
        n->events = NULL;
        return;
    }
    /* Events are per GPU: register each GPU once, also when it is listed
     * as several MIG instances.  One type at a time: NVML refuses a whole
     * mask when one type is unsupported (no ECC on most consumer GPUs),
     * and Xid events must not be lost with it.  A device that supports
     * neither is still used, unwatched. */
    for (size_t i = 0; i < n->count; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen = seen || n->parent[j] == n->parent[i];
        if (seen)
            continue;
        uint64_t ok = 0;
        if (n->register_events(n->parent[i], SY_NVML_EVENT_XID, n->events) == NVML_SUCCESS)
            ok |= SY_NVML_EVENT_XID;
        if (n->register_events(n->parent[i], SY_NVML_EVENT_DBE, n->events) == NVML_SUCCESS)
            ok |= SY_NVML_EVENT_DBE;
        for (size_t j = i; j < n->count; j++)
            if (n->parent[j] == n->parent[i])
                n->info[j].watched = ok;
    }
}

static void add(sy_nvml *n, const sy_nvml_dev_info *d, nvml_device h,
                nvml_device parent, const char *const *only, size_t n_only)
{
    /* Listing a GPU keeps all of its MIG instances. */
    if (n->count >= SY_GS_MAX_DEVS || (!wanted(d->uuid, only, n_only) &&
                                       !wanted(d->gpu_uuid, only, n_only)))
        return;
    n->info[n->count] = *d;
    n->handle[n->count] = h;
    n->parent[n->count++] = parent;
}

/* The MIG instances of a GPU in MIG mode, as devices; false when it has
 * none to offer (the GPU is then listed whole). */
static bool add_migs(sy_nvml *n, const sy_nvml_dev_info *gpu, nvml_device h,
                     const char *const *only, size_t n_only)
{
    unsigned max = 0;
    bool any = false;
    if (!n->max_mig || !n->mig_by_index ||
        n->max_mig(h, &max) != NVML_SUCCESS)
        return false;
    for (unsigned k = 0; k < max; k++) {
        nvml_device mh = NULL;
        sy_nvml_dev_info d = *gpu;
        if (n->mig_by_index(h, k, &mh) != NVML_SUCCESS || !read_unit(n, mh, &d))
            continue;   /* an empty slot */
        d.mig_instance = (int)k;
        add(n, &d, mh, h, only, n_only);
        any = true;
    }
    return any;
}

static void discover(sy_nvml *n, const char *const *only, size_t n_only,
                     bool mig)
{
    unsigned total = 0;
    nvml_ret rc = n->get_count(&total);
    if (rc != NVML_SUCCESS) {
        snprintf(n->reason, sizeof n->reason, "nvmlDeviceGetCount: %s",
                 errstr(n, rc));
        return;
    }
    for (unsigned i = 0; i < total && n->count < SY_GS_MAX_DEVS; i++) {
        sy_nvml_dev_info d;
        nvml_device h = NULL;
        memset(&d, 0, sizeof d);
        if (!read_device(n, i, &d, &h))
            continue;
        if (!(mig && d.mig == 1 && add_migs(n, &d, h, only, n_only)))
            add(n, &d, h, h, only, n_only);
    }
    if (!n->count)
        snprintf(n->reason, sizeof n->reason, total ? "none of the %u "
                 "devices NVML lists is in `devices`" : "NVML lists no "
                 "device", total);
    find_islands(n);
    watch(n);
}

sy_nvml *sy_nvml_open(const char *library, const char *const *only,
                      size_t n_only, bool mig)
{
    sy_nvml *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    const char *path = library && library[0] ? library
                                             : SY_NVML_DEFAULT_LIBRARY;
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        const char *e = dlerror();
        snprintf(n->reason, sizeof n->reason, "cannot load %s (%s): no "
                 "NVIDIA driver here?", path, e ? e : "unknown error");
        return n;
    }
    if (!bind(n))
        return n;
    nvml_ret rc = n->init();
    if (rc != NVML_SUCCESS) {
        snprintf(n->reason, sizeof n->reason, "nvmlInit: %s",
                 errstr(n, rc));
        return n;
    }
    n->inited = true;
    discover(n, only, n_only, mig);
    return n;
}

void sy_nvml_close(sy_nvml *n)
{
    if (!n)
        return;
    if (n->events && n->set_free)
        n->set_free(n->events);
    if (n->inited)
        n->shutdown();
    if (n->lib)
        dlclose(n->lib);
    free(n);
}

const char *sy_nvml_reason(const sy_nvml *n) { return n->reason; }
bool sy_nvml_watching(const sy_nvml *n) { return n->events != NULL; }
size_t sy_nvml_count(const sy_nvml *n) { return n->count; }

const sy_nvml_dev_info *sy_nvml_dev(const sy_nvml *n, size_t i)
{
    return i < n->count ? &n->info[i] : NULL;
}

int sy_nvml_poll(sy_nvml *n, sy_nvml_event *ev)
{
    if (!n->events)
        return 0;
    nvml_event_data data;
    memset(&data, 0, sizeof data);
    if (n->set_wait(n->events, &data, 0) != NVML_SUCCESS)
        return 0;   /* NVML_ERROR_TIMEOUT: nothing pending */
    ev->dev = -1;
    for (size_t i = 0; i < n->count && ev->dev < 0; i++)
        if (n->parent[i] == data.device)
            ev->dev = (int)i;
    ev->type = data.eventType;
    ev->data = data.eventData;
    return 1;
}
