/* A log event as text, journal or JSON lines. */
#include "base/log_line.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const level_names[] = {"error", "warn", "info", "debug"};
/* syslog(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const int priorities[] = {3, 4, 6, 7};

static unsigned level_index(sy_log_level level)
{
    return (unsigned)level < 4u ? (unsigned)level : 3u;
}

/* A bounded writer: once full, it stops, remembering where it stopped. */
typedef struct {
    char *buf;
    size_t len, at;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    if (o->at + n >= o->len)
        n = o->at + 1 < o->len ? o->len - 1 - o->at : 0;
    memcpy(o->buf + o->at, s, n);
    o->at += n;
    o->buf[o->at] = '\0';
}

static void puts_(out_t *o, const char *s) { put(o, s, strlen(s)); }

static void putf(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(out_t *o, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0             ? 4 : 0;
    if (need == 0 || need > n || (need == 2 && c < 0xC2) || (need == 4 && c > 0xF4))
        return 0;
    for (size_t i = 1; i < need; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    /* Overlong three- and four-byte forms, surrogates, beyond U+10FFFF. */
    if (need == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F)))
        return 0;
    if (need == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F)))
        return 0;
    return need;
}

/* A JSON string of s; `room` bytes are kept free for what closes the
 * line, and a piece is written whole or not at all, so the line stays
 * valid when it is cut.  Bytes that are not UTF-8 become U+FFFD: a plugin
 * may log anything. */
static void put_json_string(out_t *o, const char *s, size_t room)
{
    put(o, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s);
    while (left) {
        char esc[8];
        const char *piece = esc;
        size_t n = 1, take = 1;
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, n = 2;
        } else if (c == '\n') {
            memcpy(esc, "\\n", 2), n = 2;
        } else if (c == '\t') {
            memcpy(esc, "\\t", 2), n = 2;
        } else if (c < 0x20 || c == 0x7F) {
            snprintf(esc, sizeof esc, "\\u%04x", c), n = 6;
        } else if (c < 0x80) {
            esc[0] = (char)c;
        } else if ((take = utf8_len(p, left)) != 0) {
            piece = (const char *)p, n = take;
        } else {
            piece = "\xEF\xBF\xBD", n = 3, take = 1;
        }
        if (o->at + n + room + 1 >= o->len)
            break;
        put(o, piece, n);
        p += take;
        left -= take;
    }
    put(o, "\"", 1);
}

static void put_time(out_t *o, int64_t now_ms)
{
    time_t secs = (time_t)(now_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    putf(o, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(now_ms % 1000));
}

/* Fits the closing of any JSON line: the fields after the message. */
#define JSON_TAIL 200

static void json_line(out_t *o, int64_t now_ms, unsigned li, const char *who,
                      const sy_log_fields *f, const char *msg)
{
    puts_(o, "{\"time\":\"");
    put_time(o, now_ms);
    putf(o, "\",\"level\":\"%s\"", level_names[li]);
    if (who) {
        puts_(o, ",\"source\":");
        put_json_string(o, who, JSON_TAIL + 64);
    }
    puts_(o, ",\"message\":");
    put_json_string(o, msg, JSON_TAIL);
    if (f && f->instance) {
        puts_(o, ",\"instance\":");
        put_json_string(o, f->instance, 80);
    }
    if (f && f->run)
        putf(o, ",\"run\":%" PRId64, f->run);
    if (f && f->task) {
        puts_(o, ",\"task\":");
        put_json_string(o, f->task, 30);
    }
    if (f && f->attempt)
        putf(o, ",\"attempt\":%" PRIu32, f->attempt);
    puts_(o, "}\n");
}

/* Each line of the message gets the priority: the journal reads every
 * line as an entry of its own. */
static void journal_lines(out_t *o, unsigned li, const char *who, const char *msg)
{
    const char *p = msg;
    do {
        size_t n = strcspn(p, "\n");
        putf(o, "<%d>", priorities[li]);
        if (who) {
            puts_(o, who);
            puts_(o, ": ");
        }
        put(o, p, n);
        put(o, "\n", 1);
        p += n;
        if (*p == '\n')
            p++;
    } while (*p);
}

size_t sy_log_line(char *buf, size_t len, sy_log_format format, int64_t now_ms,
                   sy_log_level level, const char *who, const sy_log_fields *f,
                   const char *msg)
{
    if (len == 0)
        return 0;
    out_t o = {buf, len, 0};
    buf[0] = '\0';
    unsigned li = level_index(level);
    /* Room kept for the newline, so that a cut line still ends one. */
    if (format == SY_LOG_FORMAT_JSON) {
        json_line(&o, now_ms, li, who, f, msg);
    } else if (format == SY_LOG_FORMAT_JOURNAL) {
        journal_lines(&o, li, who, msg);
    } else {
        put_time(&o, now_ms);
        putf(&o, " %-5s ", level_names[li]);
        if (who) {
            puts_(&o, who);
            puts_(&o, ": ");
        }
        puts_(&o, msg);
        put(&o, "\n", 1);
    }
    if (o.at > 0 && buf[o.at - 1] != '\n') {
        /* Cut: the last byte gives way to the newline. */
        buf[o.at - 1] = '\n';
    }
    return o.at;
}

bool sy_log_journal_stream_is(const char *v, unsigned long long dev, unsigned long long ino)
{
    if (!v)
        return false;
    char *end;
    unsigned long long d = strtoull(v, &end, 10);
    if (end == v || *end != ':')
        return false;
    const char *i = end + 1;
    unsigned long long n = strtoull(i, &end, 10);
    return end != i && *end == '\0' && d == dev && n == ino;
}

bool sy_log_format_parse(const char *word, sy_log_format *out)
{
    static const char *const names[] = {"text", "journal", "json"};
    for (unsigned i = 0; i < 3; i++)
        if (word && strcmp(word, names[i]) == 0) {
            *out = (sy_log_format)i;
            return true;
        }
    return false;
}
