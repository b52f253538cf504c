/* The PostgreSQL store's connections (sy_pg_dial): each carries
 * keepalives and a TCP user timeout, read back from the socket itself,
 * so that a partitioned server shows as a dropped connection within
 * seconds; values the operator's connection string sets win. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "../helpers_pg.h"
#include "store/postgres/internal.h"

static int opt(PGconn *c, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof v;
    assert_int_equal(getsockopt(PQsocket(c), level, name, &v, &len), 0);
    return v;
}

static PGconn *dial_ok(const char *conninfo)
{
    PGconn *c = sy_pg_dial(conninfo);
    assert_non_null(c);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect %s: %s", conninfo, PQerrorMessage(c));
    return c;
}

/* The URL of the test server with `query` added to it. */
static char *with_query(const char *query)
{
    const char *url = th_pg_url();
    size_t n = strlen(url) + strlen(query) + 2;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%s%c%s", url, strchr(url, '?') ? '&' : '?', query);
    return s;
}

static void test_defaults_on_the_socket(void **state)
{
    (void)state;
    PGconn *c = dial_ok(th_pg_url());
    assert_int_equal(opt(c, SOL_SOCKET, SO_KEEPALIVE), 1);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_KEEPIDLE), 10);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_KEEPINTVL), 2);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_KEEPCNT), 3);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_USER_TIMEOUT), 15000);
    PQfinish(c);
}

static void test_the_operators_values_win(void **state)
{
    (void)state;
    char *url = with_query("keepalives_idle=30&tcp_user_timeout=700");
    PGconn *c = dial_ok(url);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_KEEPIDLE), 30);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_USER_TIMEOUT), 700);
    /* What the string leaves alone keeps the host's value. */
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_KEEPCNT), 3);
    PQfinish(c);
    free(url);

    url = with_query("keepalives=0");
    c = dial_ok(url);
    assert_int_equal(opt(c, SOL_SOCKET, SO_KEEPALIVE), 0);
    PQfinish(c);
    free(url);
}

static void test_key_value_strings_too(void **state)
{
    (void)state;
    /* The same server as a key=value string: host, port, user. */
    PGconn *u = dial_ok(th_pg_url());
    char kv[512];
    snprintf(kv, sizeof kv, "host=%s port=%s user=%s dbname=%s "
             "tcp_user_timeout=1234", PQhost(u), PQport(u), PQuser(u),
             PQdb(u));
    PQfinish(u);
    PGconn *c = dial_ok(kv);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_USER_TIMEOUT), 1234);
    assert_int_equal(opt(c, IPPROTO_TCP, TCP_KEEPIDLE), 10);
    PQfinish(c);
}

static void test_a_bad_string_is_refused(void **state)
{
    (void)state;
    PGconn *c = sy_pg_dial("host=127.0.0.1 port=notaport");
    assert_non_null(c);
    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    assert_non_null(strstr(PQerrorMessage(c), "port"));
    PQfinish(c);
}
#endif

int main(void)
{
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_on_the_socket),
        cmocka_unit_test(test_the_operators_values_win),
        cmocka_unit_test(test_key_value_strings_too),
        cmocka_unit_test(test_a_bad_string_is_refused),
    };
    if (!th_pg_url()) {
        printf("1..0 # SKIP no PostgreSQL server\n");
        return 0;
    }
    /* sy_pg_dial is called here without a store, whose opening would
     * load libpq first. */
    char why[300];
    if (sy_libpq_load(why, sizeof why) != 0) {
        printf("Bail out! %s\n", why);
        return 1;
    }
    return cmocka_run_group_tests_name("dial", tests, NULL, NULL);
#else
    printf("1..0 # SKIP built without libpq\n");
    return 0;
#endif
}
