/* libcurl: the table, filled on first use (libcurl.h). */
#include "cli/libcurl.h"

#include "base/library.h"

struct sy_libcurl sy_libcurl;

static const char *const names[] = {
#define SY_LIBCURL_NAME(name) #name,
    SY_LIBCURL_FUNCTIONS(SY_LIBCURL_NAME)
#undef SY_LIBCURL_NAME
};

static void **const slots[] = {
#define SY_LIBCURL_ADDRESS(name) (void **)&sy_libcurl.name,
    SY_LIBCURL_FUNCTIONS(SY_LIBCURL_ADDRESS)
#undef SY_LIBCURL_ADDRESS
};

static sy_library library = {
    .soname = SY_LIBCURL_SONAME,
    .package = "libcurl4",
    .names = names,
    .slots = slots,
    .count = sizeof names / sizeof names[0],
};

int sy_libcurl_load(char *err, size_t err_len)
{
    return sy_library_load(&library, err, err_len);
}
