/*
 * lambda_bench.c -- the lambda plugin's cost per invocation.
 *
 *   lambda_bench PLUGIN.so PORT [N] [IN_FLIGHT]
 *
 * Loads the plugin, makes one instance against a Lambda-compatible
 * endpoint on 127.0.0.1:PORT (bench/lambda_server.py: answers after
 * 10 ms), and submits N invocations (default 10,000) keeping IN_FLIGHT
 * (default 1,000) in flight: a submit whenever a completion frees a slot.
 * Prints one line of key=value figures: wall time, CPU time of the whole
 * process (the plugin's loop thread and this driver) per call, the peak
 * RSS, and the most calls seen in flight at once.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include <switchyard/executor.h>
#include <switchyard/testhost.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static long done_ok, done_bad;

static void on_complete(sy_completion *c, const sy_result *r, int nth,
                        const char *malformed)
{
    (void)c;
    (void)malformed;
    if (nth != 1)
        return;
    pthread_mutex_lock(&mu);
    if (r->outcome == SY_OUTCOME_SUCCEEDED)
        done_ok++;
    else
        done_bad++;
    pthread_cond_signal(&freed);
    pthread_mutex_unlock(&mu);
}

static double now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds of the busiest thread other than the caller: the plugin's
 * loop thread, which does all of an invocation's work. */
static double loop_thread_cpu_s(void)
{
    double best = 0;
    long ticks = sysconf(_SC_CLK_TCK);
    DIR *d = opendir("/proc/self/task");
    pid_t self = (pid_t)syscall(SYS_gettid);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == self)
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                        "%lu %lu", &ut, &st) == 2) {
            double s = (double)(ut + st) / (double)ticks;
            if (s > best)
                best = s;
        }
    }
    if (d)
        closedir(d);
    return best;
}

typedef struct peek {
    int64_t in_flight, queued;
} peek;

static void read_metric(void *sink, const char *name, int64_t value)
{
    peek *p = sink;
    if (strcmp(name, "in_flight") == 0)
        p->in_flight = value;
    else if (strcmp(name, "queued") == 0)
        p->queued = value;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: lambda_bench PLUGIN.so PORT [N] [IN_FLIGHT]\n");
        return 2;
    }
    long n = argc > 3 ? atol(argv[3]) : 10000;
    long width = argc > 4 ? atol(argv[4]) : 1000;
    void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    sy_executor_entry_fn entry =
        dl ? (sy_executor_entry_fn)(uintptr_t)dlsym(dl, "sy_executor_entry")
           : NULL;
    const sy_executor *d = entry ? entry() : NULL;
    if (!d) {
        fprintf(stderr, "lambda_bench: cannot load %s: %s\n", argv[1],
                dlerror());
        return 1;
    }
    sy_host h;
    sy_sdk_test_host_init(&h, "bench");
    h.on_complete = on_complete;
    char cfg[512], err[512] = "";
    snprintf(cfg, sizeof cfg,
             "{\"endpoint_url\": \"http://127.0.0.1:%s\", "
             "\"access_key_id\": \"AKIDBENCH\", "
             "\"secret_access_key\": \"bench-secret\", "
             "\"function\": \"bench\", \"max_in_flight\": %ld}",
             argv[2], width);
    sy_instance *inst = NULL;
    if (d->create(sy_sdk_test_host_api(), &h,
                  sy_sdk_test_host_params(&h, cfg), &inst, err,
                  sizeof err) != SY_OK) {
        fprintf(stderr, "lambda_bench: create: %s\n", err);
        return 1;
    }
    sy_completion *c = calloc((size_t)n, sizeof *c);
    static const char input[] = "{\"n\": 1, \"payload\": \"0123456789\"}";
    sy_task t = {.size = sizeof t, .attempt = 1, .ns = "bench::lambda::t",
                 .run_id = "1", .task_id = "t", .input = input,
                 .input_len = sizeof input - 1,
                 .params = sy_sdk_test_host_params(&h, "{}"),
                 .workflow = "lambda", .base_dir = "/"};

    double w0 = now_s(CLOCK_MONOTONIC), c0 = cpu_s();
    long submitted = 0;
    int64_t peak = 0;
    double last_peek = 0;
    pthread_mutex_lock(&mu);
    while (done_ok + done_bad < n) {
        while (submitted < n && submitted - (done_ok + done_bad) < width) {
            pthread_mutex_unlock(&mu);
            sy_sdk_test_completion_init(&c[submitted], &h, NULL);
            int rc = d->submit(inst, &t, &c[submitted], err, sizeof err);
            pthread_mutex_lock(&mu);
            if (rc == SY_EBUSY)
                break;
            if (rc != SY_OK) {
                fprintf(stderr, "lambda_bench: submit: %s\n", err);
                return 1;
            }
            submitted++;
        }
        double tnow = now_s(CLOCK_MONOTONIC);
        if (tnow - last_peek > 0.005) {
            last_peek = tnow;
            peek p = {0, 0};
            pthread_mutex_unlock(&mu);
            d->metrics(inst, read_metric, &p);
            pthread_mutex_lock(&mu);
            if (p.in_flight - p.queued > peak)
                peak = p.in_flight - p.queued;
        }
        if (done_ok + done_bad < n)
            pthread_cond_wait(&freed, &mu);
    }
    pthread_mutex_unlock(&mu);
    double wall = now_s(CLOCK_MONOTONIC) - w0, cpu = cpu_s() - c0;
    /* The loop thread started in create(), just before the clock. */
    double loop_cpu = loop_thread_cpu_s();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("system=switchyard-lambda calls=%ld ok=%ld failed=%ld "
           "in_flight=%ld peak_in_flight=%lld wall_s=%.3f calls_per_s=%.0f "
           "cpu_s=%.3f cpu_us_per_call=%.1f loop_thread_cpu_us_per_call=%.1f "
           "max_rss_mib=%.1f\n",
           n, done_ok, done_bad, width, (long long)peak, wall,
           (double)n / wall, cpu, cpu / (double)n * 1e6,
           loop_cpu / (double)n * 1e6,
           (double)ru.ru_maxrss / 1024.0);
    d->destroy(inst);
    for (long i = 0; i < submitted; i++)
        sy_sdk_test_completion_fini(&c[i]);
    free(c);
    sy_sdk_test_host_fini(&h);
    return done_bad == 0 ? 0 : 1;
}
