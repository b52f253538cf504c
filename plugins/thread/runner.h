/*
 * runner.h -- what switchyard-task-runner and the plugin agree on.
 *
 *   switchyard-task-runner LIB SYMBOL        run one isolated function
 *   switchyard-task-runner --check LIB SYMBOL  open LIB, find SYMBOL, exit
 *
 * The input context arrives on stdin; the task's parameters as JSON in
 * $SWITCHYARD_TASK_PARAMS; who the attempt is in the other SWITCHYARD_*
 * variables (job.c, sy_job_env).  The output goes to stdout.  Whatever the
 * function prints itself goes to stderr (its stdout is redirected there),
 * and so do the runner's records, each starting with a byte no text
 * starts with:
 *
 *   "\036L" LEVEL " " MESSAGE "\n"   a log line (LEVEL a digit, sy_log_level)
 *   "\036E" TEXT                     the error; nothing follows it
 *
 * SIGTERM makes cancelled() return non-zero; a crash is a signal.
 */
#ifndef SY_THREAD_RUNNER_H
#define SY_THREAD_RUNNER_H

#define SY_RUNNER_LOG_MARK "\036L"
#define SY_RUNNER_ERROR_MARK "\036E"
#define SY_RUNNER_PARAMS_ENV "SWITCHYARD_TASK_PARAMS"

enum {
    SY_RUNNER_EXIT_OK = 0,      /* the function returned 0 */
    SY_RUNNER_EXIT_FAILED = 1,  /* it returned non-zero: the error follows */
    SY_RUNNER_EXIT_SETUP = 2    /* usage, library, symbol, input or
                                   parameters: the error follows */
};

#endif
