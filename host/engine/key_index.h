/*
 * engine/key_index.h -- finding a flow-control key among a turn's keys in
 * constant time: an open-addressing table of indices into the caller's
 * own array, which names each entry's key (engine/ledger.c,
 * engine/waiters.c).  A turn of thousands of distinct keys looked each
 * up by a linear search of all of them before.
 *
 * Loop thread only.  The caller owns the array; the index holds only
 * positions in it, and must be told of every entry added (in order) and
 * cleared with the array.
 */
#ifndef SY_ENGINE_KEY_INDEX_H
#define SY_ENGINE_KEY_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct sy_key_index {
    uint32_t *slot;  /* position + 1 in the caller's array; 0 empty */
    size_t size;     /* a power of 2, more than twice the entries */
    size_t n;        /* entries */
    const char *last; /* the key sy_key_index_find_again found last, by
                         its address, and its position */
    size_t last_at;
} sy_key_index;

/* The key of the caller's entry i (arg: the caller's array). */
typedef const char *(*sy_key_of)(const void *arg, size_t i);

/* The position of `key` in the caller's array, or -1. */
ptrdiff_t sy_key_index_find(const sy_key_index *x, const char *key, sy_key_of key_of,
                            const void *arg);

/* The same, first comparing `key`'s address with the last key this
 * found: a turn's claims of one pool or tenant name the same string
 * (engine/claims.h), found again without a hash.  Only for strings that
 * stay where they are until the index is cleared: a key freed and
 * another allocated at its address would be taken for it. */
ptrdiff_t sy_key_index_find_again(sy_key_index *x, const char *key, sy_key_of key_of,
                                  const void *arg);

/* Entry n (the caller's newest, at position x->n) is in the array now. */
void sy_key_index_add(sy_key_index *x, sy_key_of key_of, const void *arg);

/* Every entry forgotten (the caller emptied its array); the table kept. */
void sy_key_index_clear(sy_key_index *x);

void sy_key_index_free(sy_key_index *x);

#endif
