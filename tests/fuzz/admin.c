/*
 * admin.c -- fuzz target: one request to the admin API through our own
 * handling (admin/request.c: the route, 404 and 405, the token, the
 * announced length; then the handler: query values, paging, JSON bodies,
 * the service and the store), not libmicrohttpd's parser.  The request
 * comes through an io of this file's (admin/internal.h) that records the
 * reply, against a real service: its configuration, workflows and
 * dashboard files written here, an in-memory SQLite store holding three
 * runs (Pending, Failed with events and logs, Cancelled), an engine made
 * (not run) so that events and cancels are real.
 *
 * Input, an HTTP/1 request without its version:
 *
 *   METHOD TARGET[ remote]\n        TARGET: PATH[?QUERY], %XX decoded as
 *   Name: value\n ...               MHD does; "remote": a listener other
 *   \n                              machines reach (reads need the token)
 *   BODY
 *
 * Properties: exactly one reply (or one stream), its status 200 to 599; a
 * JSON reply is one JSON value and a line, an object with an "error" string
 * when the status is 400 or more; 401 asks for Bearer, 405 says what is
 * Allowed; no change, and no read on a remote listener, succeeds without
 * the token.  A change that succeeded reopens the service before the next
 * input, so each input meets the same host.
 */
#include "fuzz.h"

#include <dlfcn.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "admin/internal.h"
#include "base/log.h"

#define TOKEN "fuzz-token-0123456789abcdef"
#define MAX_HEADERS 16
#define MAX_ARGS 16

/* What the io saw of one request and its reply. */
typedef struct exchange {
    const char *hname[MAX_HEADERS], *hval[MAX_HEADERS];
    size_t nh;
    char *aname[MAX_ARGS], *aval[MAX_ARGS];
    size_t na;
    int replies;
    unsigned status;
    char *body; /* the reply's */
    size_t len;
    char type[128], allow[64];
    bool www_auth, streamed;
} exchange;

static const char *io_lookup(sy_admin_req *rq, bool header, const char *key)
{
    exchange *x = rq->io_data;
    if (header) {
        for (size_t i = 0; i < x->nh; i++)
            if (strcasecmp(x->hname[i], key) == 0)
                return x->hval[i];
        return NULL;
    }
    for (size_t i = 0; i < x->na; i++)
        if (strcmp(x->aname[i], key) == 0)
            return x->aval[i];
    return NULL;
}

static enum MHD_Result io_reply(sy_admin_req *rq, unsigned status, const char *body,
                                size_t len, const char *const *headers)
{
    exchange *x = rq->io_data;
    x->replies++;
    x->status = status;
    free(x->body);
    x->body = malloc(len + 1);
    if (!x->body)
        abort();
    memcpy(x->body, body, len);
    x->body[len] = '\0';
    x->len = len;
    for (size_t i = 0; headers && headers[i]; i += 2) {
        SY_FUZZ_CHECK(headers[i + 1], "header %s without a value", headers[i]);
        if (strcmp(headers[i], MHD_HTTP_HEADER_CONTENT_TYPE) == 0)
            snprintf(x->type, sizeof x->type, "%s", headers[i + 1]);
        if (strcmp(headers[i], MHD_HTTP_HEADER_ALLOW) == 0)
            snprintf(x->allow, sizeof x->allow, "%s", headers[i + 1]);
        if (strcmp(headers[i], MHD_HTTP_HEADER_WWW_AUTHENTICATE) == 0)
            x->www_auth = strcmp(headers[i + 1], "Bearer") == 0;
    }
    return MHD_YES;
}

static bool io_stream(sy_admin_req *rq, sy_admin_stream *s, const char *content_type,
                      enum MHD_Result *res)
{
    (void)s;
    exchange *x = rq->io_data;
    x->replies++;
    x->status = 200;
    x->streamed = true;
    snprintf(x->type, sizeof x->type, "%s", content_type);
    *res = MHD_YES;
    return true;
}

static void io_wake(sy_admin_stream *s) { (void)s; }

/* Every request comes from one documentation address, into the audit
 * trail the store keeps of each change. */
static void io_peer(sy_admin_req *rq, char *buf, size_t len)
{
    (void)rq;
    snprintf(buf, len, "192.0.2.1");
}

static const sy_admin_io fuzz_io = {io_lookup, io_reply, io_stream, io_wake, io_peer};

/* --- the host -------------------------------------------------------------- */

static const char cfg_text[] =
    "store = \"sqlite::memory:\";\n"
    "plugin_dirs = [\"plugins\"];\n"
    "workflow_dirs = [\"workflows\"];\n"
    "routes = \"routes.cfg\";\n"
    "executors = { default = { plugin = \"thread\"; workers = 1; };\n"
    "              gpu = { plugin = \"thread\"; workers = 1; }; };\n"
    "max_context_bytes = 2048;\n"
    "admin = { listen = \"127.0.0.1:0\"; max_body = 4096; dashboard_dir = \"dashboard\"; };\n";
static const char routes_text[] =
    "routes = {\n  default = \"default\";\n"
    "  rules = ( { match = \"public::hello::b\"; executor = \"gpu\"; } );\n};\n";
static const char wf_text[] =
    "workflow = {\n  name = \"hello\";\n  tasks = (\n"
    "    { id = \"a\"; command = [\"/bin/true\"]; },\n"
    "    { id = \"b\"; after = [\"a\"];"
    " command = [\"/bin/true\"]; }\n  );\n};\n";

static sy_service sv;
static sy_admin admin;
static sy_admin_config admin_cfg;
static bool open_, dirty;
static char paths[8][4200];

static void put(size_t i, const char *name, const char *text)
{
    snprintf(paths[i], sizeof paths[i], "%s", sy_fuzz_write(name, (const uint8_t *)text,
                                                            strlen(text)));
}

static void remove_files(void)
{
    for (size_t i = sizeof paths / sizeof paths[0]; i-- > 0;)
        if (paths[i][0] && remove(paths[i]) != 0)
            rmdir(paths[i]);
}

/* The thread plugin of the build this program belongs to: $SY_THREAD_PLUGIN
 * (make check sets it), else beside the program (BUILD/tests/fuzz/). */
static void copy_plugin(void)
{
    char from[4200];
    const char *env = getenv("SY_THREAD_PLUGIN");
    if (env && *env) {
        snprintf(from, sizeof from, "%s", env);
    } else {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        SY_FUZZ_CHECK(n > 0, "where is this program?");
        exe[n] = '\0';
        *strrchr(exe, '/') = '\0';
        snprintf(from, sizeof from, "%s/../../plugins/thread/.libs/thread.so", exe);
    }
    FILE *f = fopen(from, "rb");
    SY_FUZZ_CHECK(f, "%s: the thread plugin is not built (make)", from);
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    char *buf = len > 0 ? malloc((size_t)len) : NULL;
    SY_FUZZ_CHECK(buf && fseek(f, 0, SEEK_SET) == 0 &&
                      fread(buf, 1, (size_t)len, f) == (size_t)len,
                  "%s: cannot be read", from);
    fclose(f);
    snprintf(paths[7], sizeof paths[7], "%s", sy_fuzz_write("plugins/thread.so",
                                                            (const uint8_t *)buf, (size_t)len));
    free(buf);
    SY_FUZZ_CHECK(chmod(paths[7], 0755) == 0, "chmod %s", paths[7]);
    /* Loaded once for good, though each reopen of the host closes it:
     * built for fuzzing like the host, its coverage counters must not go
     * away under libFuzzer. */
    SY_FUZZ_CHECK(dlopen(paths[7], RTLD_NOW | RTLD_NODELETE), "%s", dlerror());
}

static void write_host(void)
{
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/plugins", sy_fuzz_dir());
    mkdir(sub, 0700);
    snprintf(paths[6], sizeof paths[6], "%s", sub);
    snprintf(sub, sizeof sub, "%s/workflows", sy_fuzz_dir());
    mkdir(sub, 0700);
    snprintf(sub, sizeof sub, "%s/dashboard", sy_fuzz_dir());
    mkdir(sub, 0700);
    atexit(remove_files);
    put(0, "switchyard.cfg", cfg_text);
    put(1, "routes.cfg", routes_text);
    snprintf(paths[2], sizeof paths[2], "%s/workflows", sy_fuzz_dir());
    put(3, "workflows/hello.cfg", wf_text);
    snprintf(paths[4], sizeof paths[4], "%s/dashboard", sy_fuzz_dir());
    put(5, "dashboard/index.html", "<!doctype html><title>switchyard</title>\n");
    copy_plugin();
}

static void close_host(void)
{
    if (!open_)
        return;
    for (sy_admin_stream *s; (s = admin.streams);)
        sy_admin_stream_free(s);
    sy_service_close(&sv);
    open_ = false;
}

/* Run 2 as a host would have left it: task a failed twice (the second
 * attempt an element's), with events, a note and logs, b Skipped, the run
 * Failed; what logs, attempts and one run's events read. */
static void add_history(void)
{
    sy_store *st = sv.store;
    int64_t t0 = 1795000000000;
    sy_task_record a = {.idx = 0, .state = SY_TASK_FAILED, .attempts = 2, .failures = 2,
                        .executor = "default", .error = "exit status 1", .started = t0 + 10,
                        .finished = t0 + 20, .fence = 2};
    sy_task_record b = {.idx = 1, .state = SY_TASK_SKIPPED, .finished = t0 + 20};
    sy_log_record out = {.idx = 0, .attempt = 1, .stream = "stdout", .text = "hello\n",
                         .size = 6, .at = t0 + 5};
    sy_log_record err = {.idx = 0, .attempt = 2, .stream = "stderr", .text = "he\n[...]\nlo\n",
                         .size = 900, .dropped = 890, .at = t0 + 20};
    bool ok = sy_store_begin(st) == SY_OK &&
              sy_store_update_task(st, 2, NULL, 0, &a) == SY_OK &&
              sy_store_update_task(st, 2, NULL, 0, &b) == SY_OK &&
              sy_store_add_event(st, 2, NULL, 0, 0, 1, "failed", "exit status 1", t0 + 5) ==
                  SY_OK &&
              sy_store_add_event(st, 2, NULL, 0, 0, 2, "note", "[3] retrying", t0 + 15) ==
                  SY_OK &&
              sy_store_add_event(st, 2, NULL, 0, 0, 2, "failed", "[3] exit status 1", t0 + 20) ==
                  SY_OK &&
              sy_store_add_log(st, 2, NULL, 0, &out) == SY_OK &&
              sy_store_add_log(st, 2, NULL, 0, &err) == SY_OK &&
              sy_store_update_run(st, 2, NULL, SY_RUN_FAILED, "task a failed", t0 + 20) ==
                  SY_OK &&
              sy_store_commit(st) == SY_OK;
    SY_FUZZ_CHECK(ok, "run 2's history: %s", sy_store_errmsg(st));
}

static void open_host(void)
{
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_service_open(&sv, paths[0], SY_SETUP_WORKFLOWS, &d);
    if (errors)
        sy_diags_print(&d, stderr);
    sy_diags_free(&d);
    char err[1024];
    SY_FUZZ_CHECK(!errors && sy_service_open_store(&sv, err, sizeof err) == SY_OK,
                  "the host does not open");
    /* sy_service_start but for the call record's watchdog thread, and with
     * the instances not created (no worker threads): the host is reopened
     * often, and LeakSanitizer's stop-the-world breaks on threads that come
     * and go (its tracer dies of SIGSEGV). */
    const sy_config *c = &sv.setup.cfg;
    sy_engine_opts o = {.serve = true, .store = sv.store, .routes = &c->routes,
                        .instances = sv.setup.instances, .n_instances = sv.setup.n_instances,
                        .workflows = sv.setup.wfs, .n_workflows = sv.setup.n_wfs,
                        .max_context_bytes = (size_t)c->max_context_bytes,
                        .lease_ms = c->lease_ms, .max_recoveries = (uint32_t)c->max_recoveries,
                        .log_limit = c->log_limit > 0 ? c->log_limit : -1,
                        .shutdown_grace_ms = c->shutdown_grace_ms};
    sv.owner = sy_engine_owner_id();
    o.owner = sv.owner;
    uv_loop_init(&sv.loop);
    sv.have_loop = true;
    SY_FUZZ_CHECK(sy_engine_new(&sv.engine, &sv.loop, &o, err, sizeof err) == SY_OK, "%s", err);
    /* Runs 1 to 3: Pending, Failed (add_history), Cancelled. */
    for (int i = 0; i < 3; i++) {
        int64_t id;
        SY_FUZZ_CHECK(sy_service_submit(&sv, "hello", "{\"n\": 1}", &id, NULL, err,
                                        sizeof err) == SY_OK, "%s", err);
    }
    sy_run_state st;
    SY_FUZZ_CHECK(sy_service_cancel_served(&sv, 3, &st, err, sizeof err) == SY_OK, "%s", err);
    add_history();
    admin_cfg = sv.setup.cfg.admin;
    admin = (sy_admin){.sv = &sv, .cfg = &admin_cfg, .io = &fuzz_io, .token = TOKEN};
    open_ = true;
    dirty = false;
}

static void at_exit(void) { close_host(); }

/* --- the request ---------------------------------------------------------- */

static int hex(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* %XX decoded in place (and '+' as a space in a query), as MHD does. */
static void unescape(char *s, bool query)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
            *o++ = (char)(hex(p[1]) * 16 + hex(p[2]));
            p += 2;
        } else {
            *o++ = query && *p == '+' ? ' ' : *p;
        }
    }
    *o = '\0';
}

/* KEY=VALUE&...: a key without '=' has no value, which MHD gives as
 * absent. */
static void parse_query(exchange *x, char *q)
{
    for (char *save = NULL, *kv = strtok_r(q, "&", &save); kv && x->na < MAX_ARGS;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        unescape(kv, true);
        unescape(eq + 1, true);
        x->aname[x->na] = kv;
        x->aval[x->na++] = eq + 1;
    }
}

static bool has_token(const exchange *x)
{
    for (size_t i = 0; i < x->nh; i++)
        if (strcasecmp(x->hname[i], "Authorization") == 0)
            return strstr(x->hval[i], TOKEN) != NULL;
    return false;
}

static void check_reply(const sy_admin_req *rq, const exchange *x, bool remote)
{
    /* To see what the seeds reach: SY_FUZZ_SHOW=1 replay_admin DIR. */
    if (getenv("SY_FUZZ_SHOW"))
        fprintf(stderr, "  -> %u %s%.300s\n", x->status, x->streamed ? "(stream) " : "",
                x->body ? x->body : "");
    SY_FUZZ_CHECK(x->replies == 1, "%d replies to %s %s", x->replies, rq->method, rq->path);
    SY_FUZZ_CHECK(x->status >= 200 && x->status <= 599, "status %u", x->status);
    if (x->status == 401)
        SY_FUZZ_CHECK(x->www_auth, "401 without WWW-Authenticate: Bearer");
    if (x->status == 405)
        SY_FUZZ_CHECK(x->allow[0], "405 without Allow");
    if (x->status < 400 && rq->route && !(rq->route->flags & SY_ADMIN_OPEN) &&
        ((rq->route->flags & SY_ADMIN_CHANGE) || remote))
        SY_FUZZ_CHECK(has_token(x), "%s %s answered %u without the token", rq->method,
                      rq->path, x->status);
    if (x->streamed || strcmp(x->type, "application/json") != 0)
        return;
    json_error_t e;
    json_t *v = json_loadb(x->body, x->len, 0, &e);
    SY_FUZZ_CHECK(v, "%s %s: reply %u is not JSON: %s: %.200s", rq->method, rq->path,
                  x->status, e.text, x->body);
    if (x->status >= 400 && x->status != 401)
        SY_FUZZ_CHECK(json_is_string(json_object_get(v, "error")),
                      "%u without an error: %.200s", x->status, x->body);
    if (x->status != 401)
        SY_FUZZ_CHECK(x->len && x->body[x->len - 1] == '\n', "a reply without its newline");
    json_decref(v);
}

/* Every stream the request opened is read to its end and its client goes
 * away, as a connection would; the loop then closes what that freed. */
static void drain_streams(void)
{
    char buf[4096];
    for (sy_admin_stream *s; (s = admin.streams);) {
        while (sy_admin_stream_take(s, buf, sizeof buf) > 0)
            ;
        sy_admin_stream_free(s);
    }
    uv_run(&sv.loop, UV_RUN_NOWAIT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!open_) {
        /* The host's own chatter would drown libFuzzer's lines. */
        sy_log_set_level(SY_LOG_ERROR);
        write_host();
        atexit(at_exit);
        open_host();
    } else if (dirty) {
        close_host();
        open_host();
    }
    const uint8_t *head, *body;
    size_t head_n, body_n;
    /* The head ends at the first empty line. */
    const uint8_t *blank = size ? memmem(data, size, "\n\n", 2) : NULL;
    head = data;
    head_n = blank ? (size_t)(blank - data) : size;
    body = blank ? blank + 2 : data + size;
    body_n = blank ? size - head_n - 2 : 0;
    char *h = sy_fuzz_str(head, head_n);
    char *save = NULL;
    char *line = strtok_r(h, "\n", &save);
    char *words = NULL;
    char *method = line ? strtok_r(line, " ", &words) : NULL;
    char *target = method ? strtok_r(NULL, " ", &words) : NULL;
    char *flag = target ? strtok_r(NULL, " ", &words) : NULL;
    if (!method || !target) {
        free(h);
        return 0;
    }
    bool remote = flag && strcmp(flag, "remote") == 0;
    exchange x = {0};
    for (char *l; (l = strtok_r(NULL, "\n", &save)) && x.nh < MAX_HEADERS;) {
        char *colon = strchr(l, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        x.hname[x.nh] = l;
        x.hval[x.nh++] = v;
    }
    char *q = strchr(target, '?');
    if (q) {
        *q++ = '\0';
        parse_query(&x, q);
    }
    unescape(target, false);

    admin.reads_open = !remote;
    sy_admin_req rq = {.admin = &admin, .method = method, .path = target, .io_data = &x};
    enum MHD_Result res;
    if (!sy_admin_screen(&rq, &res)) {
        /* A body over admin.max_body: the server drops the connection. */
        if (body_n > (size_t)admin_cfg.max_body) {
            free(h);
            return 0;
        }
        if (body_n) {
            rq.body = sy_fuzz_str(body, body_n);
            rq.len = body_n;
        }
        sy_admin_answer(&rq);
        check_reply(&rq, &x, remote);
        if (rq.route->flags & SY_ADMIN_CHANGE && x.status < 300)
            dirty = true;
    } else {
        check_reply(&rq, &x, remote);
    }
    drain_streams();
    free(rq.body);
    free(x.body);
    free(h);
    return 0;
}
