/*
 * sigv4.h -- AWS Signature Version 4 (header signing) on OpenSSL libcrypto.
 *
 * Our own signer rather than CURLOPT_AWS_SIGV4: the curl of Debian 12
 * signs paths holding `:` (ARNs, `name:alias`) differently from the
 * service and sends X-Amz-Date twice when the caller sets one.  The rules
 * followed are those of the official test suite (tests/data/aws4_testsuite):
 *
 *   canonical URI     the path as sent, dot segments and repeated slashes
 *                     removed, then every byte outside A-Z a-z 0-9 - . _ ~ /
 *                     percent-encoded (so a `%` already in the path becomes
 *                     `%25`: non-S3 services sign the path encoded twice)
 *   canonical query   each name=value decoded, encoded strictly, sorted by
 *                     name then value
 *   headers           names lowercased, values trimmed with inner runs of
 *                     blanks (and folded lines) made one space, repeated
 *                     names joined with `,`, sorted; all headers given are
 *                     signed
 *
 * The clock is the caller's: the signer takes the X-Amz-Date text, so
 * tests sign with the suite's fixed date.
 */
#ifndef SY_LAMBDA_SIGV4_H
#define SY_LAMBDA_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

typedef struct sy_sigv4_header {
    const char *name;  /* any case; not owned */
    const char *value; /* as sent (may hold folded lines); not owned */
} sy_sigv4_header;

/* The request to sign.  Nothing is owned. */
typedef struct sy_sigv4_request {
    const char *method;
    const char *path;             /* the path as sent, before any `?` */
    const char *query;            /* the text after `?`, or NULL */
    const sy_sigv4_header *headers; /* must hold Host; X-Amz-Date is added
                                       when absent */
    size_t n_headers;
    const void *payload;
    size_t payload_len;
} sy_sigv4_request;

/* Who signs, and for what.  Nothing is owned. */
typedef struct sy_sigv4_key {
    const char *access_key;
    const char *secret_key;
    const char *session_token; /* NULL or "" for none; else signed as
                                  X-Amz-Security-Token unless the request
                                  already has that header */
    const char *region;
    const char *service;
    const unsigned char *signing_key; /* 32 bytes from sy_sigv4_derive_key()
                                         for this date, or NULL to derive */
} sy_sigv4_key;

/* The day's signing key: HMAC chain of the secret over date8 (YYYYMMDD),
 * region, service and "aws4_request".  A caller signing many requests a
 * day derives it once. */
void sy_sigv4_derive_key(const char *secret, const char *date8,
                         const char *region, const char *service,
                         unsigned char out[32]);

/* What signing produced.  `canonical` and `string_to_sign` are filled only
 * when asked (tests); `authorization` always.  Owned; free with
 * sy_sigv4_out_free(). */
typedef struct sy_sigv4_out {
    char *canonical;
    char *string_to_sign;
    char *authorization;   /* the Authorization header's value */
} sy_sigv4_out;

/* The X-Amz-Date text of `t` (UTC), "YYYYMMDDTHHMMSSZ", into out[17]. */
void sy_sigv4_amz_date(time_t t, char out[17]);

/* Signs `rq` with `key` at `amz_date` (16 characters).  0, or -1 with one
 * line in err (out of memory, a missing Host header, a bad date). */
int sy_sigv4_sign(const sy_sigv4_request *rq, const sy_sigv4_key *key,
                  const char *amz_date, bool want_texts, sy_sigv4_out *out,
                  char *err, size_t err_len);

void sy_sigv4_out_free(sy_sigv4_out *out);

/* Percent-encodes `len` bytes of `s` strictly (unreserved kept; `/` kept
 * when keep_slash) and appends to the growing buffer *buf (size *cap,
 * used *n).  0, or -1 when out of memory.  Shared with the request
 * builder, which encodes function names the same way. */
int sy_sigv4_encode(char **buf, size_t *n, size_t *cap, const char *s,
                    size_t len, bool keep_slash);

#endif /* SY_LAMBDA_SIGV4_H */
