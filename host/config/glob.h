/*
 * glob.h -- namespace patterns.
 *
 * A namespace is `tenant::workflow::task`, segments separated by `::`.  A
 * pattern is split on `::` too; a segment `**` matches zero or more whole
 * segments, any other segment matches exactly one segment with fnmatch(3)
 * rules inside it (`*`, `?`, `[...]`, `\` escapes), never crossing `::`.
 * Matching is anchored at both ends and case-sensitive.
 *
 * A compiled pattern is immutable: any thread may match against it
 * concurrently.  Matching allocates nothing.
 */
#ifndef SY_GLOB_H
#define SY_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* Longest namespace segment the matcher accepts; longer never match (and a
 * workflow validator refuses them). */
#define SY_NS_SEGMENT_MAX 255

typedef enum sy_glob_seg_kind {
    SY_SEG_LITERAL,  /* no metacharacter: compared with memcmp */
    SY_SEG_WILD,     /* has `*`, `?`, `[` or `\`: fnmatch */
    SY_SEG_GLOBSTAR  /* `**` */
} sy_glob_seg_kind;

typedef struct sy_glob_seg {
    sy_glob_seg_kind kind;
    const char *text; /* NUL-terminated, points into sy_glob.buf */
    size_t len;
} sy_glob_seg;

typedef struct sy_glob {
    char *source;     /* owned copy of the pattern as written */
    char *buf;        /* owned storage for the segment texts */
    sy_glob_seg *seg; /* owned array of nseg */
    size_t nseg;
} sy_glob;

/* Compiles `pattern`.  Returns 0, or -1 with a one-line reason in err
 * (empty pattern, empty segment such as `a::::b` or a trailing `::`, `***`
 * or `**` inside a segment, an unclosed `[`, a lone `:`, a trailing `\`).
 * On failure *g is left zeroed and needs no sy_glob_free. */
int sy_glob_compile(sy_glob *g, const char *pattern, char *err,
                    size_t err_len);
void sy_glob_free(sy_glob *g);

/* Whether `ns` matches.  A malformed namespace (empty, an empty segment, a
 * segment longer than SY_NS_SEGMENT_MAX) matches nothing.  Pure: no
 * allocation, no global state. */
bool sy_glob_match(const sy_glob *g, const char *ns);

/* Whether every namespace `b` matches is also matched by `a` (so a rule `b`
 * after a rule `a` can never win).  Sound: true only when that is certain;
 * it may answer false for some exotic class combinations that do subsume. */
bool sy_glob_subsumes(const sy_glob *a, const sy_glob *b);

/* Checks that `ns` is a well-formed namespace: at least one segment, no
 * empty segment, no segment longer than SY_NS_SEGMENT_MAX, no lone `:`.
 * Returns 0, or -1 with a reason in err. */
int sy_ns_validate(const char *ns, char *err, size_t err_len);

#endif
