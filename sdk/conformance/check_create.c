/*
 * check_create.c -- instances come and go cleanly; bad settings and bad
 * task parameters are refused with a clear one-line error.
 */
#include "checks.h"

#include <stdio.h>
#include <string.h>

static const char *const skip_plugin[] = {"plugin", NULL};

/* The first problem, as the host would print it. */
typedef struct first_problem {
    int count;
    char line[400];
} first_problem;

static void keep_first(void *arg, const char *file, int line,
                       const char *msg)
{
    first_problem *f = arg;
    if (f->count++ > 0)
        return;
    if (file && line > 0)
        snprintf(f->line, sizeof f->line, "%s:%d: error: %s", file, line,
                 msg);
    else if (file)
        snprintf(f->line, sizeof f->line, "%s: error: %s", file, msg);
    else
        snprintf(f->line, sizeof f->line, "switchyard: error: %s", msg);
}

/* What the host does before create() or validate() sees anything: the
 * declarations judge the settings from the params file.  False with r
 * failed, naming the file and line. */
static bool declarations_accept(const config_setting_t *s,
                                const char *const *skip,
                                const sy_param_spec *const *spec,
                                const char *what, kit_report *r)
{
    if (!s || !spec)
        return true;
    first_problem f = {0, ""};
    sy_sdk_params_check_setting(s, skip, spec, what, keep_first, &f);
    if (f.count > 0)
        kit_fail(r, "the host would refuse the %s settings before the plugin "
                 "sees them: %s", what, f.line);
    return f.count == 0;
}

/* ------------------------------------------------------------------------ */
/* create                                                                   */
/* ------------------------------------------------------------------------ */

static bool create_one(kit_inst *ki, const json_t *settings, kit_report *r)
{
    char err[512] = "";
    int rc = kit_create(ki, settings, err, sizeof err);
    if (rc == SY_OK && ki->inst)
        return true;
    if (rc == SY_OK)
        kit_fail(r, "create() returned SY_OK but no instance");
    else
        kit_fail(r, "create() refused the instance settings with %s: %s "
                 "(give working settings as instance = { ... } in --params)",
                 kit_status_name(rc), err[0] ? err : "(no message)");
    return false;
}

static bool capacity_sane(kit_inst *ki, bool note, kit_report *r)
{
    int64_t cap = ki->d->capacity(ki->inst);
    if (cap < 0) {
        kit_fail(r, "capacity() answered %lld: it must be 0 or more "
                 "(SY_CAPACITY_UNLIMITED for no limit)", (long long)cap);
        return false;
    }
    if (!note)
        return true;
    if (cap == SY_CAPACITY_UNLIMITED)
        kit_note(r, "capacity: unlimited");
    else
        kit_note(r, "capacity with nothing in flight: %lld", (long long)cap);
    if (cap == 0)
        kit_note(r, "capacity() is 0 with nothing in flight: no task could "
                 "ever run on this instance");
    return true;
}

kit_verdict kit_check_create(kit_ctx *x, kit_report *r)
{
    const kit_inputs *in = &x->k->in;
    if (!declarations_accept(in->instance_setting, skip_plugin,
                             x->d->instance_params, "instance", r))
        return KIT_FAIL;
    kit_inst a, b;
    if (kit_inst_init(&a, x, 1) != 0 || kit_inst_init(&b, x, 1) != 0)
        return kit_fail(r, "out of memory");
    /* Once, then again: state left behind by the first must not matter. */
    for (int round = 0; round < 2; round++) {
        if (!create_one(&a, in->instance, r) ||
            !capacity_sane(&a, round == 0, r))
            return KIT_FAIL;
        kit_destroy(&a);
    }
    /* Two at once: instances must not share hidden state. */
    if (!create_one(&a, in->instance, r) || !create_one(&b, in->instance, r))
        return KIT_FAIL;
    kit_destroy(&a);
    if (!capacity_sane(&b, false, r))
        return KIT_FAIL;
    kit_destroy(&b);
    kit_inst_fini(&a);
    kit_inst_fini(&b);
    return kit_pass(r, "created and destroyed twice, and two side by side");
}

/* ------------------------------------------------------------------------ */
/* Refusals: err must be a clear line, inside err_len                       */
/* ------------------------------------------------------------------------ */

#define ERR_LEN 256
#define GUARD 'Z'

/* Judges what a refusing call wrote into a guarded buffer of 2 * ERR_LEN
 * bytes of which it was given ERR_LEN.  NULL when fine, else why not. */
static const char *err_problem(const char *buf)
{
    const char *nul = memchr(buf, '\0', ERR_LEN);
    for (size_t i = ERR_LEN; i < 2 * ERR_LEN; i++)
        if (buf[i] != GUARD)
            return "it wrote past err_len";
    if (!nul)
        return "err is not NUL-terminated within err_len";
    if (nul == buf)
        return "err is empty: say what is wrong";
    if (memchr(buf, '\n', (size_t)(nul - buf)))
        return "err holds more than one line";
    return NULL;
}

/* One bad set for create(): refused, with a good message.  False with r
 * failed. */
static bool refuses(kit_inst *ki, const json_t *settings, const char *what,
                    char *example, size_t example_len, kit_report *r)
{
    char buf[2 * ERR_LEN];
    memset(buf, GUARD, sizeof buf);
    sy_instance *inst = NULL;
    int rc = ki->d->create(ki->api, &ki->host, sy_sdk_params_view(settings),
                           &inst, buf, ERR_LEN);
    if (rc == SY_OK) {
        if (inst)
            ki->d->destroy(inst);
        kit_fail(r, "create() accepted bad settings (%s)", what);
        return false;
    }
    if (rc > 0) {
        kit_fail(r, "create() refused bad settings (%s) with %d: a refusal "
                 "is a negative sy_status", what, rc);
        return false;
    }
    const char *problem = err_problem(buf);
    if (problem) {
        kit_fail(r, "create() refused bad settings (%s), but %s", what,
                 problem);
        return false;
    }
    kit_note(r, "refused %s with %s: %s", what, kit_status_name(rc), buf);
    if (!example[0])
        snprintf(example, example_len, "%.*s", ERR_LEN - 1, buf);
    return true;
}

kit_verdict kit_check_bad_params(kit_ctx *x, kit_report *r)
{
    const kit_inputs *in = &x->k->in;
    json_t *sets;
    const char *why = NULL;
    if (in->bad_instance) {
        sets = json_array();
        json_t *e = json_pack("{s:s, s:O}", "what",
                              "bad_instance from --params", "settings",
                              in->bad_instance);
        json_array_append_new(sets, e);
    } else {
        sets = kit_derive_bad(in->instance, x->d->instance_params, &why);
        if (!sets)
            return kit_skip(r, "no bad settings to try: %s", why);
    }
    kit_inst ki;
    if (kit_inst_init(&ki, x, 1) != 0) {
        json_decref(sets);
        return kit_fail(r, "out of memory");
    }
    char example[ERR_LEN] = "";
    size_t i;
    json_t *e;
    json_array_foreach(sets, i, e) {
        const char *what = json_string_value(json_object_get(e, "what"));
        if (!refuses(&ki, json_object_get(e, "settings"), what, example,
                     sizeof example, r)) {
            json_decref(sets);
            return KIT_FAIL;
        }
    }
    size_t n = json_array_size(sets);
    json_decref(sets);
    kit_inst_fini(&ki);
    return kit_pass(r, "refused %zu bad setting%s, e.g. \"%s\"", n,
                    n == 1 ? "" : "s", example);
}

/* ------------------------------------------------------------------------ */
/* validate                                                                 */
/* ------------------------------------------------------------------------ */

static int call_validate(kit_inst *ki, const json_t *params, char *buf)
{
    memset(buf, GUARD, 2 * ERR_LEN);
    return ki->d->validate(ki->inst, sy_sdk_params_view(params),
                           ki->k->in.base_dir, buf, ERR_LEN);
}

/* bad_task must be refused; derived wrong types are only noted, because
 * the host checks declared types before validate() runs. */
static bool validate_bad(kit_ctx *x, kit_inst *ki, kit_report *r)
{
    char buf[2 * ERR_LEN];
    const kit_inputs *in = &x->k->in;
    if (in->bad_task) {
        int rc = call_validate(ki, in->bad_task, buf);
        const char *problem = rc == SY_OK ? NULL : err_problem(buf);
        if (rc == SY_OK || rc > 0 || problem) {
            kit_fail(r, "validate() %s bad_task%s%s",
                     rc == SY_OK ? "accepted" : "refused",
                     problem ? ", but " : "", problem ? problem : "");
            return false;
        }
        kit_note(r, "bad_task refused: %s", buf);
    }
    const char *why = NULL;
    json_t *sets = x->d->task_params
                       ? kit_derive_bad(in->task, x->d->task_params, &why)
                       : NULL;
    size_t i;
    json_t *e;
    json_array_foreach(sets, i, e) {
        int rc = call_validate(ki, json_object_get(e, "settings"), buf);
        kit_note(r, "derived bad task (%s): %s%s",
                 json_string_value(json_object_get(e, "what")),
                 rc == SY_OK ? "accepted (the host's declarations catch it)"
                             : "refused: ",
                 rc == SY_OK || err_problem(buf) ? "" : buf);
    }
    json_decref(sets);
    return true;
}

kit_verdict kit_check_validate(kit_ctx *x, kit_report *r)
{
    const kit_inputs *in = &x->k->in;
    if (!declarations_accept(in->task_setting, NULL, x->d->task_params,
                             "task", r))
        return KIT_FAIL;
    if (!x->d->validate)
        return kit_pass(r, "no validate() (optional); the declarations "
                        "accept the task");
    kit_inst ki;
    if (!kit_open(x, &ki, 1, r))
        return KIT_FAIL;
    char buf[2 * ERR_LEN];
    int rc = call_validate(&ki, in->task, buf);
    if (rc != SY_OK) {
        const char *problem = err_problem(buf);
        return kit_fail(r, "validate() refused the kit's task with %s: %s "
                        "(give the task's parameters as task = { ... } in "
                        "--params)", kit_status_name(rc),
                        problem ? problem : buf);
    }
    if (in->long_task) {
        rc = call_validate(&ki, in->long_task, buf);
        if (rc != SY_OK)
            return kit_fail(r, "validate() refused long_task with %s: %.200s",
                            kit_status_name(rc),
                            err_problem(buf) ? "(bad err)" : buf);
    }
    if (!validate_bad(x, &ki, r))
        return KIT_FAIL;
    kit_destroy(&ki);
    kit_inst_fini(&ki);
    return kit_pass(r, "validate() accepts the task%s",
                    in->bad_task ? " and refuses bad_task" : "");
}
