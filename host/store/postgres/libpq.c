/* libpq: the table, filled on first use (libpq.h). */
#include "store/postgres/libpq.h"

#include "base/library.h"

struct sy_libpq sy_libpq;

static const char *const names[] = {
#define SY_LIBPQ_NAME(name) #name,
    SY_LIBPQ_FUNCTIONS(SY_LIBPQ_NAME)
#undef SY_LIBPQ_NAME
};

static void **const slots[] = {
#define SY_LIBPQ_ADDRESS(name) (void **)&sy_libpq.name,
    SY_LIBPQ_FUNCTIONS(SY_LIBPQ_ADDRESS)
#undef SY_LIBPQ_ADDRESS
};

static sy_library library = {
    .soname = SY_LIBPQ_SONAME,
    .package = "libpq5",
    .names = names,
    .slots = slots,
    .count = sizeof names / sizeof names[0],
};

int sy_libpq_load(char *err, size_t err_len)
{
    return sy_library_load(&library, err, err_len);
}
