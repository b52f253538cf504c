/*
 * slot_counts.c -- fuzz target: a run's slot counts as the SQLite store
 * reads them back (sy_sqlite_counts_next, store/sqlite/text.c), a row
 * that may have been damaged on disk.
 *
 * Input: the row's text.  Properties: reading stops at the text's end
 * (ASan sees any read past it), a count read is positive; an object read
 * to its end, written again pair by pair (sy_sqlite_counts_put), reads
 * back as the same pairs.
 */
#include "fuzz.h"

#include <string.h>

#include "store/sqlite/internal.h"

#define MAX_PAIRS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = sy_fuzz_str(data, size);
    sy_sqlite_text key = {0}, again = {0}, out = {0};
    char *keys[MAX_PAIRS];
    int64_t counts[MAX_PAIRS];
    size_t n = 0;
    const char *p = text;
    int more;
    int64_t v = 0;
    while ((more = sy_sqlite_counts_next(&p, &key, &v)) == 1 && n < MAX_PAIRS) {
        SY_FUZZ_CHECK(v >= 0, "count %lld", (long long)v);
        SY_FUZZ_CHECK(p > text && p <= text + strlen(text), "read past the text");
        keys[n] = strdup(key.p);
        counts[n++] = v;
    }
    if (more == 0) {
        bool ok = sy_sqlite_text_put(&out, "{", 1);
        for (size_t i = 0; i < n && ok; i++)
            ok = sy_sqlite_counts_put(&out, keys[i], counts[i]);
        ok = ok && sy_sqlite_text_put(&out, "}", 1);
        SY_FUZZ_CHECK(ok, "out of memory writing %zu pairs", n);
        const char *q = out.p;
        for (size_t i = 0; i < n; i++) {
            int r = sy_sqlite_counts_next(&q, &again, &v);
            SY_FUZZ_CHECK(r == 1 && strcmp(again.p, keys[i]) == 0 && v == counts[i],
                          "pair %zu of \"%s\" read back from \"%s\" as %d", i, text, out.p, r);
        }
        SY_FUZZ_CHECK(sy_sqlite_counts_next(&q, &again, &v) == 0, "\"%s\" does not end",
                      out.p);
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(key.p);
    free(again.p);
    free(out.p);
    free(text);
    return 0;
}
