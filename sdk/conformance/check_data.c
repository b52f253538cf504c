/*
 * check_data.c -- what a task carries in and out: its output and its
 * error text fit the host's bounds, and its input is never written.
 *
 * The input is the host's (sy_task: read-only, until complete()).  This
 * check hands it out in pages made read-only with mprotect(), so a write
 * faults at the writing instruction, on whichever thread made it, and the
 * fault handler reports it.  A checksum taken after completion would miss
 * a plugin that writes and restores (a NUL over a byte while it parses)
 * and could not tell the write from a neighbour's stray one; the fault
 * catches every write, even of the same value.  The other checks hand out
 * ordinary memory, so only this check fails for it.
 */
#include "checks.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DATA_BATCH 20

/* Submits up to DATA_BATCH tasks one at a time and waits for them.
 * Returns how many, or -1 with r failed. */
static long run_batch(kit_inst *ki, kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + KIT_BUDGET_MS * ki->k->scale;
    long n = 0;
    while (n < DATA_BATCH && kit_now_ms() < until) {
        int rc = kit_submit_patient(ki, ki->k->in.task, until, NULL, NULL,
                                    err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return -1;
        }
        n++;
    }
    if (n == 0) {
        kit_fail(r, "no submit was accepted");
        return -1;
    }
    if (!kit_wait_all(ki, KIT_DEADLINE_MS)) {
        kit_fail_undrained(ki, r);
        return -1;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Output size                                                              */
/* ------------------------------------------------------------------------ */

kit_verdict kit_check_output_size(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, DATA_BATCH * 50, r))
        return KIT_FAIL;
    long n = run_batch(&ki, r);
    if (n < 0)
        return KIT_FAIL;
    size_t bound = x->k->in.max_context_bytes;
    long over = atomic_load(&ki.oversize);
    if (over > 0) {
        pthread_mutex_lock(&ki.lock);
        kit_fail(r, "%ld of %ld outputs over max_context_bytes (%zu bytes; "
                 "first: %s, %zu bytes): the host fails such an attempt "
                 "without reading it", over, n, bound, ki.oversize_task,
                 ki.oversize_len);
        pthread_mutex_unlock(&ki.lock);
        return KIT_FAIL;
    }
    long errors = atomic_load(&ki.long_errors);
    if (errors > 0) {
        pthread_mutex_lock(&ki.lock);
        kit_fail(r, "%ld of %ld error texts over the host's bound (%zu bytes, "
                 "SY_RESULT_ERROR_MAX; first: %s, %zu bytes): the host keeps "
                 "only their head; say why in a few lines and put the rest in "
                 "the attempt's log", errors, n, SY_RESULT_ERROR_MAX,
                 ki.long_error_task, ki.long_error_len);
        pthread_mutex_unlock(&ki.lock);
        return KIT_FAIL;
    }
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%ld outputs, none over %zu bytes, and no error text "
                    "over %zu", n, bound, SY_RESULT_ERROR_MAX);
}

/* ------------------------------------------------------------------------ */
/* Input                                                                    */
/* ------------------------------------------------------------------------ */

/* What the fault handler needs, set before the first submit. */
static const char *ro_base;
static size_t ro_len, ro_input_len;
static kit_report ro_report;

/* Writes `v` in decimal at `p`; returns the end.  (No snprintf in a
 * signal handler.) */
static char *put_num(char *p, size_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 24);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const char *a = si->si_addr;
    if (!ro_base || a < ro_base || a >= ro_base + ro_len) {
        /* Not ours: the crash it is, reported as one. */
        signal(sig, SIG_DFL);
        return;
    }
    char *p = ro_report.msg;
    p = put_str(p, "wrote to the task's input (byte ");
    p = put_num(p, (size_t)(a - ro_base));
    p = put_str(p, " of ");
    p = put_num(p, ro_input_len);
    p = put_str(p, "), which the host owns read-only: copy it to change it");
    *p = '\0';
    ro_report.verdict = KIT_FAIL;
    kit_report_now(&ro_report);
}

static bool catch_faults(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGSEGV, &sa, NULL) == 0 &&
           sigaction(SIGBUS, &sa, NULL) == 0;
}

/* The run's input in fresh pages, then read-only.  NULL on failure. */
static char *read_only_input(const char *input)
{
    size_t len = strlen(input) + 1;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (len + page - 1) / page * page;
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, input, len);
    if (mprotect(p, size, PROT_READ) != 0) {
        munmap(p, size);
        return NULL;
    }
    ro_base = p;
    ro_len = size;
    ro_input_len = len - 1;
    return p;
}

kit_verdict kit_check_input(kit_ctx *x, kit_report *r)
{
    char *input = read_only_input(x->k->in.input);
    if (!input)
        return kit_skip(r, "cannot map read-only pages here");
    if (!catch_faults())
        return kit_skip(r, "cannot catch faults here");
    kit_inst ki;
    if (!kit_open(x, &ki, DATA_BATCH * 50, r))
        return KIT_FAIL;
    ki.input = input;
    long n = run_batch(&ki, r);
    if (n < 0 || !kit_close(&ki, r))
        return KIT_FAIL;
    /* The handler stays: a late write still lands in these pages. */
    return kit_pass(r, "%ld tasks read their input from read-only pages",
                    n);
}
