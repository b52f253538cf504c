/*
 * fake_nvml.c -- a stand-in for libnvidia-ml.so.1 with the symbols the gpu
 * plugin looks up, so its tests run on machines without a GPU.
 *
 * Devices come from the file named by SY_FAKE_NVML_DEVICES, one a line:
 *
 *     UUID NAME MEMORY_MIB [MIG ISLAND]      # MIG 0/1, ISLAND a number
 *     mig GPU_UUID MIG_UUID NAME MEMORY_MIB  # a MIG instance of a GPU above
 *
 * Health events come from the file named by SY_FAKE_NVML_EVENTS, read
 * from where each event set last stopped, one a line, so a test injects
 * one by appending:
 *
 *     xid UUID 79
 *     ecc UUID                               # a double-bit ECC error
 *
 * Like the real driver (seen with 580.159.04 on an H100: a thread named
 * "cuda00001800007" appears at the first nvmlInit and outlives
 * nvmlShutdown and the library's dlclose), the first successful init
 * starts a thread the process keeps, so the conformance kit meets it on
 * every machine.
 *
 * SY_FAKE_NVML_INIT=fail makes nvmlInit_v2 fail (a driver that is
 * installed but not loaded).  Devices in one island are one PCIe switch
 * apart (NVML_TOPOLOGY_MULTIPLE), others the whole system apart.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10

#define MAX_DEVS 64

typedef struct fake_dev {
    char uuid[96], name[96];
    unsigned long long mem_mib;
    unsigned mig;
    int island;
    unsigned long long events;   /* registered event types */
    struct fake_dev *migs[8];    /* its MIG instances */
    unsigned nmig;
} fake_dev;

typedef struct fake_memory {
    unsigned long long total, free, used;
} fake_memory;

typedef struct fake_event_data {
    fake_dev *device;
    unsigned long long eventType, eventData;
    unsigned gpuInstanceId, computeInstanceId;
} fake_event_data;

typedef struct fake_set {
    long offset;                 /* of the events file read so far */
} fake_set;

/* The exported functions, declared (NVML's names and signatures, with
 * this file's types for its handles). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int rc);
int nvmlDeviceGetCount_v2(unsigned *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, fake_dev **out);
int nvmlDeviceGetUUID(fake_dev *d, char *buf, unsigned len);
int nvmlDeviceGetName(fake_dev *d, char *buf, unsigned len);
int nvmlDeviceGetMemoryInfo(fake_dev *d, fake_memory *m);
int nvmlDeviceGetMigMode(fake_dev *d, unsigned *current, unsigned *pending);
int nvmlDeviceGetTopologyCommonAncestor(fake_dev *a, fake_dev *b, int *level);
int nvmlEventSetCreate(fake_set **out);
int nvmlEventSetFree(fake_set *s);
int nvmlDeviceRegisterEvents(fake_dev *d, unsigned long long types,
                             fake_set *s);
int nvmlEventSetWait_v2(fake_set *s, fake_event_data *data, unsigned timeout);
int nvmlDeviceGetMaxMigDeviceCount(fake_dev *d, unsigned *count);
int nvmlDeviceGetMigDeviceHandleByIndex(fake_dev *d, unsigned i,
                                        fake_dev **out);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static fake_dev devs[MAX_DEVS];
static unsigned ndevs;
static fake_dev migs[MAX_DEVS];
static unsigned nmigs;

static fake_dev *by_uuid(const char *uuid);

/* "mig GPU_UUID MIG_UUID NAME MIB" */
static void load_mig(const char *line)
{
    char gpu[96];
    fake_dev *m = &migs[nmigs];
    memset(m, 0, sizeof *m);
    if (nmigs >= MAX_DEVS ||
        sscanf(line, "mig %95s %95s %95s %llu", gpu, m->uuid, m->name,
               &m->mem_mib) != 4)
        return;
    fake_dev *parent = by_uuid(gpu);
    if (!parent || parent->nmig >= 8)
        return;
    parent->migs[parent->nmig++] = m;
    nmigs++;
}
static int inits;

static int load_devices(void)
{
    const char *path = getenv("SY_FAKE_NVML_DEVICES");
    ndevs = nmigs = 0;
    if (!path)
        return NVML_SUCCESS;
    FILE *f = fopen(path, "r");
    if (!f)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    char line[512];
    while (ndevs < MAX_DEVS && fgets(line, sizeof line, f)) {
        fake_dev *d = &devs[ndevs];
        memset(d, 0, sizeof *d);
        if (line[0] == '#')
            continue;
        if (strncmp(line, "mig ", 4) == 0) {
            load_mig(line);
            continue;
        }
        int n = sscanf(line, "%95s %95s %llu %u %d", d->uuid, d->name,
                       &d->mem_mib, &d->mig, &d->island);
        if (n >= 3)
            ndevs++;
    }
    fclose(f);
    return NVML_SUCCESS;
}

static void *driver_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int nvmlInit_v2(void)
{
    static bool driver_started;
    const char *mode = getenv("SY_FAKE_NVML_INIT");
    if (mode && strcmp(mode, "fail") == 0)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    pthread_mutex_lock(&mu);
    int rc = inits++ ? NVML_SUCCESS : load_devices();
    if (rc != NVML_SUCCESS)
        inits--;
    if (rc == NVML_SUCCESS && !driver_started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, driver_thread, NULL) == 0) {
            pthread_setname_np(t, "cuda-fake");
            driver_started = true;
        }
        pthread_attr_destroy(&a);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

int nvmlShutdown(void)
{
    pthread_mutex_lock(&mu);
    int rc = inits > 0 ? (inits--, NVML_SUCCESS) : NVML_ERROR_UNINITIALIZED;
    pthread_mutex_unlock(&mu);
    return rc;
}

const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    default: return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = ndevs;
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, fake_dev **out)
{
    if (!out || i >= ndevs)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = &devs[i];
    return NVML_SUCCESS;
}

static int copy(char *dst, unsigned len, const char *src)
{
    if (!dst || strlen(src) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

int nvmlDeviceGetUUID(fake_dev *d, char *buf, unsigned len)
{
    return d ? copy(buf, len, d->uuid) : NVML_ERROR_INVALID_ARGUMENT;
}

int nvmlDeviceGetName(fake_dev *d, char *buf, unsigned len)
{
    return d ? copy(buf, len, d->name) : NVML_ERROR_INVALID_ARGUMENT;
}

int nvmlDeviceGetMemoryInfo(fake_dev *d, fake_memory *m)
{
    if (!d || !m)
        return NVML_ERROR_INVALID_ARGUMENT;
    m->total = d->mem_mib * 1024 * 1024;
    m->free = m->total;
    m->used = 0;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMigMode(fake_dev *d, unsigned *current, unsigned *pending)
{
    if (!d || !current || !pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = d->mig;
    return NVML_SUCCESS;
}

int nvmlDeviceGetTopologyCommonAncestor(fake_dev *a, fake_dev *b, int *level)
{
    if (!a || !b || !level)
        return NVML_ERROR_INVALID_ARGUMENT;
    *level = a->island == b->island ? 20 : 50;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMaxMigDeviceCount(fake_dev *d, unsigned *count)
{
    if (!d || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = d->nmig;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMigDeviceHandleByIndex(fake_dev *d, unsigned i,
                                        fake_dev **out)
{
    if (!d || !out || i >= d->nmig)
        return NVML_ERROR_NOT_FOUND;
    *out = d->migs[i];
    return NVML_SUCCESS;
}

int nvmlEventSetCreate(fake_set **out)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = calloc(1, sizeof **out);
    return *out ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

int nvmlEventSetFree(fake_set *s)
{
    free(s);
    return NVML_SUCCESS;
}

int nvmlDeviceRegisterEvents(fake_dev *d, unsigned long long types,
                             fake_set *s)
{
    if (!d || !s)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* SY_FAKE_NVML_REFUSE: the event types (a decimal mask) this driver
     * does not report, as a GPU without ECC refuses double-bit events. */
    const char *refuse = getenv("SY_FAKE_NVML_REFUSE");
    if (refuse && (types & strtoull(refuse, NULL, 10)))
        return NVML_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&mu);
    d->events |= types;
    pthread_mutex_unlock(&mu);
    return NVML_SUCCESS;
}

static fake_dev *by_uuid(const char *uuid)
{
    for (unsigned i = 0; i < ndevs; i++)
        if (strcmp(devs[i].uuid, uuid) == 0)
            return &devs[i];
    return NULL;
}

/* The next whole line of the events file after the set's offset. */
int nvmlEventSetWait_v2(fake_set *s, fake_event_data *data, unsigned timeout)
{
    (void)timeout;   /* the plugin polls with 0; waiting is never needed */
    const char *path = getenv("SY_FAKE_NVML_EVENTS");
    if (!s || !data)
        return NVML_ERROR_INVALID_ARGUMENT;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return NVML_ERROR_TIMEOUT;
    int rc = NVML_ERROR_TIMEOUT;
    char line[256], kind[16], uuid[96];
    unsigned long long value = 0;
    fseek(f, s->offset, SEEK_SET);
    while (rc == NVML_ERROR_TIMEOUT && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (!len || line[len - 1] != '\n')
            break;                       /* half written: next time */
        s->offset += (long)len;
        int n = sscanf(line, "%15s %95s %llu", kind, uuid, &value);
        fake_dev *d = n >= 2 ? by_uuid(uuid) : NULL;
        if (!d)
            continue;
        memset(data, 0, sizeof *data);
        data->device = d;
        if (strcmp(kind, "xid") == 0 && n == 3 && (d->events & 0x8)) {
            data->eventType = 0x8;
            data->eventData = value;
            rc = NVML_SUCCESS;
        } else if (strcmp(kind, "ecc") == 0 && (d->events & 0x2)) {
            data->eventType = 0x2;
            rc = NVML_SUCCESS;
        }
    }
    fclose(f);
    return rc;
}
