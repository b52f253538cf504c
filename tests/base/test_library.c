/* Libraries opened on first use (base/library.h): a table filled once,
 * the errors that name the library, its Debian package or the function it
 * lacks, and the host's own bindings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "admin/libmicrohttpd.h"
#include "base/library.h"
#ifdef SY_HAVE_LIBPQ
#include "store/postgres/libpq.h"
#endif

/* Two functions of the C library's libm, as a binding would list them. */
static struct {
    double (*cos)(double);
    double (*sqrt)(double);
} math;

static const char *const math_names[] = {"cos", "sqrt"};
static void **const math_slots[] = {(void **)&math.cos, (void **)&math.sqrt};

static void test_fills_the_table_once(void **state)
{
    (void)state;
    sy_library l = {.soname = "libm.so.6", .package = "libc6", .names = math_names,
                    .slots = math_slots, .count = 2};
    char err[300] = "";
    assert_int_equal(sy_library_load(&l, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_true(math.cos(0.0) == 1.0);
    assert_true(math.sqrt(16.0) == 4.0);
    /* A second call finds it loaded and leaves the table as it is. */
    math.sqrt = NULL;
    assert_int_equal(sy_library_load(&l, err, sizeof err), 0);
    assert_null(math.sqrt);
}

static void test_a_missing_library_names_its_package(void **state)
{
    (void)state;
    void *slot = NULL;
    void **slots[] = {&slot};
    const char *names[] = {"anything"};
    sy_library l = {.soname = "libsy-nowhere.so.9", .package = "sy-nowhere9", .names = names,
                    .slots = slots, .count = 1};
    char err[300] = "";
    assert_int_equal(sy_library_load(&l, err, sizeof err), -1);
    assert_non_null(strstr(err, "libsy-nowhere.so.9 cannot be loaded ("));
    assert_non_null(strstr(err, "): install the Debian package sy-nowhere9"));
    /* Not tried again: the same answer, and nothing in the table. */
    char again[300] = "";
    assert_int_equal(sy_library_load(&l, again, sizeof again), -1);
    assert_string_equal(again, err);
    assert_null(slot);
}

static void test_a_missing_function_is_named(void **state)
{
    (void)state;
    double (*cos_slot)(double) = NULL;
    void *other = NULL;
    void **slots[] = {(void **)&cos_slot, &other};
    const char *names[] = {"cos", "sy_no_such_function"};
    sy_library l = {.soname = "libm.so.6", .package = "libc6", .names = names, .slots = slots,
                    .count = 2};
    char err[300] = "";
    assert_int_equal(sy_library_load(&l, err, sizeof err), -1);
    assert_string_equal(err, "libm.so.6 has no function sy_no_such_function (not the version "
                             "this was built with?)");
    assert_null(other);
}

/* The host's bindings find every function they list; before, the table is
 * empty (nothing at start opened them). */
static void test_the_hosts_bindings_load(void **state)
{
    (void)state;
    char err[300] = "";
    assert_null(sy_libmicrohttpd.MHD_start_daemon);
    assert_int_equal(sy_libmicrohttpd_load(err, sizeof err), 0);
    assert_non_null(sy_libmicrohttpd.MHD_start_daemon);
    assert_non_null(sy_libmicrohttpd.gnutls_certificate_verify_peers2);
#ifdef SY_HAVE_LIBPQ
    assert_null(sy_libpq.PQexec);
    assert_int_equal(sy_libpq_load(err, sizeof err), 0);
    assert_non_null(sy_libpq.PQexec);
    /* Called through the table like any libpq call in the store. */
    char *why = NULL;
    PQconninfoOption *o = PQconninfoParse("host=127.0.0.1 port=5432", &why);
    assert_non_null(o);
    PQconninfoFree(o);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_the_table_once),
        cmocka_unit_test(test_a_missing_library_names_its_package),
        cmocka_unit_test(test_a_missing_function_is_named),
        cmocka_unit_test(test_the_hosts_bindings_load),
    };
    return cmocka_run_group_tests_name("library", tests, NULL, NULL);
}
