#include "config/glob.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- namespaces ------------------------------------------------------- */

typedef enum ns_fault {
    NS_OK,
    NS_EMPTY,
    NS_EMPTY_SEG,
    NS_LONG_SEG,
    NS_LONE_COLON
} ns_fault;

/* In a well-formed namespace every ':' belongs to a "::", so the first ':'
 * ends the segment. */
static size_t seg_span(const char *s) { return strcspn(s, ":"); }

/* The segment after the one at s (of length n), or the terminating NUL. */
static const char *seg_next(const char *s, size_t n)
{
    return s[n] ? s + n + 2 : s + n;
}

/* One scan shared by the matcher (which needs only the verdict) and
 * sy_ns_validate (which also says where). */
static ns_fault ns_check(const char *ns, size_t *seg_index)
{
    *seg_index = 0;
    if (!ns || !*ns)
        return NS_EMPTY;
    for (const char *s = ns;; (*seg_index)++) {
        size_t n = seg_span(s);
        if (n == 0)
            return s[0] == ':' && s[1] != ':' ? NS_LONE_COLON : NS_EMPTY_SEG;
        if (n > SY_NS_SEGMENT_MAX)
            return NS_LONG_SEG;
        s += n;
        if (!*s)
            return NS_OK;
        if (s[1] != ':')
            return NS_LONE_COLON;
        s += 2;
        if (!*s) {
            (*seg_index)++;
            return NS_EMPTY_SEG;
        }
    }
}

int sy_ns_validate(const char *ns, char *err, size_t err_len)
{
    size_t i;
    switch (ns_check(ns, &i)) {
    case NS_OK:
        return 0;
    case NS_EMPTY:
        sy_errf(err, err_len, "empty namespace");
        break;
    case NS_EMPTY_SEG:
        sy_errf(err, err_len, "empty segment %zu (a leading, trailing or "
                "doubled '::')", i + 1);
        break;
    case NS_LONG_SEG:
        sy_errf(err, err_len, "segment %zu is longer than %d characters",
                i + 1, SY_NS_SEGMENT_MAX);
        break;
    case NS_LONE_COLON:
        sy_errf(err, err_len, "lone ':' in segment %zu (segments are "
                "separated by '::')", i + 1);
        break;
    }
    return -1;
}

/* ---- segment tokens ---------------------------------------------------- */

/* 256-bit byte sets.  A class gets two: `lo`, bytes it certainly matches,
 * and `hi`, bytes it may match.  They differ for named classes, whose
 * non-ASCII members depend on the locale; subsumption compares the `hi` of
 * the narrower pattern with the `lo` of the wider one, which keeps it
 * sound whatever the locale. */
typedef struct charset {
    uint64_t w[4];
} charset;

typedef enum tok_kind { TOK_CHAR, TOK_ANY, TOK_STAR, TOK_CLASS } tok_kind;

typedef struct tok {
    tok_kind kind;
    charset lo, hi; /* for the one-character kinds */
} tok;

/* The text of one pattern segment, for parsing and for error messages. */
typedef struct segsrc {
    const char *s;
    size_t n;
    char *err;
    size_t err_len;
} segsrc;

static void cs_add(charset *c, unsigned b) { c->w[b >> 6] |= 1ULL << (b & 63); }

static void cs_add_range(charset *c, unsigned from, unsigned to)
{
    for (unsigned b = from; b <= to; b++)
        cs_add(c, b);
}

/* Bytes a namespace segment can hold: everything but NUL and ':'. */
static charset cs_universe(void)
{
    charset u = {{~0ULL, ~0ULL, ~0ULL, ~0ULL}};
    u.w[0] &= ~1ULL;
    u.w[':' >> 6] &= ~(1ULL << (':' & 63));
    return u;
}

static charset cs_complement(const charset *c)
{
    charset u = cs_universe();
    for (int i = 0; i < 4; i++)
        u.w[i] &= ~c->w[i];
    return u;
}

static bool cs_subset(const charset *a, const charset *b)
{
    charset u = cs_universe();
    for (int i = 0; i < 4; i++)
        if (a->w[i] & u.w[i] & ~b->w[i])
            return false;
    return true;
}

static int seg_fail(const segsrc *src, const char *what)
{
    int shown = src->n > 200 ? 200 : (int)src->n;
    sy_errf(src->err, src->err_len, "%s (segment \"%.*s\")", what, shown,
            src->s);
    return -1;
}

static const struct named_class {
    const char *name;
    int (*is)(int);
} named_classes[] = {
    {"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank},
    {"cntrl", iscntrl}, {"digit", isdigit}, {"graph", isgraph},
    {"lower", islower}, {"print", isprint}, {"punct", ispunct},
    {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
};

static bool opens_bracket_item(const segsrc *src, size_t p)
{
    return src->s[p] == '[' && p + 1 < src->n &&
           (src->s[p + 1] == ':' || src->s[p + 1] == '.' ||
            src->s[p + 1] == '=');
}

/* `[:name:]` at *p inside a bracket expression. */
static int scan_named(const segsrc *src, size_t *p, tok *t)
{
    const char *s = src->s;
    if (s[*p + 1] != ':')
        return seg_fail(src, "'[.' and '[=' are not supported inside '[...]'"
                             " (escape the '[' as '\\[')");
    size_t start = *p + 2, end = start;
    while (end + 1 < src->n && !(s[end] == ':' && s[end + 1] == ']'))
        end++;
    if (end + 1 >= src->n)
        return seg_fail(src, "unclosed '[:' (a character class ends with "
                             "':]')");
    for (size_t i = 0; i < SY_ARRAY_LEN(named_classes); i++) {
        const struct named_class *k = &named_classes[i];
        if (strlen(k->name) != end - start ||
            memcmp(k->name, s + start, end - start) != 0)
            continue;
        for (unsigned b = 1; b < 128; b++)
            if (k->is((int)b)) {
                cs_add(&t->lo, b);
                cs_add(&t->hi, b);
            }
        cs_add_range(&t->hi, 128, 255);
        *p = end + 2;
        return 0;
    }
    return seg_fail(src, "unknown character class (known: alnum, alpha, "
                         "blank, cntrl, digit, graph, lower, print, punct, "
                         "space, upper, xdigit)");
}

/* One character of a bracket expression, `\` escapes included; false when
 * the segment ends first. */
static bool scan_bracket_char(const segsrc *src, size_t *p, unsigned *c)
{
    if (src->s[*p] == '\\')
        (*p)++;
    if (*p >= src->n)
        return false;
    *c = (unsigned char)src->s[(*p)++];
    return true;
}

/* A single character or a range `a-z` inside a bracket expression. */
static int scan_class_item(const segsrc *src, size_t *p, tok *t)
{
    unsigned from, to;
    if (!scan_bracket_char(src, p, &from))
        return seg_fail(src, "unclosed '['");
    to = from;
    if (*p + 1 < src->n && src->s[*p] == '-' && src->s[*p + 1] != ']') {
        (*p)++;
        if (opens_bracket_item(src, *p))
            return seg_fail(src, "a range cannot end with a character class");
        if (!scan_bracket_char(src, p, &to))
            return seg_fail(src, "unclosed '['");
        if (to < from)
            return seg_fail(src, "reversed range in '[...]'");
    }
    if (from == ':' || to == ':')
        return seg_fail(src, "lone ':' (segments are separated by '::')");
    cs_add_range(&t->lo, from, to);
    cs_add_range(&t->hi, from, to);
    return 0;
}

/* A bracket expression starting at src->s[*p] == '['.  fnmatch(3) would
 * take an unclosed one as a literal '['; refusing it catches the typo. */
static int scan_class(const segsrc *src, size_t *p, tok *t)
{
    size_t q = *p + 1;
    bool neg = q < src->n && (src->s[q] == '!' || src->s[q] == '^');
    q += neg;
    *t = (tok){.kind = TOK_CLASS};
    for (bool first = true;; first = false) {
        if (q >= src->n)
            return seg_fail(src, "unclosed '['");
        if (src->s[q] == ']' && !first)
            break;
        int rc;
        if (opens_bracket_item(src, q)) {
            rc = scan_named(src, &q, t);
            if (rc == 0 && q + 1 < src->n && src->s[q] == '-' &&
                src->s[q + 1] != ']')
                return seg_fail(src,
                                "a range cannot start with a character class");
        } else {
            rc = scan_class_item(src, &q, t);
        }
        if (rc != 0)
            return rc;
    }
    *p = q + 1;
    if (neg) {
        charset lo = cs_complement(&t->hi), hi = cs_complement(&t->lo);
        t->lo = lo;
        t->hi = hi;
    }
    return 0;
}

static void tok_char(tok *t, unsigned c)
{
    *t = (tok){.kind = TOK_CHAR};
    cs_add(&t->lo, c);
    cs_add(&t->hi, c);
}

/* The token at src->s[*p]; advances *p past it. */
static int next_tok(const segsrc *src, size_t *p, tok *t)
{
    unsigned c = (unsigned char)src->s[*p];
    switch (c) {
    case '*':
        *t = (tok){.kind = TOK_STAR};
        (*p)++;
        return 0;
    case '?':
        *t = (tok){.kind = TOK_ANY, .lo = cs_universe(), .hi = cs_universe()};
        (*p)++;
        return 0;
    case '[':
        return scan_class(src, p, t);
    case '\\':
        if (*p + 1 >= src->n)
            return seg_fail(src, "trailing '\\'");
        c = (unsigned char)src->s[*p + 1];
        *p += 2;
        break;
    default:
        (*p)++;
    }
    if (c == ':')
        return seg_fail(src, "lone ':' (segments are separated by '::')");
    tok_char(t, c);
    return 0;
}

/* Tokenizes a whole segment, into out[] when given (room for n tokens: a
 * token is at least one byte).  Returns the token count or -1. */
static long tokenize(const segsrc *src, tok *out)
{
    size_t p = 0, count = 0;
    bool prev_star = false;
    while (p < src->n) {
        tok t;
        if (next_tok(src, &p, &t) != 0)
            return -1;
        if (t.kind == TOK_STAR && prev_star)
            return seg_fail(src, "'**' must be a whole segment");
        prev_star = t.kind == TOK_STAR;
        if (out)
            out[count] = t;
        count++;
    }
    return (long)count;
}

/* ---- compiling --------------------------------------------------------- */

static int check_segment(const char *s, size_t n, bool first, bool last,
                         sy_glob_seg_kind *kind, char *err, size_t err_len)
{
    if (n == 0) {
        const char *where = first ? "leading '::'"
                            : last ? "trailing '::'"
                                   : "nothing between two '::'";
        sy_errf(err, err_len, "empty segment (%s)", where);
        return -1;
    }
    if (n == 2 && s[0] == '*' && s[1] == '*') {
        *kind = SY_SEG_GLOBSTAR;
        return 0;
    }
    segsrc src = {s, n, err, err_len};
    if (tokenize(&src, NULL) < 0)
        return -1;
    bool wild = false;
    for (size_t i = 0; i < n && !wild; i++)
        wild = strchr("*?[\\", s[i]) != NULL;
    *kind = wild ? SY_SEG_WILD : SY_SEG_LITERAL;
    return 0;
}

/* Runs twice: first to check and count with g->seg NULL, so that a bad
 * pattern allocates nothing, then to fill g->seg.  Returns the segment
 * count, or 0 on an invalid segment. */
static size_t walk_segments(const char *pattern, size_t total, sy_glob *g,
                            char *err, size_t err_len)
{
    size_t start = 0, count = 0;
    for (;;) {
        const char *sep = strstr(pattern + start, "::");
        size_t end = sep ? (size_t)(sep - pattern) : total;
        sy_glob_seg_kind kind;
        if (check_segment(pattern + start, end - start, start == 0, !sep,
                          &kind, err, err_len) != 0)
            return 0;
        if (g->seg) {
            g->buf[end] = '\0';
            g->seg[count] = (sy_glob_seg){kind, g->buf + start, end - start};
        }
        count++;
        if (!sep)
            return count;
        start = end + 2;
    }
}

int sy_glob_compile(sy_glob *g, const char *pattern, char *err,
                    size_t err_len)
{
    if (!g) {
        sy_errf(err, err_len, "no glob to compile into");
        return -1;
    }
    memset(g, 0, sizeof *g);
    if (!pattern || !*pattern) {
        sy_errf(err, err_len, "empty pattern");
        return -1;
    }
    size_t total = strlen(pattern);
    size_t nseg = walk_segments(pattern, total, g, err, err_len);
    if (nseg == 0)
        return -1;
    g->source = strdup(pattern);
    g->buf = strdup(pattern);
    g->seg = calloc(nseg, sizeof *g->seg);
    if (!g->source || !g->buf || !g->seg) {
        sy_glob_free(g);
        sy_errf(err, err_len, "out of memory");
        return -1;
    }
    g->nseg = walk_segments(pattern, total, g, err, err_len);
    return 0;
}

void sy_glob_free(sy_glob *g)
{
    if (!g)
        return;
    free(g->source);
    free(g->buf);
    free(g->seg);
    memset(g, 0, sizeof *g);
}

/* ---- matching ---------------------------------------------------------- */

static bool seg_match(const sy_glob_seg *g, const char *s, size_t n)
{
    if (g->kind == SY_SEG_LITERAL)
        return g->len == n && memcmp(g->text, s, n) == 0;
    /* fnmatch wants a NUL-terminated subject; the namespace has '::' where
     * the NUL should be. */
    char buf[SY_NS_SEGMENT_MAX + 1];
    if (n > SY_NS_SEGMENT_MAX)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return fnmatch(g->text, buf, 0) == 0;
}

/* The classic greedy wildcard algorithm with segments for characters and
 * `**` for the star: remembering only the last `**` is enough because each
 * other segment consumes exactly one namespace segment, so this is
 * O(pattern segments x namespace segments), never exponential. */
bool sy_glob_match(const sy_glob *g, const char *ns)
{
    size_t ignored;
    if (!g || !g->seg || g->nseg == 0 || ns_check(ns, &ignored) != NS_OK)
        return false;
    size_t pi = 0, star = SIZE_MAX;
    const char *s = ns, *star_s = NULL;
    while (*s) {
        size_t n = seg_span(s);
        if (pi < g->nseg && g->seg[pi].kind == SY_SEG_GLOBSTAR) {
            star = pi++;
            star_s = s;
        } else if (pi < g->nseg && seg_match(&g->seg[pi], s, n)) {
            pi++;
            s = seg_next(s, n);
        } else if (star != SIZE_MAX) {
            pi = star + 1;
            star_s = seg_next(star_s, seg_span(star_s));
            s = star_s;
        } else {
            return false;
        }
    }
    while (pi < g->nseg && g->seg[pi].kind == SY_SEG_GLOBSTAR)
        pi++;
    return pi == g->nseg;
}

/* ---- subsumption ------------------------------------------------------- */

#define SEG_COMPARE_MAX 4096

static bool has_high_byte(const sy_glob_seg *g)
{
    for (size_t i = 0; i < g->len; i++)
        if ((unsigned char)g->text[i] >= 0x80)
            return true;
    return false;
}

/* Whether token string a[0..na) matches everything b[0..nb) matches:
 * a's `*` absorbs any run of b's tokens, a's one-character token absorbs
 * one b token whose possible bytes it certainly matches, and b's `*` only
 * goes into a's `*`.  Rolling rows: prev/cur[j] = a[0..i) covers b[0..j). */
static bool toks_contain(const tok *a, size_t na, const tok *b, size_t nb,
                         bool *prev, bool *cur)
{
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j == 0;
    for (size_t i = 1; i <= na; i++) {
        const tok *t = &a[i - 1];
        cur[0] = t->kind == TOK_STAR && prev[0];
        for (size_t j = 1; j <= nb; j++) {
            if (t->kind == TOK_STAR)
                cur[j] = prev[j] || cur[j - 1];
            else
                cur[j] = prev[j - 1] && b[j - 1].kind != TOK_STAR &&
                         cs_subset(&b[j - 1].hi, &t->lo);
        }
        bool *swap = prev;
        prev = cur;
        cur = swap;
    }
    return prev[nb];
}

/* Whether segment glob a matches every segment b matches. */
static bool seg_contains(const sy_glob_seg *a, const sy_glob_seg *b)
{
    if (a->len == b->len && memcmp(a->text, b->text, a->len) == 0)
        return true;
    if (a->kind == SY_SEG_LITERAL && b->kind == SY_SEG_LITERAL)
        return false;
    /* In a multibyte locale fnmatch counts characters, not bytes: a token
     * comparison is only sound on ASCII. */
    if (has_high_byte(a) || has_high_byte(b))
        return false;
    /* The comparison is quadratic; no real pattern comes near this. */
    if (a->len > SEG_COMPARE_MAX || b->len > SEG_COMPARE_MAX)
        return false;
    tok *ta = calloc(a->len + b->len, sizeof *ta);
    bool *rows = calloc(2 * (b->len + 1), sizeof *rows);
    bool ok = false;
    if (ta && rows) {
        segsrc sa = {a->text, a->len, NULL, 0};
        segsrc sb = {b->text, b->len, NULL, 0};
        long na = tokenize(&sa, ta), nb = tokenize(&sb, ta + a->len);
        ok = na >= 0 && nb >= 0 &&
             toks_contain(ta, (size_t)na, ta + a->len, (size_t)nb, rows,
                          rows + b->len + 1);
    }
    free(ta);
    free(rows);
    return ok;
}

/* The same alignment one level up: a's `**` absorbs any run of b's
 * segments, `**` included; a's other segments absorb one non-`**` segment
 * each. */
bool sy_glob_subsumes(const sy_glob *a, const sy_glob *b)
{
    if (!a || !b || !a->seg || !b->seg || !a->nseg || !b->nseg)
        return false;
    size_t nb = b->nseg;
    bool *rows = calloc(2 * (nb + 1), sizeof *rows);
    if (!rows)
        return false;
    bool *prev = rows, *cur = rows + nb + 1;
    prev[0] = true;
    for (size_t i = 1; i <= a->nseg; i++) {
        const sy_glob_seg *s = &a->seg[i - 1];
        bool star = s->kind == SY_SEG_GLOBSTAR;
        cur[0] = star && prev[0];
        for (size_t j = 1; j <= nb; j++) {
            const sy_glob_seg *t = &b->seg[j - 1];
            if (star)
                cur[j] = prev[j] || cur[j - 1];
            else
                cur[j] = prev[j - 1] && t->kind != SY_SEG_GLOBSTAR &&
                         seg_contains(s, t);
        }
        bool *swap = prev;
        prev = cur;
        cur = swap;
    }
    bool result = prev[nb];
    free(rows);
    return result;
}
