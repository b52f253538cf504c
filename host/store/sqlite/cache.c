/* Cached results (store/cache.h) in the SQLite store. */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/internal.h"

int sy_sqlite_cache_put(sy_store *s, const char *ns, const char *key, const char *output,
                        int64_t run_id, uint32_t idx, int64_t now)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db,
                                "INSERT OR REPLACE INTO task_cache (ns, key, output, run_id,"
                                " idx, completed) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = bind_text(st, 1, ns);
        keep(&rc, bind_text(st, 2, key));
        keep(&rc, bind_text(st, 3, output));
        keep(&rc, sqlite3_bind_int64(st, 4, run_id));
        keep(&rc, sqlite3_bind_int64(st, 5, idx));
        keep(&rc, sqlite3_bind_int64(st, 6, now));
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "keep %s's cached output", ns);
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_cache_get(sy_store *s, const char *ns, const char *key, int64_t since,
                        char **output, int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db,
                                "SELECT output, run_id FROM task_cache"
                                " WHERE ns = ?1 AND key = ?2 AND completed >= ?3",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = bind_text(st, 1, ns);
        keep(&rc, bind_text(st, 2, key));
        keep(&rc, sqlite3_bind_int64(st, 3, since));
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = SY_OK;
    if (rc == SQLITE_ROW) {
        *output = strdup(col_text(st, 0));
        *run_id = sqlite3_column_int64(st, 1);
        if (!*output)
            status = sy_store_fail(s, SY_ENOMEM, "out of memory");
    } else if (rc == SQLITE_DONE) {
        status = sy_store_fail(s, SY_ENOENT, "no cached output of %s under that key", ns);
    } else {
        status = sy_sqlite_fail(q, rc, "read %s's cached output", ns);
    }
    sqlite3_finalize(st);
    return status;
}
