/*
 * sigv4.c -- fuzz target: the lambda plugin's SigV4 canonicaliser and
 * signer (plugins/lambda/sigv4.c), which sees function names, qualifiers
 * and header values an operator wrote.
 *
 * Input: lines.  The first is the method, the second the path, the third
 * the query (empty: none), then headers as NAME:VALUE, one per line, up to
 * an empty line; the rest is the payload.
 *
 * Properties:
 *  - signing fails exactly when there is no Host header or a header name
 *    is not an HTTP token, with one line;
 *  - the canonical request starts with the method, its URI has only
 *    unreserved characters, `/` and well-formed `%XX` escapes in upper
 *    case, and its query pairs are sorted;
 *  - the Authorization value has the documented shape: the credential
 *    scope, the lowercased signed header names in order, 64 hex digits;
 *  - signing is deterministic, and does not depend on the order of the
 *    query's pairs or (names all distinct) of the headers.
 */
#include "fuzz.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "sigv4.h"

#define MAX_HEADERS 16
#define DATE "20150830T123600Z"

static const sy_sigv4_key key = {
    .access_key = "AKIDEXAMPLE",
    .secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    .session_token = NULL,
    .region = "us-east-1",
    .service = "lambda",
};

/* Splits off the next line of [*p, end): returns it NUL-terminated in
 * place (the input is a private copy), or NULL at the end. */
static char *next_line(char **p, char *end)
{
    if (*p >= end)
        return NULL;
    char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    if (!nl)
        nl = end;
    *nl = '\0';
    *p = nl + 1;
    return s;
}

static char *sign(const sy_sigv4_request *rq, int *rc, char **canonical)
{
    sy_sigv4_out out = {0};
    char err[256] = "";
    *rc = sy_sigv4_sign(rq, &key, DATE, true, &out, err, sizeof err);
    if (*rc != 0) {
        SY_FUZZ_CHECK(err[0] && !strchr(err, '\n'),
                      "a refusal without one line: \"%s\"", err);
        sy_sigv4_out_free(&out);
        return NULL;
    }
    char *auth = strdup(out.authorization);
    if (canonical)
        *canonical = strdup(out.canonical);
    sy_sigv4_out_free(&out);
    return auth;
}

static bool has_host(const sy_sigv4_header *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(h[i].name, "host") == 0)
            return true;
    return false;
}

static bool tokens(const sy_sigv4_header *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!h[i].name[0])
            return false;
        for (const char *c = h[i].name; *c; c++)
            if (!isalnum((unsigned char)*c) &&
                !strchr("!#$%&'*+-.^_`|~", *c))
                return false;
    }
    return true;
}

static bool names_distinct(const sy_sigv4_header *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcasecmp(h[i].name, h[j].name) == 0)
                return false;
    return true;
}

static void check_uri(const char *uri)
{
    for (const char *c = uri; *c; c++) {
        if (*c == '%') {
            SY_FUZZ_CHECK(isxdigit((unsigned char)c[1]) &&
                              isxdigit((unsigned char)c[2]) &&
                              !islower((unsigned char)c[1]) &&
                              !islower((unsigned char)c[2]),
                          "a bad escape in the canonical URI: %s", uri);
            c += 2;
        } else {
            SY_FUZZ_CHECK(isalnum((unsigned char)*c) || strchr("-._~/", *c),
                          "'%c' left unencoded in the canonical URI: %s", *c,
                          uri);
        }
    }
}

/* Compares two canonical pairs by name, then by value. */
static int pair_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    const char *ae = memchr(a, '=', al), *be = memchr(b, '=', bl);
    size_t an = ae ? (size_t)(ae - a) : al, bn = be ? (size_t)(be - b) : bl;
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c || an != bn)
        return c ? c : (an < bn ? -1 : 1);
    const char *av = ae ? ae + 1 : "", *bv = be ? be + 1 : "";
    size_t avl = ae ? al - an - 1 : 0, bvl = be ? bl - bn - 1 : 0;
    c = memcmp(av, bv, avl < bvl ? avl : bvl);
    return c ? c : (avl < bvl ? -1 : avl > bvl);
}

/* The query line of the canonical request: pairs sorted by name, then
 * value. */
static void check_query(const char *q)
{
    const char *prev = NULL;
    size_t prev_len = 0;
    while (*q) {
        size_t len = strcspn(q, "&");
        if (prev)
            SY_FUZZ_CHECK(pair_cmp(prev, prev_len, q, len) <= 0,
                          "canonical query out of order: %.*s before %.*s",
                          (int)prev_len, prev, (int)len, q);
        prev = q;
        prev_len = len;
        q += len;
        if (*q == '&')
            q++;
    }
}

static void check_canonical(const char *canonical, const char *method)
{
    size_t ml = strlen(method);
    SY_FUZZ_CHECK(strncmp(canonical, method, ml) == 0 && canonical[ml] == '\n',
                  "the canonical request does not start with the method");
    const char *uri = canonical + ml + 1;
    const char *nl = strchr(uri, '\n');
    SY_FUZZ_CHECK(nl, "no query line");
    char *u = strndup(uri, (size_t)(nl - uri));
    check_uri(u);
    free(u);
    const char *q = nl + 1, *qnl = strchr(q, '\n');
    SY_FUZZ_CHECK(qnl, "no header lines");
    char *qs = strndup(q, (size_t)(qnl - q));
    check_query(qs);
    free(qs);
}

static void check_authorization(const char *auth)
{
    static const char head[] = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"
                               "20150830/us-east-1/lambda/aws4_request, "
                               "SignedHeaders=";
    SY_FUZZ_CHECK(strncmp(auth, head, sizeof head - 1) == 0,
                  "Authorization: %s", auth);
    const char *names = auth + sizeof head - 1;
    const char *sig = strstr(names, ", Signature=");
    SY_FUZZ_CHECK(sig, "no signature: %s", auth);
    for (const char *c = names; c < sig; c++)
        SY_FUZZ_CHECK(!isupper((unsigned char)*c) && *c != ' ',
                      "signed names not lowercased: %s", auth);
    const char *hex = sig + 12;
    SY_FUZZ_CHECK(strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64,
                  "the signature is not 64 hex digits: %s", hex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *p = copy, *end = copy + size;
    const char *method = next_line(&p, end);
    const char *path = next_line(&p, end);
    const char *query = next_line(&p, end);
    sy_sigv4_header h[MAX_HEADERS];
    size_t n = 0;
    char *line;
    while (n < MAX_HEADERS && (line = next_line(&p, end)) && *line) {
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            continue;
        *colon = '\0';
        h[n].name = line;
        h[n].value = colon + 1;
        n++;
    }
    /* Embedded NULs end the strings, as they would for a C caller. */
    if (!method || !*method || strlen(method) > 64) {
        free(copy);
        return 0;
    }
    sy_sigv4_request rq = {
        .method = method,
        .path = path ? path : "/",
        .query = query && *query ? query : NULL,
        .headers = h,
        .n_headers = n,
        .payload = p < end ? p : "",
        .payload_len = p < end ? (size_t)(end - p) : 0,
    };
    int rc;
    char *canonical = NULL;
    char *auth = sign(&rq, &rc, &canonical);
    bool good = has_host(h, n) && tokens(h, n);
    SY_FUZZ_CHECK((rc == 0) == good, "signing %s with %s",
                  rc == 0 ? "succeeded" : "failed",
                  good ? "a Host header and token names"
                       : "no Host header or a bad name");
    if (auth) {
        check_canonical(canonical, method);
        check_authorization(auth);
        int rc2;
        char *again = sign(&rq, &rc2, NULL);
        SY_FUZZ_CHECK(again && strcmp(auth, again) == 0,
                      "signing twice differs");
        free(again);

        /* The query's pairs reversed. */
        if (rq.query && strchr(rq.query, '&')) {
            size_t ql = strlen(rq.query);
            char *rev = malloc(ql + 2), *w = rev;
            const char *q = rq.query + ql;
            while (q > rq.query) {
                const char *s = q;
                while (s > rq.query && s[-1] != '&')
                    s--;
                if (w > rev)
                    *w++ = '&';
                memcpy(w, s, (size_t)(q - s));
                w += q - s;
                q = s > rq.query ? s - 1 : s;
            }
            *w = '\0';
            sy_sigv4_request r2 = rq;
            r2.query = rev;
            char *other = sign(&r2, &rc2, NULL);
            SY_FUZZ_CHECK(other && strcmp(auth, other) == 0,
                          "the order of the query's pairs changes the "
                          "signature: %s / %s", rq.query, rev);
            free(other);
            free(rev);
        }
        /* The headers reversed, when no name repeats. */
        if (n > 1 && names_distinct(h, n)) {
            sy_sigv4_header r[MAX_HEADERS];
            for (size_t i = 0; i < n; i++)
                r[i] = h[n - 1 - i];
            sy_sigv4_request r2 = rq;
            r2.headers = r;
            char *other = sign(&r2, &rc2, NULL);
            SY_FUZZ_CHECK(other && strcmp(auth, other) == 0,
                          "the order of the headers changes the signature");
            free(other);
        }
    }
    free(auth);
    free(canonical);
    free(copy);
    return 0;
}
