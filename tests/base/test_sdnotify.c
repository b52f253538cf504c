/* sd_notify(3)'s protocol: the addresses NOTIFY_SOCKET may name, the
 * watchdog meant for this process alone, a datagram that arrives, and the
 * variables taken out of the environment tasks inherit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/sdnotify.h"
#include "../helpers.h"

static void test_addresses(void **state)
{
    (void)state;
    struct sockaddr_un sa;
    socklen_t len = 0;
    assert_int_equal(sy_sd_address("/run/systemd/notify", &sa, &len), 0);
    assert_int_equal(sa.sun_family, AF_UNIX);
    assert_string_equal(sa.sun_path, "/run/systemd/notify");
    assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 20);
    /* Abstract: a leading NUL, and the length counts the name only. */
    assert_int_equal(sy_sd_address("@sy/x", &sa, &len), 0);
    assert_int_equal(sa.sun_path[0], '\0');
    assert_memory_equal(sa.sun_path + 1, "sy/x", 4);
    assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 5);
    assert_int_equal(sy_sd_address("relative/sock", &sa, &len), -1);
    assert_int_equal(sy_sd_address("vsock:2:1234", &sa, &len), -1);
    assert_int_equal(sy_sd_address("", &sa, &len), -1);
    assert_int_equal(sy_sd_address("@", &sa, &len), -1);
    assert_int_equal(sy_sd_address(NULL, &sa, &len), -1);
    char longer[sizeof sa.sun_path + 2];
    memset(longer, 'a', sizeof longer - 1);
    longer[0] = '/';
    longer[sizeof longer - 1] = '\0';
    assert_int_equal(sy_sd_address(longer, &sa, &len), -1);
}

static void test_watchdog(void **state)
{
    (void)state;
    assert_int_equal(sy_sd_parse_watchdog("30000000", NULL, 42), 30000000);
    assert_int_equal(sy_sd_parse_watchdog("30000000", "42", 42), 30000000);
    assert_int_equal(sy_sd_parse_watchdog("30000000", "43", 42), 0);
    assert_int_equal(sy_sd_parse_watchdog("30000000", "x", 42), 0);
    assert_int_equal(sy_sd_parse_watchdog(NULL, "42", 42), 0);
    assert_int_equal(sy_sd_parse_watchdog("0", NULL, 42), 0);
    assert_int_equal(sy_sd_parse_watchdog("-5", NULL, 42), 0);
    assert_int_equal(sy_sd_parse_watchdog("12s", NULL, 42), 0);
    assert_int_equal(sy_sd_parse_watchdog("99999999999999999999999", NULL, 42), 0);
}

static void test_sends(void **state)
{
    (void)state;
    char *dir = th_mkdtemp();
    char path[512];
    snprintf(path, sizeof path, "%s/notify", dir);
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un sa;
    socklen_t len;
    assert_int_equal(sy_sd_address(path, &sa, &len), 0);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, len), 0);
    assert_int_equal(sy_sd_notify("READY=1"), 0); /* not initialised: nobody listens */
    setenv("NOTIFY_SOCKET", path, 1);
    setenv("WATCHDOG_USEC", "5000000", 1);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    sy_sd_init();
    assert_null(getenv("NOTIFY_SOCKET"));
    assert_null(getenv("WATCHDOG_USEC"));
    assert_null(getenv("WATCHDOG_PID"));
    assert_true(sy_sd_enabled());
    assert_int_equal(sy_sd_watchdog_usec(), 5000000);
    assert_int_equal(sy_sd_notifyf("READY=1\nSTATUS=%s", "serving"), 1);
    char got[256];
    ssize_t n = recv(s, got, sizeof got - 1, 0);
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, "READY=1\nSTATUS=serving");
    close(s);
    unlink(path);
    /* The manager gone: -1, and the host goes on. */
    assert_int_equal(sy_sd_notify("WATCHDOG=1"), -1);
    assert_true(sy_sd_monotonic_usec() > 0);
    th_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_watchdog),
        cmocka_unit_test(test_sends),
    };
    return cmocka_run_group_tests_name("sdnotify", tests, NULL, NULL);
}
