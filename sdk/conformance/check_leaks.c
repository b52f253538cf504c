/*
 * check_leaks.c -- nothing is kept per task: file descriptors, threads,
 * memory.
 *
 * Each check runs a warm-up (so lazily made pools, caches and the
 * allocator's arenas are paid for), measures, runs many more tasks one at
 * a time in two halves, waiting for the instance to settle and measuring
 * after each.  A fixed cost is tolerated, and so is growth that stops: a
 * bounded pool (kept-alive connections, say) may fill during the first
 * half.  Growth that goes on in the second half as in the first follows
 * the number of tasks: a leak, reported per task.  Measured while the instance lives: what destroy()
 * frees is the destroy check's and LeakSanitizer's business, but a
 * long-lived instance that keeps something per task runs out.
 */
#include "checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ASan's allocator: the bytes the program holds now, quarantine excluded.
 * Weak, so the kit links without ASan and asks only when it is there. */
extern size_t __sanitizer_get_current_allocated_bytes(void)
    __attribute__((weak));

typedef struct leak_plan {
    const char *what;       /* "file descriptor", "thread", "byte" */
    long warmup, tasks;     /* tasks before the first reading, and after */
    double budget_ms;       /* for the measured tasks, scaled */
    long (*measure)(void);  /* the reading now, or -1 */
    long fixed;             /* growth tolerated whatever the task count */
    double per_task;        /* growth per task tolerated */
} leak_plan;

typedef struct leak_result {
    long ran;               /* measured tasks */
    long half;              /* of which the second half */
    long before, mid, after;
} leak_result;

/* Submits up to `n` tasks one at a time within `budget_ms` (scaled) and
 * waits for them.  Returns how many ran, or -1 with r failed. */
static long run_tasks(kit_inst *ki, long n, double budget_ms, kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + budget_ms * ki->k->scale;
    long done = 0;
    while (done < n && kit_now_ms() < until) {
        int rc = kit_submit_patient(ki, ki->k->in.task, until, NULL, NULL,
                                    err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return -1;
        }
        done++;
    }
    if (!kit_wait_all(ki, KIT_DEADLINE_MS)) {
        kit_fail_undrained(ki, r);
        return -1;
    }
    return done;
}

/* A correct plugin may release a moment after its last completion (a
 * worker closing its pipe, a thread exiting): waits up to 1 s for the
 * reading to fall back within the fixed cost. */
static long settle(const kit *k, const leak_plan *p, long before)
{
    double until = kit_now_ms() + 1000 * k->scale;
    long now = p->measure();
    while (now > before + p->fixed && kit_now_ms() < until) {
        kit_sleep_ms(10);
        now = p->measure();
    }
    return now;
}

/* Runs the plan; false with r failed (the run itself went wrong). */
static bool measure_plan(kit_ctx *x, const leak_plan *p, leak_result *out,
                         kit_report *r)
{
    kit_inst ki;
    /* Room for the patient submits' SY_EBUSY retries. */
    size_t records = (size_t)(p->warmup + p->tasks) * 4 + 64;
    if (!kit_open(x, &ki, records, r))
        return false;
    if (run_tasks(&ki, p->warmup, KIT_BUDGET_MS, r) < 0)
        return false;
    kit_sleep_ms(20);
    out->before = p->measure();
    long first = run_tasks(&ki, p->tasks / 2, p->budget_ms / 2, r);
    if (first < 0)
        return false;
    out->mid = settle(x->k, p, out->before);
    out->half = run_tasks(&ki, p->tasks - p->tasks / 2, p->budget_ms / 2, r);
    if (out->half < 0)
        return false;
    out->ran = first + out->half;
    out->after = settle(x->k, p, out->mid);
    return kit_close(&ki, r);
}

static kit_verdict judge(kit_ctx *x, const leak_plan *p, kit_report *r)
{
    leak_result m = {0, 0, 0, 0, 0};
    if (!measure_plan(x, p, &m, r))
        return KIT_FAIL;
    if (m.before < 0 || m.mid < 0 || m.after < 0)
        return kit_skip(r, "cannot count %ss here", p->what);
    if (m.ran == 0 || m.half == 0)
        return kit_fail(r, "no submit was accepted");
    long grew = m.after - m.before, still = m.after - m.mid;
    double each = (double)grew / (double)m.ran;
    kit_note(r, "%ld %ss before, %ld after %ld tasks, %ld after %ld more", m.before, p->what,
             m.mid, m.ran - m.half, m.after, m.half);
    /* Within the fixed cost, or a growth that stopped in the second half
     * (a pool that filled), is no leak. */
    if (grew <= p->fixed || each <= p->per_task || still <= p->fixed ||
        (double)still / (double)m.half <= p->per_task)
        return kit_pass(r, "%ld tasks after a warm-up of %ld: %+ld %ss, %+ld in the second half",
                        m.ran, p->warmup, grew, p->what, still);
    if (p->fixed >= 1024) /* bytes: say it in KiB */
        return kit_fail(r, "memory grew by %.1f MiB over %ld tasks (%.1f KiB "
                        "per task) and stayed once every task completed: "
                        "something is kept per task", (double)grew / 1048576,
                        m.ran, each / 1024);
    return kit_fail(r, "%ld %ss more after %ld tasks (%.2f per task), still "
                    "there once every task completed: a %s kept per task",
                    grew, p->what, m.ran, each, p->what);
}

/* ------------------------------------------------------------------------ */
/* File descriptors and threads                                             */
/* ------------------------------------------------------------------------ */

static long fds_now(void) { return kit_fd_count(); }
static long threads_now(void) { return kit_thread_count(); }

kit_verdict kit_check_fd_leak(kit_ctx *x, kit_report *r)
{
    static const leak_plan plan = {"file descriptor", 50, 300, 1500,
                                   fds_now, 4, 0.02};
    return judge(x, &plan, r);
}

kit_verdict kit_check_thread_leak(kit_ctx *x, kit_report *r)
{
    static const leak_plan plan = {"thread", 50, 300, 1500, threads_now, 2,
                                   0.02};
    return judge(x, &plan, r);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

/* Under ASan the allocator's own count of live bytes: exact, and blind to
 * the quarantine that makes the resident size grow with every free.
 * Elsewhere the resident size: the arenas, paid for by the warm-up, are
 * reused once freed, so what grows is what is kept. */
static long bytes_now(void)
{
    if (__sanitizer_get_current_allocated_bytes)
        return (long)__sanitizer_get_current_allocated_bytes();
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = -1, resident = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Valgrind replaces the allocator and its own memory follows the
 * program's; its leak check reports what a plugin loses. */
static bool under_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload");
}

kit_verdict kit_check_memory(kit_ctx *x, kit_report *r)
{
    if (under_valgrind())
        return kit_skip(r, "under valgrind, whose own memory hides the "
                        "plugin's (its leak check covers what is lost)");
    /* The kit keeps a few hundred bytes per task itself (its record and a
     * copy of the output): 4 KiB a task and 2 MiB in all are far above
     * that and far below a buffer kept per task. */
    static const leak_plan plan = {"byte", 200, 1000, 2500, bytes_now,
                                   2L << 20, 4096};
    kit_note(r, "measured as %s", __sanitizer_get_current_allocated_bytes
                                      ? "the sanitizer's live heap bytes"
                                      : "the resident size");
    return judge(x, &plan, r);
}
