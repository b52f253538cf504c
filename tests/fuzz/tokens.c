/*
 * tokens.c -- fuzz target: the admin API's tokens file (admin.tokens_file,
 * sy_admin_tokens_parse: what every start and reload reads), and matching
 * an Authorization header against what it holds.
 *
 * Input: the file's bytes.  Properties: a refusal is one line "PATH:LINE:
 * reason" with no digest in it, and leaves no entry; an accepted file's
 * entries have valid names (unique), roles read to admin, and written back
 * as "NAME ROLE HEX" lines they read back the same; the input as a bearer
 * header matches no entry or one, without a crash.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#include "admin/tokens.h"

#define PATH "tokens"

/* Whether s holds 64 hex digits in a row: a digest. */
static bool has_digest(const char *s)
{
    size_t run = 0;
    for (; *s; s++) {
        bool hex = (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f');
        run = hex ? run + 1 : 0;
        if (run >= 64)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sy_admin_tokens t;
    char err[512] = "";
    int rc = sy_admin_tokens_parse((const char *)data, size, PATH, &t, err, sizeof err);
    if (rc != 0) {
        SY_FUZZ_CHECK(rc == -1 && t.n == 0 && !t.v, "refusal %d left %zu entries", rc, t.n);
        SY_FUZZ_CHECK(strncmp(err, PATH ":", sizeof PATH) == 0 && !strchr(err, '\n') &&
                          !has_digest(err),
                      "refusal \"%s\"", err);
        return 0;
    }
    /* Written back, one line each, the entries read back the same. */
    char *text = malloc(t.n * 160 + 1);
    SY_FUZZ_CHECK(text, "out of memory");
    size_t len = 0;
    for (size_t i = 0; i < t.n; i++) {
        const sy_admin_token *k = &t.v[i];
        size_t n = strlen(k->name);
        SY_FUZZ_CHECK(n >= 1 && n < SY_ADMIN_TOKEN_NAME_MAX &&
                          strspn(k->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789._-") == n,
                      "entry %zu has the name \"%s\"", i, k->name);
        SY_FUZZ_CHECK(k->role >= SY_ROLE_READ && k->role <= SY_ROLE_ADMIN, "entry %s role %d",
                      k->name, (int)k->role);
        for (size_t j = 0; j < i; j++)
            SY_FUZZ_CHECK(strcmp(t.v[j].name, k->name) != 0, "%s twice", k->name);
        len += (size_t)sprintf(text + len, "%s %s ", k->name, sy_admin_role_name(k->role));
        for (size_t b = 0; b < SY_ADMIN_DIGEST_LEN; b++)
            len += (size_t)sprintf(text + len, "%02x", k->digest[b]);
        text[len++] = '\n';
    }
    sy_admin_tokens again;
    SY_FUZZ_CHECK(sy_admin_tokens_parse(text, len, PATH, &again, err, sizeof err) == 0,
                  "written back, refused: %s", err);
    SY_FUZZ_CHECK(again.n == t.n, "written back, %zu entries read, not the %zu written",
                  again.n, t.n);
    for (size_t i = 0; i < t.n; i++)
        SY_FUZZ_CHECK(strcmp(again.v[i].name, t.v[i].name) == 0 &&
                          again.v[i].role == t.v[i].role &&
                          memcmp(again.v[i].digest, t.v[i].digest, SY_ADMIN_DIGEST_LEN) == 0,
                      "written back, entry %zu (%s) read back otherwise", i, t.v[i].name);
    free(text);
    sy_admin_tokens_free(&again);
    /* The input as a token: one entry at most, and no crash. */
    char *header = malloc(size + 8);
    SY_FUZZ_CHECK(header, "out of memory");
    memcpy(header, "Bearer ", 7);
    memcpy(header + 7, data, size);
    header[size + 7] = '\0';
    const sy_admin_token *k = sy_admin_tokens_match(&t, header);
    SY_FUZZ_CHECK(!k || (k >= t.v && k < t.v + t.n), "a match outside the entries");
    free(header);
    sy_admin_tokens_free(&t);
    return 0;
}
