/* Cached results (store/cache.h) in the PostgreSQL store.  Of two hosts
 * completing one key at once, the upsert keeps the later writer's row. */
#include <stdlib.h>
#include <string.h>

#include "store/postgres/internal.h"

int sy_pg_cache_put(sy_store *s, const char *ns, const char *key, const char *output,
                    int64_t run_id, uint32_t idx, int64_t now)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, ns);
    sy_pg_text(&p, 2, key);
    sy_pg_text(&p, 3, output);
    sy_pg_int(&p, 4, run_id);
    sy_pg_int(&p, 5, idx);
    sy_pg_int(&p, 6, now);
    return sy_pg_run(q, SY_PG_CACHE_PUT, &p, NULL, "keep a cached output");
}

int sy_pg_cache_get(sy_store *s, const char *ns, const char *key, int64_t since,
                    char **output, int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, ns);
    sy_pg_text(&p, 2, key);
    sy_pg_int(&p, 3, since);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_CACHE_GET, &p, &r, "read a cached output");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0) {
        status = sy_store_fail(s, SY_ENOENT, "no cached output of %s under that key", ns);
    } else {
        *output = strdup(PQgetvalue(r, 0, 0));
        *run_id = sy_pg_col_int(r, 0, 1);
        if (!*output)
            status = sy_store_fail(s, SY_ENOMEM, "out of memory");
    }
    PQclear(r);
    return status;
}
