/*
 * switchyard-task-runner -- runs one task function in its own process, for
 * `isolate = true`, so that a crash fails only that attempt.  The protocol
 * is in runner.h; the plugin's side is isolate.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <switchyard/json_params.h>

#include "runner.h"
#include "taskapi.h"

static volatile sig_atomic_t cancelled_flag;

static void on_term(int sig)
{
    (void)sig;
    cancelled_flag = 1;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Writes the error record and returns `code`. */
static int report_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int report_error(int code, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    write_all(2, SY_RUNNER_ERROR_MARK, 2);
    write_all(2, buf, strlen(buf));
    return code;
}

static int runner_cancelled(void *owner)
{
    (void)owner;
    return cancelled_flag != 0;
}

static void runner_log(void *owner, sy_log_level level, const char *line)
{
    (void)owner;
    char *rec = NULL;
    int n = asprintf(&rec, SY_RUNNER_LOG_MARK "%d %s\n", (int)level, line);
    if (n > 0)
        write_all(2, rec, (size_t)n);
    free(rec);
}

static char *read_all(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 == cap) {
            char *p = realloc(buf, cap * 2);
            if (!p)
                break;
            buf = p;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (r == 0) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        n += (size_t)r;
    }
    free(buf);
    return NULL;
}

/* Opens LIB and finds SYMBOL; on failure writes the error record. */
static int open_function(const char *lib, const char *symbol, void **h,
                         sy_task_fn *fn)
{
    char err[1024];
    *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!*h) {
        const char *why = dlerror();
        return report_error(SY_RUNNER_EXIT_SETUP, "cannot load task library "
                            "%s: %s", lib, why ? why : "dlopen failed");
    }
    if (sy_task_lib_check_abi(*h, lib, err, sizeof err) != SY_OK)
        return report_error(SY_RUNNER_EXIT_SETUP, "%s", err);
    dlerror();
    void *sym = dlsym(*h, symbol);
    if (!sym)
        return report_error(SY_RUNNER_EXIT_SETUP, "task library %s has no "
                            "symbol %s (is it exported with "
                            "SY_TASK_EXPORT?)", lib, symbol);
    memcpy(fn, &sym, sizeof *fn);
    return SY_RUNNER_EXIT_OK;
}

static const char *env_or_empty(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

static void fill_info(sy_task_info *i)
{
    i->ns = env_or_empty("SWITCHYARD_TASK_NS");
    i->run_id = env_or_empty("SWITCHYARD_RUN_ID");
    i->task_id = env_or_empty("SWITCHYARD_TASK_ID");
    i->workflow = env_or_empty("SWITCHYARD_WORKFLOW");
    i->base_dir = env_or_empty("SWITCHYARD_BASE_DIR");
    i->attempt =
        (uint32_t)strtoul(env_or_empty("SWITCHYARD_ATTEMPT"), NULL, 10);
    i->timeout_ms = strtoll(env_or_empty("SWITCHYARD_TIMEOUT_MS"), NULL, 10);
}

static json_t *load_params(void)
{
    const char *text = getenv(SY_RUNNER_PARAMS_ENV);
    if (!text || !*text)
        return json_object();
    json_error_t e;
    json_t *p = json_loads(text, 0, &e);
    if (p && !json_is_object(p)) {
        json_decref(p);
        p = NULL;
    }
    return p;
}

/* A crash must end the process with its signal, which the plugin names;
 * sanitizers and inherited handlers would turn it into an exit status. */
static void setup_signals(void)
{
    static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        signal(faults[i], SIG_DFL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

/* Calls the function and reports; the function's own stdout goes to
 * stderr, the output to `out_fd`. */
/* The parameter getters the task API passes through: the runner reads its
 * parameters as JSON, the same way the host holds them. */
static const sy_host_api json_params_api = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    SY_SDK_JSON_PARAMS_INIT,
};

static int call(sy_task_fn fn, const char *symbol, const char *input,
                size_t input_len, json_t *params, int out_fd)
{
    sy_task_api api;
    sy_task_api_fill(&api, &json_params_api);
    sy_task_ctx ctx;
    sy_task_ctx_init(&ctx, input, input_len, sy_sdk_params_view(params));
    fill_info(&ctx.info);
    ctx.is_cancelled = runner_cancelled;
    ctx.emit_log = runner_log;
    int rc = fn(&api, &ctx);
    fflush(stdout);
    int code = SY_RUNNER_EXIT_OK;
    if (rc != 0 && ctx.error)
        code = report_error(SY_RUNNER_EXIT_FAILED, "%s", ctx.error);
    else if (rc != 0)
        code = report_error(SY_RUNNER_EXIT_FAILED, "function %s returned %d "
                            "without an error message", symbol, rc);
    else if (ctx.oom)
        code = report_error(SY_RUNNER_EXIT_FAILED, "out of memory copying "
                            "the output of %s", symbol);
    else if (ctx.output)
        write_all(out_fd, ctx.output, ctx.output_len);
    sy_task_ctx_release(&ctx);
    return code;
}

static int run(const char *lib, const char *symbol)
{
    setup_signals();
    int out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (out_fd < 0 || dup2(2, 1) < 0)
        return report_error(SY_RUNNER_EXIT_SETUP, "cannot set up stdout: %s",
                            strerror(errno));
    size_t len = 0;
    char *input = read_all(0, &len);
    json_t *params = load_params();
    void *h = NULL;
    sy_task_fn fn = NULL;
    int code;
    if (!input)
        code = report_error(SY_RUNNER_EXIT_SETUP, "cannot read the input "
                            "from stdin: %s", strerror(errno));
    else if (!params)
        code = report_error(SY_RUNNER_EXIT_SETUP, "%s is not a JSON object",
                            SY_RUNNER_PARAMS_ENV);
    else if ((code = open_function(lib, symbol, &h, &fn)) == SY_RUNNER_EXIT_OK)
        code = call(fn, symbol, len ? input : NULL, len, params, out_fd);
    json_decref(params);
    free(input);
    if (h)
        dlclose(h);
    close(out_fd);
    return code;
}

static int check(const char *lib, const char *symbol)
{
    void *h = NULL;
    sy_task_fn fn = NULL;
    int code = open_function(lib, symbol, &h, &fn);
    if (h)
        dlclose(h);
    return code;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--check") == 0)
        return check(argv[2], argv[3]);
    if (argc == 3 && argv[1][0] != '-')
        return run(argv[1], argv[2]);
    fprintf(stderr, "usage: switchyard-task-runner [--check] LIB SYMBOL\n"
                    "Runs one Switchyard task function in this process "
                    "(the thread executor starts it\nfor isolate = true): "
                    "input on stdin, parameters in $%s,\noutput on stdout.\n",
            SY_RUNNER_PARAMS_ENV);
    return SY_RUNNER_EXIT_SETUP;
}
