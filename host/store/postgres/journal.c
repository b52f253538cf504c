/*
 * store/postgres/journal.c -- the statements of the open batch, kept so
 * that the batch can be sent again on a new connection.
 *
 * A server restart or a dropped connection ends the server's side of a
 * batch: its writes are gone, while the host still holds them as written.
 * Rather than failing the host, postgres/conn.c reconnects, begins again
 * and replays what the journal holds, checking that each statement
 * changes as many rows as it did the first time (a fenced write that
 * landed then and is refused now means another host took the run in
 * between: the replay fails and the batch with it).
 *
 * Each entry is one allocation: the parameters' texts packed behind it.
 */
#include <stdlib.h>
#include <string.h>

#include "store/postgres/internal.h"

int sy_pg_journal_add(sy_store_pg *q, int id, const char *sql,
                      const sy_pg_params *p, int64_t changes)
{
    sy_pg_journal *j = &q->journal;
    if (j->n == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 64;
        sy_pg_entry **e = realloc(j->e, cap * sizeof *e);
        if (!e)
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        j->e = e;
        j->cap = cap;
    }
    int n = p ? p->n : 0;
    size_t len = sql ? strlen(sql) + 1 : 0;
    for (int i = 0; i < n; i++)
        len += p->v[i] ? strlen(p->v[i]) + 1 : 0;
    sy_pg_entry *e = malloc(sizeof *e + len);
    if (!e)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    char *o = (char *)(e + 1);
    e->id = id;
    e->changes = changes;
    e->sql = NULL;
    if (sql) {
        e->sql = strcpy(o, sql);
        o += strlen(sql) + 1;
    }
    e->p.n = n;
    for (int i = 0; i < n; i++) {
        e->p.v[i] = NULL;
        if (p->v[i]) {
            e->p.v[i] = strcpy(o, p->v[i]);
            o += strlen(p->v[i]) + 1;
        }
    }
    j->e[j->n++] = e;
    return SY_OK;
}

void sy_pg_journal_clear(sy_store_pg *q)
{
    for (size_t i = 0; i < q->journal.n; i++)
        free(q->journal.e[i]);
    q->journal.n = 0;
}

void sy_pg_journal_free(sy_store_pg *q)
{
    sy_pg_journal_clear(q);
    free(q->journal.e);
    q->journal.e = NULL;
    q->journal.cap = 0;
}
