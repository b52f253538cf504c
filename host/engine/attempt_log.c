/* Attempt logs: bounded on the plugin's thread, recorded on the loop. */
#include "engine/attempt_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "engine/fenced.h"

/* The length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t need = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2
                : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!need || need > n || (need == 2 && p[0] < 0xC2) || (need == 4 && p[0] > 0xF4))
        return 0;
    for (size_t i = 1; i < need; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    /* Overlong three- and four-byte forms, surrogates, past U+10FFFF. */
    if (need == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F)))
        return 0;
    if (need == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] > 0x8F)))
        return 0;
    return need;
}

/* Appends `len` bytes of `s` to `out` at *o as UTF-8 text without NULs:
 * the stores keep text, and a PostgreSQL TEXT refuses both. */
static void append_clean(char *out, size_t *o, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t k = p[i] ? utf8_len(p + i, len - i) : 0;
        if (!k) {
            out[(*o)++] = '?';
            i++;
            continue;
        }
        memcpy(out + *o, p + i, k);
        *o += k;
        i += k;
    }
}

void sy_attempt_log_keep(sy_attempt_log *out, const char *text, size_t len,
                         size_t dropped, size_t cut, size_t limit)
{
    memset(out, 0, sizeof *out);
    if (!text || (!len && !dropped))
        return;
    if (cut > len)
        cut = len;
    /* h bytes of the start and t of the end are kept; the plugin's own
     * cut stays a cut, never inside what is kept on either side. */
    size_t h, t;
    if (!dropped) {
        h = len > limit ? limit / 2 : len;
        t = len > limit ? limit - h : 0;
    } else {
        size_t hmax = cut < limit / 2 ? cut : limit / 2;
        t = len - cut < limit - hmax ? len - cut : limit - hmax;
        h = cut < limit - t ? cut : limit - t;
    }
    size_t total = dropped + (len - h - t);
    char marker[64] = "";
    if (total)
        snprintf(marker, sizeof marker, SY_LOG_MARKER_FORMAT, (long long)total);
    /* At the very start the marker needs no line before it. */
    const char *m = h || !total ? marker : marker + 1;
    size_t mlen = strlen(m);
    char *buf = malloc(h + mlen + t + 1);
    if (!buf)
        return;
    size_t o = 0;
    append_clean(buf, &o, text, h);
    memcpy(buf + o, m, mlen);
    o += mlen;
    append_clean(buf, &o, text + len - t, t);
    buf[o] = '\0';
    out->text = buf;
    out->size = (int64_t)(len + dropped);
    out->dropped = (int64_t)total;
}

void sy_attempt_log_clear(sy_attempt_log *log)
{
    free(log->text);
    memset(log, 0, sizeof *log);
}

void sy_attempt_log_write(sy_attempt *a)
{
    static const char *const streams[2] = {"stdout", "stderr"};
    sy_live_run *r = a->run;
    sy_engine *e = r->e;
    for (int i = 0; i < 2; i++) {
        const sy_attempt_log *l = &a->log[i];
        if (!l->text || r->lost || r->fenced)
            continue;
        int64_t now = e->now();
        if (sy_fenced_lease_past(r, now)) {
            e->lease_past = true;
            return;
        }
        sy_log_record rec = {
            .idx = (uint32_t)a->idx,
            .attempt = a->number,
            .stream = streams[i],
            .text = l->text,
            .size = l->size,
            .dropped = l->dropped,
            .at = now,
        };
        int rc = sy_store_add_log(e->o.store, r->id, &r->fence,
                                  r->t[a->idx].token_stored, &rec);
        if (rc != SY_OK && !sy_fenced_refused(r, rc)) {
            sy_log_fields f = {.run = r->id, .task = a->task.ns, .attempt = a->number};
            sy_logf(SY_LOG_WARN, "store", &f, "run %lld: cannot record the %s of %s attempt %u: %s",
                    (long long)r->id, streams[i], r->wf->tasks[a->idx].id, a->number,
                    sy_store_errmsg(e->o.store));
        }
    }
}
