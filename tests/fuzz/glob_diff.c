/*
 * glob_diff.c -- differential fuzz target: sy_glob_match against a
 * reference matcher written here from the documented semantics alone
 * (docs/configuration.md, config/glob.h), sharing no code with it:
 *
 *   - pattern and namespace are split on "::"; a namespace with an empty
 *     segment, a lone ':' or a segment over SY_NS_SEGMENT_MAX bytes
 *     matches nothing;
 *   - a `**` segment takes zero or more whole segments, any other segment
 *     exactly one, with `*`, `?`, `[...]` (`!`/`^` negation, ranges,
 *     `[:name:]` classes, `\` escapes) and `\x` inside it; bytes compare
 *     as bytes (the C locale, which a fuzzer process runs in).
 *
 * Input: the first line is the pattern, every further line a namespace.
 * Only patterns sy_glob_compile accepts are compared.  The reference is
 * quadratic dynamic programming, slow and obvious on purpose.
 */
#include "fuzz.h"

#include <ctype.h>
#include <string.h>

#include "config/glob.h"

typedef struct ref_seg {
    const char *s;
    size_t n;
} ref_seg;

/* Splits `text` on "::" into a malloc'd array; *count gets its length. */
static ref_seg *ref_split(const char *text, size_t *count)
{
    size_t n = 1;
    for (const char *p = text; (p = strstr(p, "::")); p += 2)
        n++;
    ref_seg *v = calloc(n, sizeof *v);
    if (!v)
        abort();
    const char *start = text;
    for (size_t i = 0; i < n; i++) {
        const char *sep = strstr(start, "::");
        v[i].s = start;
        v[i].n = sep ? (size_t)(sep - start) : strlen(start);
        start = sep ? sep + 2 : start + v[i].n;
    }
    *count = n;
    return v;
}

static bool ref_ns_ok(const ref_seg *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].n == 0 || v[i].n > SY_NS_SEGMENT_MAX ||
            memchr(v[i].s, ':', v[i].n))
            return false;
    return true;
}

/* One pattern element: a star, or a set of bytes it stands for. */
typedef struct ref_el {
    bool star;
    bool set[256];
} ref_el;

typedef int (*ref_is_fn)(int);

static ref_is_fn ref_class(const char *name, size_t n)
{
    static const struct {
        const char *name;
        int (*is)(int);
    } classes[] = {
        {"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank},
        {"cntrl", iscntrl}, {"digit", isdigit}, {"graph", isgraph},
        {"lower", islower}, {"print", isprint}, {"punct", ispunct},
        {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strlen(classes[i].name) == n && memcmp(classes[i].name, name, n) == 0)
            return classes[i].is;
    return NULL;
}

/* One possibly escaped character at p[*i]. */
static unsigned char ref_char(const char *p, size_t *i)
{
    if (p[*i] == '\\')
        (*i)++;
    return (unsigned char)p[(*i)++];
}

/* A bracket expression starting at p[*i] == '['. */
static void ref_bracket(const char *p, size_t n, size_t *i, ref_el *e)
{
    size_t k = *i + 1;
    bool neg = k < n && (p[k] == '!' || p[k] == '^');
    k += neg;
    for (bool first = true; k < n && (first || p[k] != ']'); first = false) {
        if (p[k] == '[' && k + 1 < n && p[k + 1] == ':') {
            const char *end = strstr(p + k + 2, ":]");
            ref_is_fn is = end ? ref_class(p + k + 2,
                                             (size_t)(end - p - k - 2))
                                 : NULL;
            for (int c = 1; is && c < 256; c++)
                e->set[c] |= is(c) != 0;
            k = end ? (size_t)(end - p) + 2 : n;
            continue;
        }
        unsigned lo = ref_char(p, &k), hi = lo;
        if (k + 1 < n && p[k] == '-' && p[k + 1] != ']') {
            k++;
            hi = ref_char(p, &k);
        }
        for (unsigned c = lo; c <= hi; c++)
            e->set[c] = true;
    }
    *i = k + 1;
    if (neg)
        for (int c = 0; c < 256; c++)
            e->set[c] = !e->set[c];
}

/* Parses a pattern segment into elements; returns how many. */
static size_t ref_parse(const char *p, size_t n, ref_el *out)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        ref_el *e = &out[count++];
        memset(e, 0, sizeof *e);
        if (p[i] == '*') {
            e->star = true;
            i++;
        } else if (p[i] == '?') {
            memset(e->set, true, sizeof e->set);
            i++;
        } else if (p[i] == '[') {
            ref_bracket(p, n, &i, e);
        } else {
            e->set[ref_char(p, &i)] = true;
        }
    }
    return count;
}

/* Whether elements el[0..ne) match all of s[0..sn): table m[i][j] says
 * el[i..] matches s[j..]. */
static bool ref_seg_match(const ref_el *el, size_t ne, const char *s,
                          size_t sn)
{
    bool *m = calloc((ne + 1) * (sn + 1), sizeof *m);
    if (!m)
        abort();
#define M(i, j) m[(i) * (sn + 1) + (j)]
    M(ne, sn) = true;
    for (size_t i = ne; i-- > 0;)
        for (size_t j = sn + 1; j-- > 0;) {
            if (el[i].star)
                M(i, j) = M(i + 1, j) || (j < sn && M(i, j + 1));
            else
                M(i, j) = j < sn && el[i].set[(unsigned char)s[j]] &&
                          M(i + 1, j + 1);
        }
    bool r = M(0, 0);
#undef M
    free(m);
    return r;
}

static bool ref_match(const char *pattern, const char *ns)
{
    size_t np, nn;
    ref_seg *p = ref_split(pattern, &np), *s = ref_split(ns, &nn);
    bool result = false;
    if (ref_ns_ok(s, nn)) {
        /* t[i][j]: pattern segments i.. match namespace segments j.. */
        bool *t = calloc((np + 1) * (nn + 1), sizeof *t);
        ref_el *el = calloc(SY_NS_SEGMENT_MAX + 1 > strlen(pattern)
                                ? SY_NS_SEGMENT_MAX + 1
                                : strlen(pattern) + 1,
                            sizeof *el);
        if (!t || !el)
            abort();
#define T(i, j) t[(i) * (nn + 1) + (j)]
        T(np, nn) = true;
        for (size_t i = np; i-- > 0;) {
            bool globstar = p[i].n == 2 && memcmp(p[i].s, "**", 2) == 0;
            size_t ne = globstar ? 0 : ref_parse(p[i].s, p[i].n, el);
            for (size_t j = nn + 1; j-- > 0;) {
                if (globstar)
                    T(i, j) = T(i + 1, j) || (j < nn && T(i, j + 1));
                else
                    T(i, j) = j < nn && T(i + 1, j + 1) &&
                              ref_seg_match(el, ne, s[j].s, s[j].n);
            }
        }
        result = T(0, 0);
#undef T
        free(t);
        free(el);
    }
    free(p);
    free(s);
    return result;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The reference is quadratic per segment pair: keep inputs small
     * enough that a run tests many of them. */
    if (size > 2048)
        return 0;
    char *text = sy_fuzz_str(data, size);
    char *save = NULL;
    char *pattern = strtok_r(text, "\n", &save);
    sy_glob g;
    char err[256];
    if (pattern && sy_glob_compile(&g, pattern, err, sizeof err) == 0) {
        for (char *ns; (ns = strtok_r(NULL, "\n", &save));) {
            bool got = sy_glob_match(&g, ns), want = ref_match(pattern, ns);
            SY_FUZZ_CHECK(got == want, "pattern \"%s\", namespace \"%s\": "
                          "sy_glob_match says %d, the reference %d",
                          pattern, ns, got, want);
        }
        sy_glob_free(&g);
    }
    free(text);
    return 0;
}
