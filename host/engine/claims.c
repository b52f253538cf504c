/* A turn's tasks' keys, named once (engine/claims.h). */
#include "engine/claims.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/batch.h"

/* The keys' text: blocks that never move once written (the claims point
 * into them), kept from turn to turn and written again from the first. */
#define BLOCK_SIZE 65536

typedef struct {
    char *text;
    size_t used, size;
} block;

/* One task's claims: claim[first .. first + n). */
typedef struct {
    const sy_live_run *run;
    int64_t run_id; /* with run: an entry is never taken for another run's
                       task that came to live at the same address */
    size_t idx, first, n;
    const char *lost_pool;
} entry;

struct sy_claims {
    block *blocks;
    size_t n_blocks, cap_blocks, at; /* blocks[at] is being written */
    sy_slot_claim *claim;
    uint32_t *mark; /* with each claim: its caller's */
    size_t n_claims, cap_claims, cap_marks;
    entry *entries;
    size_t n_entries, cap_entries;
    size_t begun; /* n_claims at sy_claims_begin */
    size_t n_read; /* entries[0..n_read) were read (sy_claims_read) */
    size_t mark_block, mark_used; /* where the text stood then */
};

sy_claims *sy_claims_new(void)
{
    sy_claims *c = sy_xmalloc(sizeof *c);
    *c = (sy_claims){0};
    return c;
}

void sy_claims_free(sy_claims *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_blocks; i++)
        free(c->blocks[i].text);
    free(c->blocks);
    free(c->claim);
    free(c->mark);
    free(c->entries);
    free(c);
}

/* Room for len bytes of text, in the block being written or the next. */
static char *text_room(sy_claims *c, size_t len)
{
    while (c->at < c->n_blocks && c->blocks[c->at].size - c->blocks[c->at].used < len)
        c->at++;
    if (c->at == c->n_blocks) {
        c->blocks = sy_engine_grow(c->blocks, &c->cap_blocks, c->n_blocks + 1,
                                   sizeof *c->blocks);
        size_t size = len > BLOCK_SIZE ? len : BLOCK_SIZE;
        c->blocks[c->n_blocks++] = (block){sy_xmalloc(size), 0, size};
    }
    block *b = &c->blocks[c->at];
    char *o = b->text + b->used;
    b->used += len;
    return o;
}

void sy_claims_begin(sy_claims *c)
{
    c->begun = c->n_claims;
    c->mark_block = c->at;
    c->mark_used = c->at < c->n_blocks ? c->blocks[c->at].used : 0;
}

void sy_claims_add(sy_claims *c, const char *prefix, const char *name, int64_t limit,
                   int64_t n)
{
    const char *key = prefix;
    if (name) {
        size_t lp = strlen(prefix), ln = strlen(name);
        char *o = text_room(c, lp + ln + 1);
        memcpy(o, prefix, lp);
        memcpy(o + lp, name, ln + 1);
        key = o;
    }
    c->claim = sy_engine_grow(c->claim, &c->cap_claims, c->n_claims + 1, sizeof *c->claim);
    c->mark = sy_engine_grow(c->mark, &c->cap_marks, c->n_claims + 1, sizeof *c->mark);
    c->mark[c->n_claims] = 0;
    c->claim[c->n_claims++] = (sy_slot_claim){key, limit, n};
}

const sy_slot_claim *sy_claims_end(sy_claims *c, sy_live_run *r, size_t idx,
                                   const char *lost_pool, size_t *n)
{
    /* Never NULL, even for a task that takes no key (a flow of rate
     * limits only): NULL says that a key could not be named. */
    c->claim = sy_engine_grow(c->claim, &c->cap_claims, c->n_claims + 1, sizeof *c->claim);
    c->entries = sy_engine_grow(c->entries, &c->cap_entries, c->n_entries + 1,
                                sizeof *c->entries);
    c->entries[c->n_entries++] =
        (entry){r, r->id, idx, c->begun, c->n_claims - c->begun, lost_pool};
    r->t[idx].claims_at = (uint32_t)c->n_entries;
    *n = c->n_claims - c->begun;
    return c->claim + c->begun;
}

void sy_claims_drop(sy_claims *c)
{
    c->n_claims = c->begun;
    /* The text written since is given back too: the blocks after the
     * mark were empty then. */
    for (size_t i = c->mark_block + 1; i <= c->at && i < c->n_blocks; i++)
        c->blocks[i].used = 0;
    if (c->mark_block < c->n_blocks)
        c->blocks[c->mark_block].used = c->mark_used;
    c->at = c->mark_block;
}

const sy_slot_claim *sy_claims_find(const sy_claims *c, const sy_live_run *r, size_t idx,
                                    size_t *n, const char **lost_pool, bool *read,
                                    uint32_t **marks)
{
    /* The task's mark may be a past turn's: it counts only when the entry
     * it names is this task's. */
    size_t at = r->t[idx].claims_at;
    if (at == 0 || at > c->n_entries)
        return NULL;
    const entry *e = &c->entries[at - 1];
    if (e->run != r || e->run_id != r->id || e->idx != idx)
        return NULL;
    *n = e->n;
    *lost_pool = e->lost_pool;
    *read = at <= c->n_read;
    *marks = c->mark + e->first;
    return c->claim + e->first;
}

void sy_claims_read(sy_claims *c)
{
    c->n_read = c->n_entries;
}

const sy_slot_claim *sy_claims_all(const sy_claims *c, size_t *n, uint32_t **marks)
{
    *n = c->n_claims;
    *marks = c->mark;
    return c->claim;
}

void sy_claims_clear(sy_claims *c)
{
    for (size_t i = 0; i < c->n_blocks; i++)
        c->blocks[i].used = 0;
    c->at = 0;
    c->n_claims = c->n_entries = c->n_read = 0;
}
