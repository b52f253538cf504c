/* libmicrohttpd: the table, filled on first use (libmicrohttpd.h). */
#include "admin/libmicrohttpd.h"

#include "base/library.h"

struct sy_libmicrohttpd sy_libmicrohttpd;

static const char *const names[] = {
#define SY_LIBMICROHTTPD_NAME(name) #name,
    SY_LIBMICROHTTPD_FUNCTIONS(SY_LIBMICROHTTPD_NAME)
#undef SY_LIBMICROHTTPD_NAME
};

static void **const slots[] = {
#define SY_LIBMICROHTTPD_ADDRESS(name) (void **)&sy_libmicrohttpd.name,
    SY_LIBMICROHTTPD_FUNCTIONS(SY_LIBMICROHTTPD_ADDRESS)
#undef SY_LIBMICROHTTPD_ADDRESS
};

static sy_library library = {
    .soname = SY_LIBMHD_SONAME,
    .package = "libmicrohttpd12",
    .names = names,
    .slots = slots,
    .count = sizeof names / sizeof names[0],
};

int sy_libmicrohttpd_load(char *err, size_t err_len)
{
    return sy_library_load(&library, err, err_len);
}
