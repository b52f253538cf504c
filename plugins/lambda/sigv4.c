/*
 * sigv4.c -- AWS Signature Version 4, the rules of sigv4.h.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <switchyard/sdk.h>

#include "sigv4.h"

#define SIGV4_ALGO "AWS4-HMAC-SHA256"

/* A growing string; every append keeps it NUL-terminated. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static bool sb_reserve(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    char *q = realloc(*p, c);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static void sb_add(sbuf *b, const char *s, size_t len)
{
    if (b->oom || !sb_reserve(&b->p, &b->cap, b->n + len + 1)) {
        b->oom = true;
        return;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }
static void sb_chr(sbuf *b, char c) { sb_add(b, &c, 1); }

static bool unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

int sy_sigv4_encode(char **buf, size_t *n, size_t *cap, const char *s,
                    size_t len, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!sb_reserve(buf, cap, *n + 3 * len + 1))
        return -1;
    char *o = *buf + *n;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    *n = (size_t)(o - *buf);
    return 0;
}

static void sb_encode(sbuf *b, const char *s, size_t len)
{
    if (!b->oom && sy_sigv4_encode(&b->p, &b->n, &b->cap, s, len, false) != 0)
        b->oom = true;
}

static void hex32(const unsigned char *d, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = '\0';
}

/* SHA-256 fetched once: OpenSSL 3's one-shot HMAC() and SHA256() look
 * the algorithm up on every call, which costs more than the hashing of a
 * signature's few hundred bytes. */
static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha256;

static void fetch_md(void)
{
    md_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

/* Given back when the plugin is unloaded (the host closes it at exit). */
__attribute__((destructor)) static void free_md(void)
{
    EVP_MD_free(md_sha256);
    md_sha256 = NULL;
}

static const EVP_MD *sha256_md(void)
{
    pthread_once(&md_once, fetch_md);
    return md_sha256 ? md_sha256 : EVP_sha256();
}

static void sha256(const void *data, size_t len, unsigned char out[32])
{
    unsigned int n = 32;
    EVP_Digest(data, len, out, &n, sha256_md(), NULL);
}

/* HMAC-SHA256 (RFC 2104) over the fetched digest. */
static void hmac(const void *key, size_t klen, const char *msg, size_t mlen,
                 unsigned char out[32])
{
    unsigned char k[64] = {0}, pad[64], inner[32];
    if (klen > 64) {
        sha256(key, klen, k);
    } else {
        memcpy(k, key, klen);
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int n = 32;
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    EVP_DigestInit_ex(ctx, sha256_md(), NULL);
    EVP_DigestUpdate(ctx, pad, 64);
    EVP_DigestUpdate(ctx, msg, mlen);
    EVP_DigestFinal_ex(ctx, inner, &n);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    EVP_DigestInit_ex(ctx, sha256_md(), NULL);
    EVP_DigestUpdate(ctx, pad, 64);
    EVP_DigestUpdate(ctx, inner, 32);
    EVP_DigestFinal_ex(ctx, out, &n);
    EVP_MD_CTX_free(ctx);
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(pad, sizeof pad);
}

void sy_sigv4_derive_key(const char *secret, const char *date8,
                         const char *region, const char *service,
                         unsigned char out[32])
{
    size_t slen = strlen(secret);
    char k0[4 + 256];
    unsigned char k[32];
    if (slen > 256) {
        /* Never seen in practice; hashed like any long HMAC key. */
        char *big = malloc(slen + 5);
        if (!big) {
            memset(out, 0, 32);
            return;
        }
        memcpy(big, "AWS4", 4);
        memcpy(big + 4, secret, slen);
        hmac(big, slen + 4, date8, 8, k);
        OPENSSL_cleanse(big, slen + 4);
        free(big);
    } else {
        memcpy(k0, "AWS4", 4);
        memcpy(k0 + 4, secret, slen);
        hmac(k0, slen + 4, date8, 8, k);
        OPENSSL_cleanse(k0, sizeof k0);
    }
    hmac(k, 32, region, strlen(region), k);
    hmac(k, 32, service, strlen(service), k);
    hmac(k, 32, "aws4_request", 12, out);
    OPENSSL_cleanse(k, sizeof k);
}

void sy_sigv4_amz_date(time_t t, char out[17])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* ---- the canonical URI ---------------------------------------------------- */

/* Removes dot segments and empty segments, then encodes each segment. */
static void canonical_uri(sbuf *b, const char *path)
{
    size_t len = strlen(path);
    /* Segment starts and lengths; a path has at most len/2+1 segments. */
    size_t max = len / 2 + 2, n = 0;
    size_t *start = malloc(max * sizeof *start), *slen = malloc(max * sizeof *slen);
    if (!start || !slen) {
        free(start);
        free(slen);
        b->oom = true;
        return;
    }
    for (size_t i = 0; i < len;) {
        while (i < len && path[i] == '/')
            i++;
        size_t j = i;
        while (j < len && path[j] != '/')
            j++;
        size_t l = j - i;
        if (l == 0 || (l == 1 && path[i] == '.')) {
            /* nothing */
        } else if (l == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (n > 0)
                n--;
        } else {
            start[n] = i;
            slen[n++] = l;
        }
        i = j;
    }
    sb_chr(b, '/');
    for (size_t k = 0; k < n; k++) {
        if (k)
            sb_chr(b, '/');
        sb_encode(b, path + start[k], slen[k]);
    }
    /* A trailing slash names a directory: keep it. */
    if (n > 0 && len > 0 && path[len - 1] == '/')
        sb_chr(b, '/');
    free(start);
    free(slen);
}

/* ---- the canonical query ---------------------------------------------------- */

typedef struct qpair {
    char *name, *value; /* encoded; owned */
} qpair;

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes %XX in s[0..len) and encodes the result strictly. */
static char *reencode(const char *s, size_t len)
{
    char *dec = malloc(len + 1);
    if (!dec)
        return NULL;
    size_t d = 0;
    for (size_t i = 0; i < len; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < len &&
            (h = hexval((unsigned char)s[i + 1])) >= 0 &&
            (l = hexval((unsigned char)s[i + 2])) >= 0) {
            dec[d++] = (char)(h * 16 + l);
            i += 2;
        } else {
            dec[d++] = s[i];
        }
    }
    char *out = NULL;
    size_t n = 0, cap = 0;
    if (sy_sigv4_encode(&out, &n, &cap, dec, d, false) != 0) {
        free(out);
        out = NULL;
    } else if (!out) {
        out = strdup("");
    }
    free(dec);
    return out;
}

static int qpair_cmp(const void *a, const void *b)
{
    const qpair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static void canonical_query(sbuf *b, const char *q)
{
    if (!q || !*q)
        return;
    size_t max = 1;
    for (const char *p = q; *p; p++)
        max += *p == '&';
    qpair *pairs = calloc(max, sizeof *pairs);
    if (!pairs) {
        b->oom = true;
        return;
    }
    size_t n = 0;
    for (const char *p = q; *p;) {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            const char *eq = memchr(p, '=', len);
            size_t nl = eq ? (size_t)(eq - p) : len;
            pairs[n].name = reencode(p, nl);
            pairs[n].value = eq ? reencode(eq + 1, len - nl - 1) : strdup("");
            if (!pairs[n].name || !pairs[n].value)
                b->oom = true;
            n++;
        }
        p += len + (end ? 1 : 0);
    }
    if (!b->oom) {
        qsort(pairs, n, sizeof *pairs, qpair_cmp);
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_chr(b, '&');
            sb_str(b, pairs[i].name);
            sb_chr(b, '=');
            sb_str(b, pairs[i].value);
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(pairs[i].name);
        free(pairs[i].value);
    }
    free(pairs);
}

/* ---- the canonical headers ------------------------------------------------ */

typedef struct hdr {
    char *name;   /* lowercased; owned */
    char *value;  /* trimmed, blanks folded; owned */
    size_t order; /* position given, so repeated names keep their order */
} hdr;

static int hdr_cmp(const void *a, const void *b)
{
    const hdr *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

/* Trims, and makes every run of blanks and line breaks one space. */
static char *fold_value(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (!d)
        return NULL;
    size_t n = 0;
    bool blank = false;
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
            blank = n > 0;
            continue;
        }
        if (blank)
            d[n++] = ' ';
        blank = false;
        d[n++] = *p;
    }
    d[n] = '\0';
    return d;
}

static bool has_header(const sy_sigv4_request *rq, const char *name)
{
    for (size_t i = 0; i < rq->n_headers; i++)
        if (strcasecmp(rq->headers[i].name, name) == 0)
            return true;
    return false;
}

/* Appends the canonical headers to b and the signed list to sig. */
static int canonical_headers(sbuf *b, sbuf *sig, const sy_sigv4_request *rq,
                             const sy_sigv4_key *key, const char *amz_date)
{
    size_t max = rq->n_headers + 2, n = 0;
    hdr *h = calloc(max, sizeof *h);
    if (!h)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < rq->n_headers; i++, n++) {
        h[n].name = lower_dup(rq->headers[i].name);
        h[n].value = fold_value(rq->headers[i].value);
        h[n].order = n;
    }
    if (!has_header(rq, "x-amz-date")) {
        h[n].name = strdup("x-amz-date");
        h[n].value = strdup(amz_date);
        h[n].order = n;
        n++;
    }
    if (key->session_token && key->session_token[0] &&
        !has_header(rq, "x-amz-security-token")) {
        h[n].name = strdup("x-amz-security-token");
        h[n].value = strdup(key->session_token);
        h[n].order = n;
        n++;
    }
    for (size_t i = 0; i < n; i++)
        if (!h[i].name || !h[i].value)
            rc = -1;
    if (rc == 0) {
        qsort(h, n, sizeof *h, hdr_cmp);
        for (size_t i = 0; i < n; i++) {
            bool again = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
            if (again) {
                sb_chr(b, ',');
            } else {
                if (i > 0) {
                    sb_chr(b, '\n');
                    sb_chr(sig, ';');
                }
                sb_str(b, h[i].name);
                sb_chr(b, ':');
                sb_str(sig, h[i].name);
            }
            sb_str(b, h[i].value);
        }
        sb_chr(b, '\n');
    }
    for (size_t i = 0; i < n; i++) {
        free(h[i].name);
        free(h[i].value);
    }
    free(h);
    return rc;
}

/* ---- signing ------------------------------------------------------------------ */

/* RFC 9110's token: what a header name may be.  A name with a blank or a
 * colon would be signed as given and then sent as something else. */
static bool http_token(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
            return false;
    return true;
}

static bool valid_date(const char *d)
{
    if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
        return false;
    for (int i = 0; i < 15; i++)
        if (i != 8 && !isdigit((unsigned char)d[i]))
            return false;
    return true;
}

int sy_sigv4_sign(const sy_sigv4_request *rq, const sy_sigv4_key *key,
                  const char *amz_date, bool want_texts, sy_sigv4_out *out,
                  char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (!valid_date(amz_date)) {
        sy_sdk_errf(err, err_len, "signing: X-Amz-Date must be "
                    "YYYYMMDDTHHMMSSZ");
        return -1;
    }
    if (!has_header(rq, "host")) {
        sy_sdk_errf(err, err_len, "signing: the request has no Host header");
        return -1;
    }
    for (size_t i = 0; i < rq->n_headers; i++)
        if (!http_token(rq->headers[i].name)) {
            sy_sdk_errf(err, err_len, "signing: header name \"%.64s\" is "
                        "not an HTTP token (letters, digits and "
                        "!#$%%&'*+-.^_`|~)", rq->headers[i].name);
            return -1;
        }
    sbuf c = {0}, sig = {0}, sts = {0}, auth = {0};
    unsigned char d[32];
    char hex[65];

    sb_str(&c, rq->method);
    sb_chr(&c, '\n');
    canonical_uri(&c, rq->path && *rq->path ? rq->path : "/");
    sb_chr(&c, '\n');
    canonical_query(&c, rq->query);
    sb_chr(&c, '\n');
    if (canonical_headers(&c, &sig, rq, key, amz_date) != 0)
        c.oom = true;
    sb_chr(&c, '\n');
    sb_add(&c, sig.p ? sig.p : "", sig.n);
    sb_chr(&c, '\n');
    sha256(rq->payload ? rq->payload : (const void *)"", rq->payload_len, d);
    hex32(d, hex);
    sb_str(&c, hex);

    char scope[256];
    snprintf(scope, sizeof scope, "%.8s/%s/%s/aws4_request", amz_date,
             key->region, key->service);
    sb_str(&sts, SIGV4_ALGO "\n");
    sb_str(&sts, amz_date);
    sb_chr(&sts, '\n');
    sb_str(&sts, scope);
    sb_chr(&sts, '\n');
    sha256(c.p ? c.p : "", c.n, d);
    hex32(d, hex);
    sb_str(&sts, hex);

    if (c.oom || sig.oom || sts.oom) {
        free(c.p);
        free(sig.p);
        free(sts.p);
        sy_sdk_errf(err, err_len, "signing: out of memory");
        return -1;
    }

    /* The signing key: the secret hashed with the date, region, service;
     * the caller may hold it for the day. */
    unsigned char k[32];
    if (key->signing_key)
        memcpy(k, key->signing_key, 32);
    else
        sy_sigv4_derive_key(key->secret_key, amz_date, key->region,
                            key->service, k);
    hmac(k, 32, sts.p, sts.n, d);
    OPENSSL_cleanse(k, sizeof k);
    hex32(d, hex);

    sb_str(&auth, SIGV4_ALGO " Credential=");
    sb_str(&auth, key->access_key);
    sb_chr(&auth, '/');
    sb_str(&auth, scope);
    sb_str(&auth, ", SignedHeaders=");
    sb_add(&auth, sig.p ? sig.p : "", sig.n);
    sb_str(&auth, ", Signature=");
    sb_str(&auth, hex);
    free(sig.p);
    if (auth.oom) {
        free(c.p);
        free(sts.p);
        free(auth.p);
        sy_sdk_errf(err, err_len, "signing: out of memory");
        return -1;
    }
    out->authorization = auth.p;
    if (want_texts) {
        out->canonical = c.p;
        out->string_to_sign = sts.p;
    } else {
        free(c.p);
        free(sts.p);
    }
    return 0;
}

void sy_sigv4_out_free(sy_sigv4_out *out)
{
    free(out->canonical);
    free(out->string_to_sign);
    free(out->authorization);
    memset(out, 0, sizeof *out);
}
