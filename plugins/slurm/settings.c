/*
 * settings.c -- the slurm instance's settings, a task's parameters, and
 * the sbatch command line of one attempt.
 *
 * Resource requests (partition, account, qos, time, cpus, mem, gpus,
 * constraint, working_dir, sbatch_options) are read from the instance's
 * settings and again from the task's parameters; the task's win, field by
 * field, and its sbatch_options come after the instance's.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <switchyard/spawn.h>

#include "slurm.h"

#define SPEC(n, t, d) \
    static const sy_param_spec p_##n = {sizeof(sy_param_spec), 0, #n, t, d}

SPEC(partition, SY_PARAM_STRING, "the partition (--partition)");
SPEC(account, SY_PARAM_STRING, "the account charged (--account)");
SPEC(qos, SY_PARAM_STRING, "the quality of service (--qos)");
SPEC(time, SY_PARAM_DURATION,
     "the job's time limit (--time, rounded up to minutes: Slurm keeps "
     "whole minutes); default: the task's timeout");
SPEC(cpus, SY_PARAM_INT, "CPUs of the job (--cpus-per-task)");
SPEC(mem, SY_PARAM_STRING, "memory of the job (--mem), e.g. \"4G\"");
SPEC(gpus, SY_PARAM_INT, "GPUs of the job (--gres=gpu:N)");
SPEC(constraint, SY_PARAM_STRING, "node features (--constraint)");
SPEC(working_dir, SY_PARAM_STRING,
     "where the job runs and its files go; the host reads them (default: "
     "slurm-jobs under the host's directory)");
SPEC(sbatch_options, SY_PARAM_ARRAY, "more sbatch options, one a string");
SPEC(max_in_flight, SY_PARAM_INT, "jobs queued or running at once");
SPEC(poll_interval, SY_PARAM_DURATION,
     "how often one squeue follows every job of the instance (default 2s)");
SPEC(max_poll_interval, SY_PARAM_DURATION,
     "the interval's bound when a slow controller makes it back off");
SPEC(max_requests_per_minute, SY_PARAM_INT,
     "queries per minute at most (default 120)");
SPEC(command_timeout, SY_PARAM_DURATION, "one Slurm command's limit");
SPEC(submit_retry, SY_PARAM_DURATION,
     "the wait after the controller refused a job for a limit of jobs "
     "(MaxSubmitJobs): deferred, not charged (default 10s)");
SPEC(accounting, SY_PARAM_STRING,
     "where a job the controller forgot is looked up: \"auto\" (sacct "
     "until it says there is no accounting), \"sacct\" or \"none\"");
SPEC(lost_after, SY_PARAM_DURATION,
     "how long a job neither squeue nor sacct lists, with no exit status, "
     "is waited for before it fails as lost (default 2m)");
SPEC(max_submitting, SY_PARAM_INT,
     "sbatch commands running at once (default 4)");
SPEC(bin_dir, SY_PARAM_STRING, "where sbatch, squeue, scancel are (PATH)");
SPEC(slurm_conf, SY_PARAM_STRING, "SLURM_CONF for the commands");
SPEC(command, SY_PARAM_ARRAY,
     "what the job runs, an argv: [\"prog\", \"arg\"] (or shell)");
SPEC(shell, SY_PARAM_STRING, "what the job runs, a shell command line");

#define REQS &p_partition, &p_account, &p_qos, &p_time, &p_cpus, &p_mem, \
             &p_gpus, &p_constraint, &p_working_dir, &p_sbatch_options

const sy_param_spec *const sy_slurm_instance_params[] = {
    REQS, &p_max_in_flight, &p_poll_interval, &p_max_poll_interval,
    &p_max_requests_per_minute, &p_command_timeout, &p_submit_retry,
    &p_accounting, &p_lost_after, &p_max_submitting, &p_bin_dir,
    &p_slurm_conf, NULL};
const sy_param_spec *const sy_slurm_task_params[] = {REQS, &p_command,
                                                     &p_shell, NULL};

/* ---- argv ------------------------------------------------------------- */

int sy_slurm_argv_add(sy_slurm_argv *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return SY_ENOMEM;
        a->v = v;
        a->cap = cap;
    }
    char *d = strdup(s);
    if (!d)
        return SY_ENOMEM;
    a->v[a->n++] = d;
    a->v[a->n] = NULL;
    return SY_OK;
}

int sy_slurm_argv_addf(sy_slurm_argv *a, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        return SY_EINVAL;
    return sy_slurm_argv_add(a, buf);
}

void sy_slurm_argv_free(sy_slurm_argv *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* ---- requests ------------------------------------------------------------ */

/* Reads the request fields present in p over *r (strings point into p). */
static int req_read(const sy_host_api *api, const sy_params *p,
                    sy_slurm_req *r, char *err, size_t err_len)
{
    int rc;
    if ((rc = sy_sdk_param_string(api, p, "partition", r->partition,
                                  &r->partition, err, err_len)) ||
        (rc = sy_sdk_param_string(api, p, "account", r->account, &r->account,
                                  err, err_len)) ||
        (rc = sy_sdk_param_string(api, p, "qos", r->qos, &r->qos, err,
                                  err_len)) ||
        (rc = sy_sdk_param_duration_ms(api, p, "time", r->time_ms, 60000,
                                       INT64_MAX, &r->time_ms, err,
                                       err_len)) ||
        (rc = sy_sdk_param_int(api, p, "cpus", r->cpus, 1, 100000, &r->cpus,
                               err, err_len)) ||
        (rc = sy_sdk_param_string(api, p, "mem", r->mem, &r->mem, err,
                                  err_len)) ||
        (rc = sy_sdk_param_int(api, p, "gpus", r->gpus, 0, 1024, &r->gpus,
                               err, err_len)) ||
        (rc = sy_sdk_param_string(api, p, "constraint", r->constraint,
                                  &r->constraint, err, err_len)) ||
        (rc = sy_sdk_param_string(api, p, "working_dir", r->working_dir,
                                  &r->working_dir, err, err_len)))
        return rc;
    return SY_OK;
}

static int options_check(const sy_host_api *api, const sy_params *p,
                         size_t *n, char *err, size_t err_len)
{
    *n = 0;
    if (api->param_type(p, "sbatch_options") == SY_PARAM_NONE)
        return SY_OK;
    int rc = api->param_array_len(p, "sbatch_options", n);
    for (size_t i = 0; rc == SY_OK && i < *n; i++) {
        const char *o;
        rc = api->param_array_string(p, "sbatch_options", i, &o);
        if (rc == SY_OK && o[0] != '-')
            rc = SY_EINVAL;
    }
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "sbatch_options: must be a list of "
                    "options, each a string starting with '-'");
    return rc;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int sy_slurm_settings_read(const sy_host_api *api, const sy_params *cfg,
                           sy_slurm_settings *s, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    sy_slurm_req r = {0};
    const char *bin = NULL, *conf = NULL, *acct = NULL;
    size_t n_opt = 0;
    int rc;
    if ((rc = req_read(api, cfg, &r, err, err_len)) ||
        (rc = options_check(api, cfg, &n_opt, err, err_len)) ||
        (rc = sy_sdk_param_int(api, cfg, "max_in_flight",
                               SY_SLURM_DEFAULT_MAX_IN_FLIGHT, 1,
                               SY_SLURM_MAX_IN_FLIGHT, &s->max_in_flight, err,
                               err_len)) ||
        (rc = sy_sdk_param_duration_ms(api, cfg, "poll_interval",
                                       SY_SLURM_DEFAULT_POLL_MS, 50, 3600000,
                                       &s->poll_ms, err, err_len)) ||
        (rc = sy_sdk_param_duration_ms(api, cfg, "max_poll_interval",
                                       SY_SLURM_DEFAULT_MAX_POLL_MS, 50,
                                       3600000, &s->max_poll_ms, err,
                                       err_len)) ||
        (rc = sy_sdk_param_int(api, cfg, "max_requests_per_minute",
                               SY_SLURM_DEFAULT_RPM, 1, 60000, &s->max_rpm,
                               err, err_len)) ||
        (rc = sy_sdk_param_duration_ms(api, cfg, "command_timeout",
                                       SY_SLURM_DEFAULT_COMMAND_MS, 100,
                                       3600000, &s->command_ms, err,
                                       err_len)) ||
        (rc = sy_sdk_param_duration_ms(api, cfg, "submit_retry",
                                       SY_SLURM_DEFER_MS, 0, 3600000,
                                       &s->submit_retry_ms, err, err_len)) ||
        (rc = sy_sdk_param_duration_ms(api, cfg, "lost_after",
                                       SY_SLURM_DEFAULT_LOST_AFTER_MS, 0,
                                       86400000, &s->lost_after_ms, err,
                                       err_len)) ||
        (rc = sy_sdk_param_int(api, cfg, "max_submitting",
                               SY_SLURM_DEFAULT_SUBMITTERS, 1,
                               SY_SLURM_MAX_SUBMITTERS, &s->max_submitting,
                               err, err_len)) ||
        (rc = sy_sdk_param_string(api, cfg, "accounting", "auto", &acct, err,
                                  err_len)) ||
        (rc = sy_sdk_param_string(api, cfg, "bin_dir", NULL, &bin, err,
                                  err_len)) ||
        (rc = sy_sdk_param_string(api, cfg, "slurm_conf", NULL, &conf, err,
                                  err_len)))
        return rc;
    if (!strcmp(acct, "auto")) {
        s->accounting = SY_SLURM_ACCT_AUTO;
    } else if (!strcmp(acct, "sacct")) {
        s->accounting = SY_SLURM_ACCT_SACCT;
    } else if (!strcmp(acct, "none")) {
        s->accounting = SY_SLURM_ACCT_NONE;
    } else {
        sy_sdk_errf(err, err_len, "accounting: must be \"auto\", \"sacct\" "
                    "or \"none\", not \"%.100s\"", acct);
        return SY_EINVAL;
    }
    if (s->max_poll_ms < s->poll_ms)
        s->max_poll_ms = s->poll_ms;
    char cwd[PATH_MAX];
    char def_wd[PATH_MAX + 16];
    if (!r.working_dir) {
        if (!getcwd(cwd, sizeof cwd)) {
            sy_sdk_errf(err, err_len, "working_dir: not set, and the "
                        "host's directory is unknown: %s", strerror(errno));
            return SY_EINVAL;
        }
        snprintf(def_wd, sizeof def_wd, "%s/slurm-jobs", cwd);
        r.working_dir = def_wd;
    }
    if (r.working_dir[0] != '/') {
        sy_sdk_errf(err, err_len, "working_dir: must be an absolute path, "
                    "got \"%s\"", r.working_dir);
        return SY_EINVAL;
    }
    s->req = r;
    s->req.partition = dup_or_null(r.partition);
    s->req.account = dup_or_null(r.account);
    s->req.qos = dup_or_null(r.qos);
    s->req.mem = dup_or_null(r.mem);
    s->req.constraint = dup_or_null(r.constraint);
    s->req.working_dir = dup_or_null(r.working_dir);
    s->bin_dir = dup_or_null(bin);
    s->slurm_conf = dup_or_null(conf);
    s->sbatch_options = calloc(n_opt + 1, sizeof *s->sbatch_options);
    s->n_sbatch_options = n_opt;
    /* A copy that failed must not read as a setting left out (a job
     * without its partition, the commands looked for in PATH). */
    bool nomem = !s->sbatch_options || !s->req.working_dir ||
                 (r.partition && !s->req.partition) ||
                 (r.account && !s->req.account) || (r.qos && !s->req.qos) ||
                 (r.mem && !s->req.mem) ||
                 (r.constraint && !s->req.constraint) ||
                 (bin && !s->bin_dir) || (conf && !s->slurm_conf);
    for (size_t i = 0; !nomem && i < n_opt; i++) {
        const char *o = NULL;
        api->param_array_string(cfg, "sbatch_options", i, &o);
        if (!(s->sbatch_options[i] = strdup(o)))
            nomem = true;
    }
    if (nomem) {
        sy_slurm_settings_free(s);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    if (mkdir(s->req.working_dir, 0755) != 0 && errno != EEXIST) {
        sy_sdk_errf(err, err_len, "working_dir: cannot make %s: %s",
                    s->req.working_dir, strerror(errno));
        sy_slurm_settings_free(s);
        return SY_EINVAL;
    }
    return SY_OK;
}

void sy_slurm_settings_free(sy_slurm_settings *s)
{
    free((char *)s->req.partition);
    free((char *)s->req.account);
    free((char *)s->req.qos);
    free((char *)s->req.mem);
    free((char *)s->req.constraint);
    free((char *)s->req.working_dir);
    for (size_t i = 0; s->sbatch_options && i < s->n_sbatch_options; i++)
        free(s->sbatch_options[i]);
    free(s->sbatch_options);
    free(s->bin_dir);
    free(s->slurm_conf);
    memset(s, 0, sizeof *s);
}

int sy_slurm_task_check(const sy_host_api *api, const sy_params *p,
                        char *err, size_t err_len)
{
    sy_slurm_req r = {0};
    size_t n;
    int rc = req_read(api, p, &r, err, err_len);
    if (rc == SY_OK)
        rc = options_check(api, p, &n, err, err_len);
    if (rc != SY_OK)
        return rc;
    sy_param_type t = api->param_type(p, "command");
    sy_param_type sh = api->param_type(p, "shell");
    if ((t == SY_PARAM_NONE) == (sh == SY_PARAM_NONE)) {
        sy_sdk_errf(err, err_len, "command or shell: one of them, not %s",
                    t == SY_PARAM_NONE ? "neither" : "both");
        return SY_EINVAL;
    }
    if (sh == SY_PARAM_STRING) {
        const char *c = NULL;
        api->param_string(p, "shell", &c);
        if (!c || !*c)
            rc = SY_EINVAL;
    } else if (t == SY_PARAM_ARRAY) {
        size_t len = 0;
        api->param_array_len(p, "command", &len);
        for (size_t i = 0; i < len && rc == SY_OK; i++) {
            const char *a;
            if (api->param_array_string(p, "command", i, &a) != SY_OK)
                rc = SY_ETYPE;
        }
        if (len == 0)
            rc = SY_EINVAL;
    } else {
        rc = SY_ETYPE;
    }
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "command: must be a non-empty list of "
                    "strings; shell: a non-empty string");
    if (rc == SY_OK && r.working_dir && r.working_dir[0] != '/') {
        sy_sdk_errf(err, err_len, "working_dir: must be an absolute path, "
                    "got \"%s\"", r.working_dir);
        rc = SY_EINVAL;
    }
    return rc;
}

/* ---- one attempt's sbatch ------------------------------------------------ */

/* Appends s to buf as one single-quoted shell word. */
static void shell_quote(char *buf, size_t len, const char *s)
{
    size_t o = strlen(buf);
    if (o + 1 < len)
        buf[o++] = '\'';
    for (; *s && o + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(buf + o, "'\\''", 4);
            o += 4;
        } else {
            buf[o++] = *s;
        }
    }
    if (o + 1 < len)
        buf[o++] = '\'';
    buf[o] = '\0';
}

/* The shell command the job runs: the task's command, its exit status
 * written to BASE.rc afterwards (first to a temporary name, so a reader
 * never sees half of it). */
static int wrap_command(const sy_host_api *api, const sy_params *p,
                        const char *base, char *buf, size_t len)
{
    char cmd[16384] = "";
    if (api->param_type(p, "shell") == SY_PARAM_STRING) {
        const char *c = NULL;
        api->param_string(p, "shell", &c);
        snprintf(cmd, sizeof cmd, "%s", c ? c : "");
    } else {
        size_t n = 0;
        api->param_array_len(p, "command", &n);
        for (size_t i = 0; i < n; i++) {
            const char *a = "";
            api->param_array_string(p, "command", i, &a);
            if (i)
                strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
            shell_quote(cmd, sizeof cmd, a);
        }
    }
    if (strlen(cmd) + 1 >= sizeof cmd)
        return SY_ERANGE;
    char qrc[PATH_MAX + 8] = "", qtmp[PATH_MAX + 8] = "";
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s.rc", base);
    shell_quote(qrc, sizeof qrc, path);
    snprintf(path, sizeof path, "%s.rc.tmp", base);
    shell_quote(qtmp, sizeof qtmp, path);
    int n = snprintf(buf, len, "( %s\n); rc=$?; echo $rc >%s && mv %s %s; "
                     "exit $rc", cmd, qtmp, qtmp, qrc);
    return n > 0 && (size_t)n < len ? SY_OK : SY_ERANGE;
}

/* Job names and files hold only these; anything else becomes '_'. */
static void name_part(char *dst, size_t cap, const char *src)
{
    size_t o = strlen(dst);
    for (; *src && o + 1 < cap; src++)
        dst[o++] = (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789_.-", *src) ? *src : '_');
    dst[o] = '\0';
}

int sy_slurm_job_init(sy_instance *inst, sy_slurm_job *job, char *err,
                      size_t err_len)
{
    const sy_task *t = job->task;
    const char *wd = inst->set.req.working_dir;
    if (inst->api->param_type(t->params, "working_dir") == SY_PARAM_STRING)
        inst->api->param_string(t->params, "working_dir", &wd);
    char att[16];
    snprintf(att, sizeof att, "%u", t->attempt);
    strcpy(job->name, "sy-");
    name_part(job->name, 80, t->run_id);
    strcat(job->name, "-");
    name_part(job->name, 120, t->task_id);
    strcat(job->name, "-");
    name_part(job->name, sizeof job->name, att);
    snprintf(job->comment, sizeof job->comment,
             "switchyard run=%s task=%s attempt=%u", t->run_id, t->task_id,
             t->attempt);
    for (char *c = job->comment; *c; c++)
        if (*c == '|' || *c == '\n' || *c == ',')
            *c = '_';
    size_t blen = strlen(wd) + strlen(job->name) + 2;
    free(job->base);
    if (!(job->base = malloc(blen))) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    snprintf(job->base, blen, "%s/%s", wd, job->name);
    return SY_OK;
}

int sy_slurm_sbatch_argv(sy_instance *inst, sy_slurm_job *job,
                         sy_slurm_argv *a, char *err, size_t err_len)
{
    const sy_host_api *api = inst->api;
    const sy_task *t = job->task;
    sy_slurm_req r = inst->set.req;
    if (req_read(api, t->params, &r, err, err_len) != SY_OK)
        return SY_EINVAL;
    if (r.time_ms == 0 && t->timeout_ms > 0)
        r.time_ms = t->timeout_ms;
    if (!job->base && sy_slurm_job_init(inst, job, err, err_len) != SY_OK)
        return SY_ENOMEM;
    if (mkdir(r.working_dir, 0755) != 0 && errno != EEXIST) {
        sy_sdk_errf(err, err_len, "working_dir: cannot make %s: %s",
                    r.working_dir, strerror(errno));
        return SY_EIO;
    }
    /* The input context, the job's stdin. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s.in", job->base);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(t->input, 1, t->input_len, f) != t->input_len) {
        sy_sdk_errf(err, err_len, "cannot write the input to %s: %s", path,
                    strerror(errno));
        if (f)
            fclose(f);
        return SY_EIO;
    }
    if (fclose(f) != 0) {
        sy_sdk_errf(err, err_len, "cannot write %s: %s", path,
                    strerror(errno));
        return SY_EIO;
    }
    snprintf(path, sizeof path, "%s.rc", job->base);
    unlink(path);
    /* Only the loop thread builds command lines. */
    static char wbuf[20000];
    if (wrap_command(api, t->params, job->base, wbuf, sizeof wbuf) !=
        SY_OK) {
        sy_sdk_errf(err, err_len, "command: too long");
        return SY_ERANGE;
    }
    int rc = SY_OK;
#define ADD(...) if (rc == SY_OK) rc = sy_slurm_argv_addf(a, __VA_ARGS__)
    ADD("sbatch");
    ADD("--parsable");
    ADD("--job-name=%s", job->name);
    ADD("--comment=%s", job->comment);
    ADD("--chdir=%s", r.working_dir);
    ADD("--input=%s.in", job->base);
    ADD("--output=%s.out", job->base);
    ADD("--error=%s.err", job->base);
    ADD("--no-requeue");
    ADD("--nodes=1");
    ADD("--ntasks=1");
    if (r.partition)
        ADD("--partition=%s", r.partition);
    if (r.account)
        ADD("--account=%s", r.account);
    if (r.qos)
        ADD("--qos=%s", r.qos);
    if (r.time_ms > 0)
        ADD("--time=%lld", (long long)((r.time_ms + 59999) / 60000));
    if (r.cpus > 0)
        ADD("--cpus-per-task=%lld", (long long)r.cpus);
    if (r.mem)
        ADD("--mem=%s", r.mem);
    if (r.gpus > 0)
        ADD("--gres=gpu:%lld", (long long)r.gpus);
    if (r.constraint)
        ADD("--constraint=%s", r.constraint);
    for (size_t i = 0; i < inst->set.n_sbatch_options; i++)
        ADD("%s", inst->set.sbatch_options[i]);
    size_t n = 0;
    if (api->param_type(t->params, "sbatch_options") == SY_PARAM_ARRAY)
        api->param_array_len(t->params, "sbatch_options", &n);
    for (size_t i = 0; i < n; i++) {
        const char *o = "";
        api->param_array_string(t->params, "sbatch_options", i, &o);
        ADD("%s", o);
    }
    if (rc == SY_OK)
        rc = sy_slurm_argv_add(a, "--wrap");
    if (rc == SY_OK)
        rc = sy_slurm_argv_add(a, wbuf);
#undef ADD
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "cannot build the sbatch command line");
    return rc;
}

int sy_slurm_partition_exists(sy_instance *inst, const char *name, char *err,
                              size_t err_len)
{
    const char *argv[] = {"scontrol", "-o", "show", "partition", name, NULL};
    sy_spawn_result r;
    if (sy_slurm_command(inst, argv, &r, err, err_len) != 0)
        return -1;
    int ans;
    if (r.exited && r.exit_code == 0 && strstr(r.out, "PartitionName=")) {
        ans = 1;
    } else if (r.exited && (strstr(r.err, "not found") ||
                            strstr(r.out, "not found") ||
                            strstr(r.err, "Invalid partition"))) {
        sy_sdk_errf(err, err_len, "partition: the controller has no "
                    "partition \"%s\"", name);
        ans = 0;
    } else {
        sy_sdk_errf(err, err_len, "scontrol: %.200s", r.err);
        sy_sdk_one_line(err);
        ans = -1;
    }
    sy_spawn_result_free(&r);
    return ans;
}
