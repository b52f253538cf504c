/*
 * gpusim.c -- the gpu plugin's scheduler in a simulated machine: 8
 * devices (two islands of 4), a seeded stream of 1/2/4/8-GPU tasks with
 * known run times, run through plugins/gpu/sched.c under its three
 * policies on the same stream.  Reports device utilisation while the
 * queue is not empty, the makespan, and the wait per size class.
 *
 *   gpusim [--tasks N] [--seed S] [--load L] [--bound-8 MINUTES]
 *
 * Time is simulated (minutes as milliseconds would overflow nothing: the
 * unit is a second).  Arrivals are Poisson at a rate that offers `load`
 * times the machine's capacity (default 1.05: slightly oversubscribed, so
 * a queue builds up and the scheduler is what decides utilisation).  Run
 * times are declared exactly as `expected_time` (the plugin's estimate).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define NDEV 8
#define NCLASS 4

static const int sizes[NCLASS] = {1, 2, 4, 8};

typedef struct task {
    sy_gs_job j;
    int64_t arrive, run, start;
    int cls;
} task;

/* xorshift64*: the same stream on every machine. */
static uint64_t rng;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* Sizes 1/2/4/8 at 50/25/15/10 %; run times from 5 to 60 minutes for
 * single-GPU tasks, up to 4 hours for 8-GPU ones (log-uniform). */
static void make_stream(task *t, int n, double load, uint64_t seed)
{
    static const double share[NCLASS] = {0.50, 0.25, 0.15, 0.10};
    static const double lo[NCLASS] = {300, 600, 1200, 1800};
    static const double hi[NCLASS] = {3600, 7200, 10800, 14400};
    rng = seed ? seed : 1;
    double mean_work = 0;   /* device-seconds per task, expected */
    for (int c = 0; c < NCLASS; c++)
        mean_work += share[c] * sizes[c] * (hi[c] - lo[c]) / log(hi[c] / lo[c]);
    double gap = mean_work / (NDEV * load);
    double now = 0;
    for (int i = 0; i < n; i++) {
        double u = uniform(), acc = 0;
        int c = 0;
        while (c < NCLASS - 1 && u > (acc += share[c]))
            c++;
        now += -log(1 - uniform()) * gap;
        memset(&t[i], 0, sizeof t[i]);
        t[i].cls = c;
        t[i].arrive = (int64_t)now;
        t[i].run = (int64_t)(lo[c] * exp(uniform() * log(hi[c] / lo[c])));
        t[i].j.gpus = sizes[c];
        t[i].j.expected_ms = t[i].run;
        t[i].j.owner = &t[i];
    }
}

typedef struct result {
    double util;            /* busy device-time / capacity, queue non-empty */
    double util_all;        /* the same over the whole makespan */
    int64_t makespan;
    double mean_wait[NCLASS], p95_wait[NCLASS];
    int64_t max_wait[NCLASS];
} result;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void simulate(task *t, int n, int policy, int64_t bound8, result *r)
{
    sy_gs s;
    memset(&s, 0, sizeof s);
    s.policy = policy;
    if (sy_gs_init(&s, NDEV, (size_t)n) != 0) {
        fprintf(stderr, "gpusim: out of memory\n");
        exit(1);
    }
    for (int d = 0; d < NDEV; d++) {
        s.dev[d].island = d / 4;
        s.dev[d].mem_mib = 81920;
        s.dev[d].model = "H100";
    }
    s.wait_bound[8] = bound8;
    task **running = calloc((size_t)n, sizeof *running);
    int nrun = 0, next = 0, done = 0;
    int64_t now = 0;
    double busy_q = 0, cap_q = 0, busy_all = 0;
    while (done < n) {
        /* The next event: an arrival or a completion. */
        int64_t at = next < n ? t[next].arrive : INT64_MAX;
        for (int i = 0; i < nrun; i++)
            if (running[i]->start + running[i]->run < at)
                at = running[i]->start + running[i]->run;
        int busy = 0;
        for (int d = 0; d < NDEV; d++)
            busy += !sy_gs_dev_idle(&s, d);
        double dt = (double)(at - now);
        busy_all += busy * dt;
        if (sy_gs_queued(&s)) {
            busy_q += busy * dt;
            cap_q += NDEV * dt;
        }
        now = at;
        for (int i = 0; i < nrun;)
            if (running[i]->start + running[i]->run <= now) {
                sy_gs_release(&s, &running[i]->j);
                running[i] = running[--nrun];
                done++;
            } else {
                i++;
            }
        while (next < n && t[next].arrive <= now)
            sy_gs_enqueue(&s, &t[next++].j, now);
        sy_gs_job *j;
        while ((j = sy_gs_next(&s, now)) != NULL) {
            task *k = j->owner;
            k->start = now;
            running[nrun++] = k;
        }
    }
    r->util = cap_q > 0 ? busy_q / cap_q : 1;
    r->util_all = now > 0 ? busy_all / ((double)NDEV * now) : 1;
    r->makespan = now;
    for (int c = 0; c < NCLASS; c++) {
        int64_t *w = calloc((size_t)n, sizeof *w);
        int m = 0;
        double sum = 0;
        for (int i = 0; i < n; i++)
            if (t[i].cls == c) {
                w[m] = t[i].start - t[i].arrive;
                sum += (double)w[m++];
            }
        qsort(w, (size_t)m, sizeof *w, cmp_i64);
        r->mean_wait[c] = m ? sum / m : 0;
        r->p95_wait[c] = m ? (double)w[(m * 95) / 100 < m ? (m * 95) / 100 : m - 1] : 0;
        r->max_wait[c] = m ? w[m - 1] : 0;
        free(w);
    }
    free(running);
    sy_gs_fini(&s);
}

int main(int argc, char **argv)
{
    int n = 2000;
    uint64_t seed = 17;
    double load = 1.05, bound8_min = 240;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--tasks") == 0)
            n = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--load") == 0)
            load = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--bound-8") == 0)
            bound8_min = atof(argv[i + 1]);
        else {
            fprintf(stderr, "usage: gpusim [--tasks N] [--seed S] [--load L] "
                    "[--bound-8 MINUTES]\n");
            return 2;
        }
    }
    if (n < 1 || n > 1000000 || !(load > 0)) {
        fprintf(stderr, "gpusim: --tasks must be 1..1000000, --load > 0\n");
        return 2;
    }
    task *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return 1;
    static const char *const names[] = {"easy", "fifo", "first_fit"};
    static const int policies[] = {SY_GS_EASY, SY_GS_FIFO, SY_GS_FIRST_FIT};
    printf("gpusim: %d tasks, seed %llu, offered load %.2f, 8 devices "
           "(2 islands of 4), sizes 1/2/4/8 at 50/25/15/10 %%, 8-GPU wait "
           "bound %.0f min (easy only)\n", n, (unsigned long long)seed,
           load, bound8_min);
    printf("%-10s %8s %8s %9s  %s\n", "policy", "util(q)", "util", "makespan",
           "wait in minutes, mean / p95 / max, for 1, 2, 4, 8 GPUs");
    for (int p = 0; p < 3; p++) {
        make_stream(t, n, load, seed);
        result r;
        simulate(t, n, policies[p],
                 policies[p] == SY_GS_EASY ? (int64_t)(bound8_min * 60) : 0,
                 &r);
        printf("%-10s %7.1f%% %7.1f%% %8.1fh ", names[p], 100 * r.util,
               100 * r.util_all, (double)r.makespan / 3600);
        for (int c = 0; c < NCLASS; c++)
            printf(" %d: %.0f/%.0f/%.0f", sizes[c], r.mean_wait[c] / 60,
                   r.p95_wait[c] / 60, (double)r.max_wait[c] / 60);
        printf("\n");
    }
    free(t);
    return 0;
}
