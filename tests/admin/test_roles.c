/* Unit tests for roles: every endpoint the listener serves names the role
 * it needs, and it is the one this table says (a new endpoint without a
 * row here fails); the tokens file (digests, its checks, one line per
 * error naming the line), matching a bearer token, and making one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "admin/router.h"
#include "admin/tokens.h"

/* Every endpoint and its role: read every GET, operate submit, cancel and
 * retry, admin reload and drain; the dashboard's files open. */
static const struct {
    const char *method, *pattern;
    sy_admin_role role;
} expected[] = {
    {"GET", "/api/v1/health", SY_ROLE_READ},
    {"GET", "/api/v1/runs", SY_ROLE_READ},
    {"POST", "/api/v1/runs", SY_ROLE_OPERATE},
    {"GET", "/api/v1/runs/{}", SY_ROLE_READ},
    {"POST", "/api/v1/runs/{}/cancel", SY_ROLE_OPERATE},
    {"DELETE", "/api/v1/runs/{}", SY_ROLE_OPERATE},
    {"POST", "/api/v1/runs/{}/retry", SY_ROLE_OPERATE},
    {"GET", "/api/v1/runs/{}/logs", SY_ROLE_READ},
    {"GET", "/api/v1/workflows", SY_ROLE_READ},
    {"GET", "/api/v1/workflows/{}", SY_ROLE_READ},
    {"GET", "/api/v1/instances", SY_ROLE_READ},
    {"GET", "/api/v1/routes", SY_ROLE_READ},
    {"GET", "/api/v1/events", SY_ROLE_READ},
    {"POST", "/api/v1/events", SY_ROLE_OPERATE},
    {"GET", "/api/v1/named-events", SY_ROLE_READ},
    {"GET", "/api/v1/triggers", SY_ROLE_READ},
    {"POST", "/api/v1/reload", SY_ROLE_ADMIN},
    {"POST", "/api/v1/drain", SY_ROLE_ADMIN},
    {"GET", "/api/v1/limits", SY_ROLE_READ},
    {"GET", "/metrics", SY_ROLE_READ},
    {"GET", "/api/v1/runs/{}/attempts", SY_ROLE_READ},
    {"GET", "/api/v1/audit", SY_ROLE_ADMIN},
    {"GET", "/api/v1/token", SY_ROLE_READ},
    {"GET", "/", SY_ROLE_OPEN},
    {"GET", "/dashboard/{}", SY_ROLE_OPEN},
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

static void test_every_route_has_its_role(void **state)
{
    (void)state;
    for (size_t i = 0; i < sy_admin_n_routes; i++) {
        const sy_admin_route *r = &sy_admin_routes[i];
        size_t j = 0;
        while (j < N_EXPECTED && (strcmp(expected[j].method, r->method) != 0 ||
                                  strcmp(expected[j].pattern, r->pattern) != 0))
            j++;
        if (j == N_EXPECTED)
            fail_msg("%s %s has no row in this test's table of roles", r->method, r->pattern);
        if (r->role != expected[j].role)
            fail_msg("%s %s needs %s; the table says %s", r->method, r->pattern,
                     sy_admin_role_name(r->role), sy_admin_role_name(expected[j].role));
        /* What the flags say agrees with the role. */
        assert_int_not_equal(r->role, SY_ROLE_UNSET);
        if (r->flags & SY_ADMIN_CHANGE)
            assert_true(r->role >= SY_ROLE_OPERATE);
        else if (r->role > SY_ROLE_READ) /* a read kept from the lower roles */
            assert_string_equal(r->method, "GET");
        assert_int_equal(!!(r->flags & SY_ADMIN_OPEN), r->role == SY_ROLE_OPEN);
    }
    assert_int_equal(sy_admin_n_routes, N_EXPECTED);
}

static void test_role_names(void **state)
{
    (void)state;
    sy_admin_role r;
    assert_true(sy_admin_role_parse("read", &r) && r == SY_ROLE_READ);
    assert_true(sy_admin_role_parse("operate", &r) && r == SY_ROLE_OPERATE);
    assert_true(sy_admin_role_parse("admin", &r) && r == SY_ROLE_ADMIN);
    assert_false(sy_admin_role_parse("open", &r));
    assert_false(sy_admin_role_parse("Admin", &r));
    assert_false(sy_admin_role_parse(NULL, &r));
    assert_string_equal(sy_admin_role_name(SY_ROLE_OPERATE), "operate");
    assert_string_equal(sy_admin_role_name((sy_admin_role)99), "none");
}

static char dir[64];

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void test_tokens_new_and_match(void **state)
{
    (void)state;
    char path[128], token[80], err[256], header[128];
    path_in(path, sizeof path, "tokens");
    assert_int_equal(sy_admin_tokens_new(path, "ci", SY_ROLE_OPERATE, token, sizeof token, err,
                                         sizeof err), 0);
    assert_int_equal(strlen(token), 64);
    char second[80];
    assert_int_equal(sy_admin_tokens_new(path, "ops", SY_ROLE_ADMIN, second, sizeof second, err,
                                         sizeof err), 0);
    assert_int_equal(sy_admin_tokens_new(path, "ci", SY_ROLE_READ, second, sizeof second, err,
                                         sizeof err), -1);
    assert_non_null(strstr(err, "a token named 'ci' is there already"));
    assert_int_equal(sy_admin_tokens_new(path, "bad name", SY_ROLE_READ, second, sizeof second,
                                         err, sizeof err), -1);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* The file holds digests only. */
    FILE *f = fopen(path, "r");
    char buf[1024] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_null(strstr(buf, token));

    sy_admin_tokens t;
    assert_int_equal(sy_admin_tokens_load(path, &t, err, sizeof err), 0);
    assert_int_equal(t.n, 2);
    snprintf(header, sizeof header, "Bearer %s", token);
    const sy_admin_token *k = sy_admin_tokens_match(&t, header);
    assert_non_null(k);
    assert_string_equal(k->name, "ci");
    assert_int_equal(k->role, SY_ROLE_OPERATE);
    header[strlen(header) - 1] ^= 1;
    assert_null(sy_admin_tokens_match(&t, header));
    assert_null(sy_admin_tokens_match(&t, NULL));
    assert_null(sy_admin_tokens_match(&t, token));
    sy_admin_tokens_add_clear(&t, "token_file", SY_ROLE_ADMIN, "a-clear-token-0123456789");
    k = sy_admin_tokens_match(&t, "Bearer a-clear-token-0123456789");
    assert_non_null(k);
    assert_string_equal(k->name, "token_file");
    sy_admin_tokens_free(&t);
    unlink(path);
}

static void test_tokens_file_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *error;
    } rows[] = {
        {"# c\nci read\n", ":2: expected NAME ROLE SHA256-HEX"},
        {"ci root 00\n", ":1: the role must be read, operate or admin"},
        {"ci read abc\n", ":1: the digest must be 64 lowercase hex digits"},
        {"c!i read 00\n", ":1: a name is 1 to 63"},
        {"a read 0000000000000000000000000000000000000000000000000000000000000000\n"
         "a admin 0000000000000000000000000000000000000000000000000000000000000000\n",
         ":2: a name given twice"},
    };
    char path[128], err[256];
    path_in(path, sizeof path, "bad");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        write_file(path, rows[i].text, 0600);
        sy_admin_tokens t;
        assert_int_equal(sy_admin_tokens_load(path, &t, err, sizeof err), -1);
        if (!strstr(err, rows[i].error))
            fail_msg("row %zu: got '%s', expected '%s'", i, err, rows[i].error);
        assert_null(t.v);
    }
    write_file(path, "\n", 0644);
    sy_admin_tokens t;
    assert_int_equal(sy_admin_tokens_load(path, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "others may read it"));
    unlink(path);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s", "/tmp/sy-roles-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_route_has_its_role),
        cmocka_unit_test(test_role_names),
        cmocka_unit_test(test_tokens_new_and_match),
        cmocka_unit_test(test_tokens_file_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
