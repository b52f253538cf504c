/* Helpers shared by the fuzz targets (fuzz.h). */
#include "fuzz.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diagnostics.h"

char *sy_fuzz_str(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

void sy_fuzz_split(const uint8_t *data, size_t size, uint8_t sep,
                   const uint8_t **a, size_t *an, const uint8_t **b,
                   size_t *bn)
{
    const uint8_t *cut = size ? memchr(data, sep, size) : NULL;
    *a = data;
    *an = cut ? (size_t)(cut - data) : size;
    *b = cut ? cut + 1 : data + size;
    *bn = cut ? size - *an - 1 : 0;
}

static char dir[4096];

/* Removes what sy_fuzz_write left; the names are the targets' own. */
static void remove_dir(void)
{
    static const char *const names[] = {"switchyard.cfg", "routes.cfg",
                                        "workflow.cfg", "params.cfg",
                                        "inc.cfg", NULL};
    char path[4200];
    for (size_t i = 0; names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

const char *sy_fuzz_dir(void)
{
    if (dir[0])
        return dir;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sy-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "fuzz: mkdtemp %s: %s\n", dir, strerror(errno));
        abort();
    }
    atexit(remove_dir);
    return dir;
}

const char *sy_fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", sy_fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        abort();
    }
    return path;
}

static bool has(const uint8_t *data, size_t size, const char *needle)
{
    return memmem(data, size, needle, strlen(needle)) != NULL;
}

bool sy_fuzz_reads_outside(const uint8_t *data, size_t size)
{
    if (has(data, size, "/dev") || has(data, size, "/proc") ||
        has(data, size, "/sys"))
        return true;
    if (!has(data, size, "@include"))
        return false;
    /* libconfig expands an included name as a glob and opens absolute
     * paths as written. */
    return memchr(data, '/', size) || memchr(data, '*', size) ||
           memchr(data, '?', size) || memchr(data, '[', size);
}

void sy_fuzz_render(const struct sy_diags *d)
{
    char buf[512];
    for (size_t i = 0; i < d->n; i++) {
        sy_diag_format(&d->v[i], buf, sizeof buf);
        SY_FUZZ_CHECK(strchr(buf, '\n') == NULL || strlen(buf) >= sizeof buf - 1,
                      "a diagnostic spans lines: %s", buf);
    }
}
