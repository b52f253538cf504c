/*
 * directory.h -- the plugin files of one directory.
 *
 * Single-threaded; the names are the caller's to free.
 */
#ifndef SY_EXECUTOR_DIRECTORY_H
#define SY_EXECUTOR_DIRECTORY_H

#include <stddef.h>

/* The `*.so` names in `dir` (names, not paths), sorted bytewise so the
 * load order does not depend on the locale or the filesystem.  0 with
 * *out (malloc'd, free with sy_plugin_dir_free) and *count; -1 with one
 * line in err when the directory cannot be read or memory runs out. */
int sy_plugin_dir_list(const char *dir, char ***out, size_t *count, char *err,
                       size_t err_len);

/* Frees what sy_plugin_dir_list returned. */
void sy_plugin_dir_free(char **names, size_t count);

#endif
