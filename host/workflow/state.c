#include "workflow/state.h"

#include <string.h>

#include "base/util.h"

static const char *const task_names[SY_TASK_STATE_COUNT] = {
    "NotStarted", "Ready", "Running", "Completed", "Failed", "Skipped", "Cancelled",
    "Waiting", "Dropped",
};

static const char *const run_names[SY_RUN_STATE_COUNT] = {
    "Pending", "Running", "Completed", "Failed", "Cancelled",
};

/* task_next[from] is the set of states `from` may move to, as bits. */
#define B(s) (1u << (s))
static const unsigned task_next[SY_TASK_STATE_COUNT] = {
    [SY_TASK_NOT_STARTED] = B(SY_TASK_READY) | B(SY_TASK_SKIPPED),
    [SY_TASK_READY] = B(SY_TASK_RUNNING) | B(SY_TASK_SKIPPED) | B(SY_TASK_FAILED) |
                      B(SY_TASK_WAITING) | B(SY_TASK_DROPPED),
    [SY_TASK_RUNNING] = B(SY_TASK_COMPLETED) | B(SY_TASK_FAILED) |
                        B(SY_TASK_SKIPPED) | B(SY_TASK_READY) | B(SY_TASK_CANCELLED),
    [SY_TASK_COMPLETED] = 0,
    [SY_TASK_FAILED] = 0,
    [SY_TASK_SKIPPED] = 0,
    [SY_TASK_CANCELLED] = 0,
    [SY_TASK_WAITING] = B(SY_TASK_RUNNING) | B(SY_TASK_READY) | B(SY_TASK_SKIPPED) |
                        B(SY_TASK_CANCELLED) | B(SY_TASK_FAILED) | B(SY_TASK_DROPPED),
    [SY_TASK_DROPPED] = 0,
};

static const unsigned run_next[SY_RUN_STATE_COUNT] = {
    [SY_RUN_PENDING] = B(SY_RUN_RUNNING) | B(SY_RUN_CANCELLED),
    [SY_RUN_RUNNING] = B(SY_RUN_COMPLETED) | B(SY_RUN_FAILED) | B(SY_RUN_CANCELLED),
    [SY_RUN_COMPLETED] = 0,
    [SY_RUN_FAILED] = 0,
    [SY_RUN_CANCELLED] = 0,
};
#undef B

static int parse_name(const char *const *names, size_t n, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

const char *sy_task_state_name(sy_task_state s)
{
    return (unsigned)s < SY_TASK_STATE_COUNT ? task_names[s] : "Unknown";
}

const char *sy_run_state_name(sy_run_state s)
{
    return (unsigned)s < SY_RUN_STATE_COUNT ? run_names[s] : "Unknown";
}

int sy_task_state_parse(const char *name)
{
    return parse_name(task_names, SY_TASK_STATE_COUNT, name);
}

int sy_run_state_parse(const char *name)
{
    return parse_name(run_names, SY_RUN_STATE_COUNT, name);
}

bool sy_task_state_terminal(sy_task_state s)
{
    return s == SY_TASK_COMPLETED || s == SY_TASK_FAILED || s == SY_TASK_SKIPPED ||
           s == SY_TASK_CANCELLED || s == SY_TASK_DROPPED;
}

bool sy_task_state_offerable(sy_task_state s)
{
    return s == SY_TASK_READY || s == SY_TASK_WAITING;
}

bool sy_run_state_terminal(sy_run_state s)
{
    return s == SY_RUN_COMPLETED || s == SY_RUN_FAILED || s == SY_RUN_CANCELLED;
}

bool sy_task_transition_ok(sy_task_state from, sy_task_state to)
{
    if ((unsigned)from >= SY_TASK_STATE_COUNT || (unsigned)to >= SY_TASK_STATE_COUNT)
        return false;
    return (task_next[from] >> to) & 1u;
}

bool sy_run_transition_ok(sy_run_state from, sy_run_state to)
{
    if ((unsigned)from >= SY_RUN_STATE_COUNT || (unsigned)to >= SY_RUN_STATE_COUNT)
        return false;
    return (run_next[from] >> to) & 1u;
}

size_t sy_waiting_key(const char *why, const char **key)
{
    static const char lead[] = "waiting for ";
    static const char *const kinds[] = {"key:", "pool:", "tenant:", "rate:"};
    if (!why || strncmp(why, lead, sizeof lead - 1) != 0)
        return 0;
    const char *k = why + sizeof lead - 1, *end = strstr(k, " (");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(k, kinds[i], strlen(kinds[i])) == 0) {
            *key = k;
            return end ? (size_t)(end - k) : strlen(k);
        }
    return 0;
}
