/* `check`'s deeper looks: the store's place on disk, the configured
 * directories, and the programs of command tasks. */
#include "service/inspect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "store/store.h"

bool sy_inspect_store_is_memory(const char *url)
{
    if (!url || strncmp(url, "sqlite:", 7) != 0)
        return false;
    return strncmp(url + 7, ":memory:", 8) == 0 && (url[15] == '\0' || url[15] == '?');
}

/* Whether the store could create and write the file `path`: it exists as
 * a writable regular file in a writable directory (the WAL files go
 * beside it), or the nearest existing directory above it is writable (the
 * store creates the missing ones).  Touches nothing. */
static int check_store_path(const sy_config *c, const char *path, sy_diags *d)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            sy_error(d, c->path, c->store_line, "store \"%s\": %s is not a regular file",
                     c->store, path);
            return 1;
        }
        if (access(path, R_OK | W_OK) != 0) {
            sy_error(d, c->path, c->store_line, "store \"%s\": cannot write %s: %s", c->store,
                     path, strerror(errno));
            return 1;
        }
    }
    char *dir = sy_path_dirname(path);
    int errors = 0;
    for (;;) {
        if (stat(dir, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                sy_error(d, c->path, c->store_line,
                         "store \"%s\": cannot create its directory: %s is not a directory",
                         c->store, dir);
                errors = 1;
            } else if (access(dir, W_OK | X_OK) != 0) {
                sy_error(d, c->path, c->store_line, "store \"%s\": directory %s is not "
                         "writable: %s", c->store, dir, strerror(errno));
                errors = 1;
            }
            break;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            sy_error(d, c->path, c->store_line, "store \"%s\": %s: %s", c->store, dir,
                     strerror(errno));
            errors = 1;
            break;
        }
        char *up = sy_path_dirname(dir);
        bool top = strcmp(up, dir) == 0;
        free(dir);
        dir = up;
        if (top)
            break;
    }
    free(dir);
    return errors;
}

/* The store's own reason for a URL it refuses, without the URL it quotes
 * (the probe's, not the operator's). */
static const char *reason_of(const char *err)
{
    const char *q = strncmp(err, "store \"", 7) == 0 ? strstr(err + 7, "\": ") : NULL;
    return q ? q + 3 : err;
}

static int check_store(const sy_config *c, sy_diags *d)
{
    const char *url = c->store ? c->store : "";
    char err[512];
    sy_store *st = NULL;
    bool sqlite = strncmp(url, "sqlite:", 7) == 0;
    const char *target = sqlite ? url + 7 : url;
    size_t len = strcspn(target, "?");
    /* Anything but a plain SQLite path is refused (or reached) by the store
     * before it touches a disk: let it say so in its own words. */
    if (!sqlite || len == 0 || strncmp(target, "//", 2) == 0) {
        if (sy_store_open(url, c->dir, &st, err, sizeof err) != SY_OK) {
            sy_error(d, c->path, c->store_line, "%s", err);
            return 1;
        }
        sy_store_close(st);
        return 0;
    }
    /* The options, read by the store's own parser on a throwaway store. */
    if (target[len]) {
        char *probe = sy_xasprintf("sqlite::memory:%s", target + len);
        int rc = sy_store_open(probe, NULL, &st, err, sizeof err);
        free(probe);
        if (rc != SY_OK) {
            sy_error(d, c->path, c->store_line, "store \"%s\": %s", url, reason_of(err));
            return 1;
        }
        sy_store_close(st);
    }
    if (sy_inspect_store_is_memory(url))
        return 0;
    char *rel = sy_xasprintf("%.*s", (int)len, target);
    char *path = sy_path_join(c->dir, rel);
    int errors = check_store_path(c, path, d);
    free(rel);
    free(path);
    return errors;
}

/* The line of element i of the list `key`, else of the key itself. */
static int line_of(const sy_config *c, const char *key, size_t i)
{
    const config_setting_t *s = config_lookup(&c->lc, key);
    if (!s)
        return 0;
    const config_setting_t *e = config_setting_is_list(s) || config_setting_is_array(s)
                                    ? config_setting_get_elem(s, (unsigned)i) : NULL;
    return (int)config_setting_source_line(e ? e : s);
}

static int check_dirs(const sy_config *c, const char *key, char **dirs, size_t n,
                      sy_diags *d)
{
    int errors = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        const char *why = stat(dirs[i], &st) != 0 ? strerror(errno)
                          : !S_ISDIR(st.st_mode)   ? "not a directory"
                          : access(dirs[i], R_OK | X_OK) != 0 ? strerror(errno)
                                                              : NULL;
        if (why) {
            sy_error(d, c->path, line_of(c, key, i), "%s: %s: %s", key, dirs[i], why);
            errors++;
        }
    }
    return errors;
}

static bool runnable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Found as the executors find it (sdk/spawn_start.c, as execvp would): a
 * name with a '/' relative to the task's directory, else on PATH. */
int sy_inspect_command(const sy_workflow *wf, const sy_task_def *t, const char *file,
                       int line, sy_diags *d)
{
    const json_t *argv = json_object_get(t->params, "command");
    const char *prog = json_string_value(json_array_get(argv, 0));
    if (!prog || !*prog)
        return 0; /* the plugin's own checks say what is wrong with it */
    const char *base = wf->base_dir ? wf->base_dir : ".";
    const char *cwd_param = json_string_value(json_object_get(t->params, "cwd"));
    char *cwd = cwd_param ? sy_path_join(base, cwd_param) : sy_xstrdup(base);
    int errors = 0;
    if (strchr(prog, '/')) {
        char *path = sy_path_join(cwd, prog);
        struct stat st;
        if (stat(path, &st) != 0) {
            sy_error(d, file, line, "task '%s': command %s: %s: %s", t->id, prog, path,
                     strerror(errno));
            errors = 1;
        } else if (!runnable(path)) {
            sy_error(d, file, line, "task '%s': command %s: %s is not an executable "
                     "file", t->id, prog, path);
            errors = 1;
        }
        free(path);
    } else {
        const char *env = getenv("PATH");
        const char *p = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
        bool found = false;
        while (*p && !found) {
            size_t n = strcspn(p, ":");
            char *path = sy_asprintf("%.*s%s%s", (int)n, p, n ? "/" : "", prog);
            found = runnable(path);
            free(path);
            p += n + (p[n] == ':');
        }
        if (!found) {
            sy_error(d, file, line, "task '%s': command %s: not found on PATH (%s)",
                     t->id, prog, env && *env ? env : "unset");
            errors = 1;
        }
    }
    free(cwd);
    return errors;
}

int sy_inspect(const sy_setup *s, sy_diags *d)
{
    if (!s->have_cfg || !s->cfg_ok)
        return 0;
    const sy_config *c = &s->cfg;
    int errors = check_store(c, d);
    errors += check_dirs(c, "plugin_dirs", c->plugin_dirs, c->n_plugin_dirs, d);
    errors += check_dirs(c, "workflow_dirs", c->workflow_dirs, c->n_workflow_dirs, d);
    return errors;
}
