/* Helpers for the unit tests: scratch directories and files. */
#ifndef SY_TEST_HELPERS_H
#define SY_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

/* A fresh directory under $TMPDIR (mode 0700), malloc'd path. */
char *th_mkdtemp(void);

/* Removes a directory tree made by th_mkdtemp and frees the path. */
void th_rmtree(char *dir);

/* Writes `text` to dir/name (mode 0644); returns the malloc'd path. */
char *th_write(const char *dir, const char *name, const char *text);

/* Copies test plugin NAME.so from $SY_TEST_PLUGIN_DIR into dir (0755). */
void th_copy_plugin(const char *dir, const char *name);

/* Whether any diagnostic's "file:line: level: msg" rendering contains
 * every one of the NULL-terminated needles. */
struct sy_diags;
bool th_diag_has(const struct sy_diags *d, ...);

/* Prints every diagnostic (for a failing test's context). */
void th_diag_dump(const struct sy_diags *d);

/* stderr, where the log goes, captured into a scratch file between
 * th_capture_start and th_capture_end; the latter returns the text
 * (malloc'd, at most 16 KiB) and prints it again, so that it still shows
 * with the test's output. */
typedef struct th_capture {
    int fd, saved;
    char path[64];
} th_capture;
void th_capture_start(th_capture *c);
char *th_capture_end(th_capture *c);

/* How many times `needle` occurs in `text`. */
size_t th_count(const char *text, const char *needle);

#endif
