#include "workflow/trigger.h"

#include <string.h>

#include "base/util.h"

/* Indexed by sy_trigger; the spelling is what workflow files and stored
 * definitions use. */
static const char *const trigger_names[] = {
    "all_success", "all_done", "all_failed", "one_success",
    "one_failed", "none_failed", "always",
};

const char *sy_trigger_name(sy_trigger t)
{
    if ((unsigned)t >= SY_ARRAY_LEN(trigger_names))
        return "unknown";
    return trigger_names[t];
}

int sy_trigger_parse(const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < SY_ARRAY_LEN(trigger_names); i++)
        if (strcmp(name, trigger_names[i]) == 0)
            return (int)i;
    return -1;
}

static sy_trig_verdict run_if(bool cond)
{
    return cond ? SY_TRIG_RUN : SY_TRIG_SKIP;
}

sy_trig_verdict sy_trigger_eval(sy_trigger t, const sy_task_state *dep_states,
                                size_t n)
{
    size_t completed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!sy_task_state_terminal(dep_states[i]))
            return SY_TRIG_WAIT;
        completed += dep_states[i] == SY_TASK_COMPLETED;
        /* A dependency stopped with its run did not succeed: as failed. */
        failed += dep_states[i] == SY_TASK_FAILED || dep_states[i] == SY_TASK_CANCELLED;
    }
    if (n == 0)
        return SY_TRIG_RUN;
    switch (t) {
    case SY_TRIGGER_ALL_SUCCESS: return run_if(completed == n);
    case SY_TRIGGER_ALL_DONE: return SY_TRIG_RUN;
    case SY_TRIGGER_ALL_FAILED: return run_if(failed == n);
    case SY_TRIGGER_ONE_SUCCESS: return run_if(completed > 0);
    case SY_TRIGGER_ONE_FAILED: return run_if(failed > 0);
    case SY_TRIGGER_NONE_FAILED: return run_if(failed == 0);
    case SY_TRIGGER_ALWAYS: return SY_TRIG_RUN;
    }
    return SY_TRIG_SKIP;
}
