/* The plugin files of a directory, in the order they are loaded. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "executor/directory.h"

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void sy_plugin_dir_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int push_name(char ***v, size_t *n, size_t *cap, const char *name)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        char **nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[*n] = sy_asprintf("%s", name);
    if (!(*v)[*n])
        return -1;
    (*n)++;
    return 0;
}

int sy_plugin_dir_list(const char *dir, char ***out, size_t *count, char *err,
                   size_t err_len)
{
    DIR *d = opendir(dir);
    if (!d) {
        sy_errf(err, err_len, "cannot open plugin directory %s: %s", dir,
                strerror(errno));
        return -1;
    }
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    errno = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (sy_str_ends_with(de->d_name, ".so"))
            rc = push_name(&v, &n, &cap, de->d_name);
        errno = 0;
    }
    if (rc == 0 && errno != 0) {
        sy_errf(err, err_len, "cannot read plugin directory %s: %s", dir,
                strerror(errno));
        rc = -1;
    } else if (rc != 0) {
        sy_errf(err, err_len, "out of memory reading %s", dir);
    }
    closedir(d);
    if (rc != 0) {
        sy_plugin_dir_free(v, n);
        return -1;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_names);
    *out = v;
    *count = n;
    return 0;
}
