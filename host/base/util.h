/*
 * util.h -- small helpers shared by the host modules: formatted allocation,
 * bounded message writing, paths, the out-of-memory line.  Thread-safe
 * (no state but the context main sets before any thread starts).
 */
#ifndef SY_UTIL_H
#define SY_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define SY_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* malloc'd formatted string, or NULL when out of memory. */
char *sy_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *sy_vasprintf(const char *fmt, va_list ap);
/* The same, ending the process with the out-of-memory line instead of
 * returning NULL (sy_oom). */
char *sy_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes a formatted, NUL-terminated message into buf (truncating); a no-op
 * when buf is NULL or len is 0.  Returns buf. */
char *sy_errf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The directory part of `path` ("." when it has none), malloc'd. */
char *sy_path_dirname(const char *path);

/* `rel` resolved against directory `base` unless it is absolute, malloc'd. */
char *sy_path_join(const char *base, const char *rel);

bool sy_str_ends_with(const char *s, const char *suffix);

/* Decimal digits only into *out: strtoull would take a sign, spaces and
 * "0x", and wrap a negative number round to a huge one.  False for an
 * empty string, any other character or a value past UINT64_MAX. */
bool sy_parse_digits(const char *s, uint64_t *out);

/* The strings up to a NULL laid end to end into buf (truncated to len - 1
 * bytes, NUL-terminated; len > 0), or malloc'd (aborting when out of
 * memory): what snprintf("%s%s%s") does, without its cost per call, for
 * text made once per task of a workflow of a million. */
char *sy_concat(char *buf, size_t len, ...);
char *sy_xconcat(const char *first, ...);

/* Hands memory the process freed back to the system now, through the
 * hook the program set (main.c: mimalloc's, which otherwise keeps freed
 * pages resident a while); a no-op without one.  For after a large
 * transient structure, such as the parse tree of a workflow of a million
 * tasks, is freed and before the next one is built, so that the two do not
 * add up in the peak RSS. */
void sy_memory_release(void);
void sy_memory_release_hook(void (*fn)(void));

/* Aborts with a message: for allocation failures in places where the
 * program cannot go on meaningfully (startup, CLI).  The message names
 * the command being run (sy_oom_context) and the size asked for. */
void *sy_xmalloc(size_t n);
char *sy_xstrdup(const char *s);

/* What the process is doing, for the out-of-memory line: main sets the
 * command's name.  The text is not copied. */
void sy_oom_context(const char *what);

/* The host's one answer to memory it could not get, its own or a
 * library's (a NULL from jansson, a string libconfig could not keep):
 * "switchyard: COMMAND: out of memory WHAT" on stderr, then abort().
 * Committed state is safe: the store writes in transactions, and a
 * restarted host resumes (docs/reliability.md, "Allocation failures"). */
_Noreturn void sy_oom(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Room for `need` elements (at least 1) of `size` bytes in v, whose
 * capacity is *cap: v when it has it, else v reallocated to `first`
 * elements (or *cap) doubled until they hold `need`, *cap updated.  NULL
 * when out of memory, v and *cap left as they were (v is still the
 * caller's).  For the stores' buffers, which answer SY_ENOMEM; the
 * engine's lists end the process instead (engine/batch.h). */
void *sy_grow(void *v, size_t *cap, size_t need, size_t size, size_t first);

/* FNV-1a of the string `s` continuing from `h` (start with
 * SY_FNV_START): for tables that find strings by hash. */
#define SY_FNV_START 14695981039346656037ULL
static inline uint64_t sy_fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* A hash of a slot's holder (run, task, element): for the stores'
 * tables of a batch's takes by holder. */
static inline uint64_t sy_holder_hash(int64_t run_id, uint32_t idx, int64_t elem)
{
    uint64_t x = (uint64_t)run_id * 0x9e3779b97f4a7c15u ^ (uint64_t)idx * 0xc2b2ae3d27d4eb4fu ^
                 (uint64_t)elem * 0x165667b19e3779f9u;
    return x ^ x >> 29;
}

#endif
