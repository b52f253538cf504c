/* A size setting (see config/size.h). */
#include "config/size.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

long long sy_cfg_size(const config_setting_t *s, long long hi)
{
    int t = config_setting_type(s);
    long long v = -1;
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
        v = config_setting_get_int64(s);
    } else if (t == CONFIG_TYPE_STRING) {
        const char *str = config_setting_get_string(s);
        char *end = NULL;
        errno = 0;
        long long n = strtoll(str, &end, 10);
        long long unit = !end || end == str || errno ? 0
                         : !*end || strcmp(end, "B") == 0 ? 1
                         : strcmp(end, "KiB") == 0 ? 1024
                         : strcmp(end, "MiB") == 0 ? 1024 * 1024 : 0;
        if (unit && n >= 0 && n <= hi / unit)
            v = n * unit;
    }
    return v < 0 || v > hi ? -1 : v;
}
