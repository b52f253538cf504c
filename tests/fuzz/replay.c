/*
 * replay.c -- the driver that stands in for libFuzzer in `make check`:
 * feeds each file named on the command line (a directory: each file in it,
 * in name order) to LLVMFuzzerTestOneInput, so a compiler without
 * libFuzzer replays every seed and every kept crash under the sanitizers
 * or valgrind.  Prints one line per file with -v; exits 1 when a path
 * cannot be read or holds no file at all.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool verbose;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(buf);
        return -1;
    }
    if (verbose)
        fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    /* An exact-size copy, so ASan sees a read one past the input. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact)
        abort();
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of `path`; returns how many, or -1. */
static long replay_dir(const char *path)
{
    DIR *dp = opendir(path);
    if (!dp) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown)
            abort();
        names = grown;
        names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
        if (!names[n])
            abort();
        sprintf(names[n++], "%s/%s", path, e->d_name);
    }
    closedir(dp);
    qsort(names, n, sizeof *names, by_name);
    long done = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0)
                done = -1;
            else if (done >= 0)
                done++;
        }
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    long total = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            verbose = true;
            continue;
        }
        struct stat st;
        long n;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            n = -1;
        } else if (S_ISDIR(st.st_mode)) {
            n = replay_dir(argv[i]);
        } else {
            n = replay_file(argv[i]) == 0 ? 1 : -1;
        }
        if (n < 0)
            failed = 1;
        else
            total += n;
    }
    if (total == 0)
        failed = 1;
    printf("%ld inputs replayed\n", total);
    return failed;
}
