/* Loading a shared library on first use (library.h says why). */
#include "base/library.h"

#include <dlfcn.h>
#include <pthread.h>

#include "base/util.h"

/* One lock for every library: each is loaded once per process, so it is
 * taken a handful of times in all. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int bind_all(sy_library *l)
{
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        sy_errf(l->error, sizeof l->error, "%s cannot be loaded (%s): install the Debian package %s",
                l->soname, why ? why : "no reason given", l->package);
        return -1;
    }
    for (size_t i = 0; i < l->count; i++) {
        dlerror();
        if (!(*l->slots[i] = dlsym(h, l->names[i]))) {
            sy_errf(l->error, sizeof l->error,
                    "%s has no function %s (not the version this was built with?)", l->soname,
                    l->names[i]);
            return -1;
        }
    }
    return 0;
}

int sy_library_load(sy_library *l, char *err, size_t err_len)
{
    pthread_mutex_lock(&lock);
    if (l->state == 0)
        l->state = bind_all(l) == 0 ? 1 : -1;
    int state = l->state;
    pthread_mutex_unlock(&lock);
    if (state > 0)
        return 0;
    sy_errf(err, err_len, "%s", l->error);
    return -1;
}
