/* Unit tests for the admin API's pure parts: matching a request against a
 * route table (404 against 405, the Allow list, captures), the bearer
 * token (its file's checks, the comparison), which listeners are local,
 * the admin group's listen address, and query values. */
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

#include "admin/auth.h"
#include "admin/parse.h"
#include "admin/router.h"
#include "config/admin.h"

static int h_a(struct sy_admin_req *rq) { (void)rq; return 1; }
static int h_b(struct sy_admin_req *rq) { (void)rq; return 2; }

static const sy_admin_route table[] = {
    {"GET", "/api/v1/runs", h_a, 0, SY_ROLE_READ},
    {"POST", "/api/v1/runs", h_b, 0, SY_ROLE_OPERATE},
    {"GET", "/api/v1/runs/{}", h_a, 0, SY_ROLE_READ},
    {"POST", "/api/v1/runs/{}/cancel", h_b, 0, SY_ROLE_OPERATE},
    {"DELETE", "/api/v1/runs/{}", h_b, 0, SY_ROLE_OPERATE},
};
#define N (sizeof table / sizeof table[0])

static int find(const char *method, const char *path, const sy_admin_route **r,
                char caps[][SY_ADMIN_CAP_LEN], char *allow)
{
    return sy_admin_route_find(table, N, method, path, r, caps, allow, 64);
}

static void test_route_found(void **state)
{
    (void)state;
    const sy_admin_route *r;
    char caps[SY_ADMIN_MAX_CAPS][SY_ADMIN_CAP_LEN], allow[64];
    assert_int_equal(find("GET", "/api/v1/runs", &r, caps, allow), SY_ROUTE_FOUND);
    assert_ptr_equal(r, &table[0]);
    assert_int_equal(find("POST", "/api/v1/runs", &r, caps, allow), SY_ROUTE_FOUND);
    assert_ptr_equal(r, &table[1]);
    assert_int_equal(find("POST", "/api/v1/runs/42/cancel", &r, caps, allow), SY_ROUTE_FOUND);
    assert_ptr_equal(r, &table[3]);
    assert_string_equal(caps[0], "42");
    /* HEAD is served as GET. */
    assert_int_equal(find("HEAD", "/api/v1/runs/7", &r, caps, allow), SY_ROUTE_FOUND);
    assert_ptr_equal(r, &table[2]);
    assert_string_equal(caps[0], "7");
}

static void test_route_not_found(void **state)
{
    (void)state;
    const sy_admin_route *r;
    char caps[SY_ADMIN_MAX_CAPS][SY_ADMIN_CAP_LEN], allow[64];
    const char *missing[] = {"/", "/api/v1", "/api/v1/run", "/api/v1/runs/",
                             "/api/v1/runs//cancel", "/api/v1/runs/1/cancel/x",
                             "/api/v1/runsx", "/API/v1/runs"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        int got = find("GET", missing[i], &r, caps, allow);
        if (got != SY_ROUTE_NO_PATH)
            fail_msg("%s: got %d, expected 404", missing[i], got);
        assert_null(r);
    }
}

static void test_route_wrong_method(void **state)
{
    (void)state;
    const sy_admin_route *r;
    char caps[SY_ADMIN_MAX_CAPS][SY_ADMIN_CAP_LEN], allow[64];
    assert_int_equal(find("PUT", "/api/v1/runs", &r, caps, allow), SY_ROUTE_NO_METHOD);
    assert_string_equal(allow, "GET, POST");
    assert_int_equal(find("GET", "/api/v1/runs/3/cancel", &r, caps, allow), SY_ROUTE_NO_METHOD);
    assert_string_equal(allow, "POST");
    assert_int_equal(find("PATCH", "/api/v1/runs/3", &r, caps, allow), SY_ROUTE_NO_METHOD);
    assert_string_equal(allow, "GET, DELETE");
}

static void test_route_long_segment(void **state)
{
    (void)state;
    const sy_admin_route *r;
    char caps[SY_ADMIN_MAX_CAPS][SY_ADMIN_CAP_LEN], allow[64];
    char path[600] = "/api/v1/runs/";
    memset(path + strlen(path), '9', 400);
    path[13 + 400] = '\0';
    /* Longer than a capture holds: no route, never an overflow. */
    assert_int_equal(find("GET", path, &r, caps, allow), SY_ROUTE_NO_PATH);
}

static void test_bearer(void **state)
{
    (void)state;
    const char *tok = "s3cret-token-0123456789";
    assert_true(sy_admin_bearer_ok("Bearer s3cret-token-0123456789", tok));
    assert_true(sy_admin_bearer_ok("bearer s3cret-token-0123456789", tok));
    assert_false(sy_admin_bearer_ok("Bearer s3cret-token-012345678", tok));
    assert_false(sy_admin_bearer_ok("Bearer s3cret-token-01234567890", tok));
    assert_false(sy_admin_bearer_ok("Bearer S3cret-token-0123456789", tok));
    assert_false(sy_admin_bearer_ok("Basic s3cret-token-0123456789", tok));
    assert_false(sy_admin_bearer_ok("s3cret-token-0123456789", tok));
    assert_false(sy_admin_bearer_ok("Bearer ", tok));
    assert_false(sy_admin_bearer_ok(NULL, tok));
    assert_false(sy_admin_bearer_ok("Bearer x", NULL));
}

static char *token_file(const char *content, mode_t mode)
{
    char *path = strdup("/tmp/sy-admin-token-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void test_token_file(void **state)
{
    (void)state;
    char *tok = NULL, err[512];
    char *p = token_file("  0123456789abcdef-token\n", 0600);
    assert_int_equal(sy_admin_token_load(p, &tok, err, sizeof err), 0);
    assert_string_equal(tok, "0123456789abcdef-token");
    free(tok);
    /* Readable by others: refused, the file named, its content never. */
    assert_int_equal(chmod(p, 0640), 0);
    assert_int_not_equal(sy_admin_token_load(p, &tok, err, sizeof err), 0);
    assert_null(tok);
    assert_non_null(strstr(err, p));
    assert_non_null(strstr(err, "0640"));
    assert_null(strstr(err, "0123456789abcdef"));
    unlink(p);
    free(p);
    /* Too short, or with a space inside. */
    p = token_file("short\n", 0600);
    assert_int_not_equal(sy_admin_token_load(p, &tok, err, sizeof err), 0);
    unlink(p);
    free(p);
    p = token_file("0123456789 abcdef-token\n", 0400);
    assert_int_not_equal(sy_admin_token_load(p, &tok, err, sizeof err), 0);
    unlink(p);
    free(p);
    assert_int_not_equal(sy_admin_token_load("/nonexistent/token", &tok, err, sizeof err), 0);
    assert_non_null(strstr(err, "admin.token_file"));
}

static void test_listen(void **state)
{
    (void)state;
    assert_true(sy_admin_listen_local("127.0.0.1:8787"));
    assert_true(sy_admin_listen_local("127.1.2.3:1"));
    assert_true(sy_admin_listen_local("[::1]:8787"));
    assert_true(sy_admin_listen_local("localhost:8787"));
    assert_true(sy_admin_listen_local("unix:/run/sy.sock"));
    assert_false(sy_admin_listen_local("0.0.0.0:8787"));
    assert_false(sy_admin_listen_local("[::]:8787"));
    assert_false(sy_admin_listen_local("10.0.0.1:8787"));
    char host[64];
    int port = -1;
    assert_true(sy_config_admin_split("[::1]:0", host, sizeof host, &port));
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_true(sy_config_admin_split("example.org:65535", host, sizeof host, &port));
    assert_int_equal(port, 65535);
    const char *bad[] = {"127.0.0.1", "127.0.0.1:", ":80", "127.0.0.1:65536", "::1:80",
                         "[::1]80", "h:8x", "h:-1", "h:123456"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (sy_config_admin_split(bad[i], host, sizeof host, &port))
            fail_msg("'%s' accepted", bad[i]);
}

static void test_query_values(void **state)
{
    (void)state;
    long long v = 0;
    assert_true(sy_admin_parse_int("42", 1, 100, &v));
    assert_int_equal(v, 42);
    assert_true(sy_admin_parse_int("-3", -5, 5, &v));
    assert_int_equal(v, -3);
    assert_true(sy_admin_parse_int("9223372036854775807", 1, INT64_MAX, &v));
    const char *bad[] = {"", "x", "4x", " 4", "+4", "0x10", "101", "0", "-",
                         "9223372036854775808", "1e3", "4 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (sy_admin_parse_int(bad[i], 1, 100, &v))
            fail_msg("'%s' accepted", bad[i]);
    assert_false(sy_admin_parse_int(NULL, 1, 100, &v));
    bool b = false;
    assert_true(sy_admin_parse_bool("true", &b) && b);
    assert_true(sy_admin_parse_bool("", &b) && b);
    assert_true(sy_admin_parse_bool("1", &b) && b);
    assert_true(sy_admin_parse_bool("0", &b) && !b);
    assert_true(sy_admin_parse_bool("false", &b) && !b);
    assert_false(sy_admin_parse_bool("yes", &b));
    assert_false(sy_admin_parse_bool("TRUE", &b));
    assert_false(sy_admin_parse_bool(NULL, &b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_found),
        cmocka_unit_test(test_route_not_found),
        cmocka_unit_test(test_route_wrong_method),
        cmocka_unit_test(test_route_long_segment),
        cmocka_unit_test(test_bearer),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_listen),
        cmocka_unit_test(test_query_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
