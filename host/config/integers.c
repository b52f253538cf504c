/* Integers libconfig would not read as written (see config/integers.h).  Written by
 * hand: libconfig offers no hook on its scanner, so this is a small scanner
 * of the same file syntax that looks at numbers only. */
#include "config/integers.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

typedef struct scan {
    const char *p;
    int line;
    const char *file;
    sy_diags *d;
    int errors;
} scan;

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '*';
}

/* Past a comment or a string, counting lines; false when `p` starts
 * neither. */
static bool skip_text(scan *s)
{
    const char *p = s->p;
    if (p[0] == '#' || (p[0] == '/' && p[1] == '/')) {
        while (*p && *p != '\n')
            p++;
    } else if (p[0] == '/' && p[1] == '*') {
        for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
            s->line += *p == '\n';
        p += *p ? 2 : 0;
    } else if (p[0] == '"') {
        for (p++; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1])
                p++;
            s->line += *p == '\n';
        }
        p += *p ? 1 : 0;
    } else {
        return false;
    }
    s->p = p;
    return true;
}

/* `wide`: beyond 64 bits, where no suffix helps. */
static void report(scan *s, const char *tok, size_t n, bool wide)
{
    if (wide)
        sy_error(s->d, s->file, s->line,
                 "integer %.*s does not fit in 64 bits: libconfig would not "
                 "read it as written (a string or a float can hold it)",
                 (int)n, tok);
    else
        sy_error(s->d, s->file, s->line,
                 "integer %.*s does not fit in 32 bits: libconfig would read "
                 "another number; write %.*sL for a 64-bit integer",
                 (int)n, tok, (int)n, tok);
    s->errors++;
}

/* One number starting at s->p (a digit, or a sign before one). */
static void number(scan *s)
{
    const char *start = s->p, *p = start;
    if (*p == '-' || *p == '+')
        p++;
    bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    const char *digits = hex ? p + 2 : p;
    for (p = digits; hex ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p);)
        p++;
    size_t n = (size_t)(p - start);
    if (!hex && (*p == '.' || *p == 'e' || *p == 'E')) {
        /* A float: digits, fraction, exponent. */
        while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
               ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E')))
            p++;
        s->p = p;
        return;
    }
    bool wide = *p == 'L';
    while (*p == 'L')
        p++;
    s->p = p;
    if (p == digits || name_char(*p))
        return; /* not a number libconfig would take; its parse said so */
    char buf[64];
    if (n >= sizeof buf) {
        report(s, start, n, true);
        return;
    }
    memcpy(buf, start, n);
    buf[n] = '\0';
    errno = 0;
    if (hex) {
        uintmax_t v = strtoumax(buf + (buf[0] == '-' || buf[0] == '+'), NULL, 16);
        if (errno == ERANGE)
            report(s, start, n, true);
        else if (!wide && v > INT32_MAX)
            report(s, start, n, false);
        return;
    }
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE)
        report(s, start, n, true);
    else if (!wide && (v < INT32_MIN || v > INT32_MAX))
        report(s, start, n, false);
}

/* Whether the text holds anything that could be out of 32 bits: a run of
 * ten decimal digits (nine always fit) or a hex prefix.  Most files hold
 * neither, and this look costs a tenth of the scan below. */
static bool may_overflow(const char *p)
{
    for (int run = 0; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            if (++run == 10 || (*p == '0' && (p[1] == 'x' || p[1] == 'X')))
                return true;
        } else {
            run = 0;
        }
    }
    return false;
}

int sy_cfg_check_ints_text(const char *text, const char *file, sy_diags *d)
{
    if (!may_overflow(text))
        return 0;
    scan s = {text, 1, file, d, 0};
    while (*s.p) {
        char c = *s.p;
        if (c == '\n') {
            s.line++;
            s.p++;
        } else if (skip_text(&s)) {
            continue;
        } else if (isalpha((unsigned char)c) || c == '_' || c == '*') {
            while (name_char(*s.p))
                s.p++;
        } else if (isdigit((unsigned char)c) ||
                   ((c == '-' || c == '+') && isdigit((unsigned char)s.p[1]))) {
            number(&s);
        } else {
            s.p++;
        }
    }
    return s.errors;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    /* Sized from the file once: a workflow of 2 MB grown by doubling was
     * copied twice over and faulted in page by page. */
    struct stat st;
    size_t cap = fstat(fileno(f), &st) == 0 && st.st_size > 0
                     ? (size_t)st.st_size + 2
                     : 65536;
    size_t n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *more = realloc(buf, cap * 2);
        if (!more) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = more;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

typedef struct files {
    const char **v;
    size_t n, cap;
} files;

static void add_file(files *fs, const char *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < fs->n; i++)
        if (strcmp(fs->v[i], f) == 0)
            return;
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 8;
        const char **v = realloc(fs->v, cap * sizeof *v);
        if (!v)
            return;
        fs->v = v;
        fs->cap = cap;
    }
    fs->v[fs->n++] = f;
}

/* The files settings came from.  libconfig keeps one string per file, so
 * a setting from the same file as its parent adds nothing new. */
static void collect(const config_setting_t *s, const char *parent_file,
                    files *fs)
{
    const char *f = config_setting_source_file(s);
    if (f && f != parent_file)
        add_file(fs, f);
    if (!config_setting_is_aggregate(s))
        return;
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++)
        collect(config_setting_get_elem(s, (unsigned)i), f ? f : parent_file, fs);
}

int sy_cfg_check_ints(const config_t *lc, const char *path, sy_diags *d)
{
    files fs = {0};
    add_file(&fs, path);
    /* A file without an '@' includes nothing, and the walk over every
     * setting for the files they came from (200,000 of them in a large
     * workflow) can be spared. */
    char *text = path ? read_text(path) : NULL;
    if (!text || strchr(text, '@'))
        collect(config_root_setting(lc), NULL, &fs);
    /* libconfig names an included file as its @include wrote it. */
    const char *dir = config_get_include_dir(lc);
    int errors = 0;
    for (size_t i = 0; i < fs.n; i++) {
        char *full = i > 0 && fs.v[i][0] != '/' && dir
                         ? sy_path_join(dir, fs.v[i])
                         : sy_xstrdup(fs.v[i]);
        if (i > 0)
            text = read_text(full);
        /* Unreadable now but parsed a moment ago: nothing to add. */
        if (text)
            errors += sy_cfg_check_ints_text(text, full, d);
        free(text);
        free(full);
    }
    free(fs.v);
    return errors;
}
