/*
 * parse.c -- reading what the Slurm commands print.
 *
 * Every function here is pure (no instance, no I/O) so that the fuzz
 * target tests/fuzz/slurm.c feeds it any bytes: the commands' answers come
 * from another program, over which the plugin has no say (another Slurm
 * version, a site's wrapper script, a truncated pipe), and a line that is
 * not what it expects is skipped, never trusted half.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Digits only, 1 to max_len of them: 0 with *v, or -1. */
static int digits(const char *s, size_t len, size_t max_len, long *v)
{
    if (len == 0 || len > max_len)
        return -1;
    long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        n = n * 10 + (s[i] - '0');
    }
    *v = n;
    return 0;
}

int sy_slurm_parse_id(const char *s, size_t len, long *id)
{
    /* Only digits: "123_4" (an array task) or "123+0" (a heterogeneous
     * component) is not one of our jobs. */
    long v;
    if (digits(s, len, 18, &v) != 0 || v <= 0)
        return -1;
    *id = v;
    return 0;
}

/* A number from 0 to max, of at most 4 digits: 0, or -1. */
static int uint_of(const char *s, size_t len, long max, long *v)
{
    long n;
    if (digits(s, len, 4, &n) != 0 || n > max)
        return -1;
    *v = n;
    return 0;
}

/* Copies a state word (upper case letters and '_', as Slurm names them)
 * from [s, s + len) to out; -1 when it is empty, too long or not a word. */
static int state_word(const char *s, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    while (n < len && (isupper((unsigned char)s[n]) || s[n] == '_'))
        n++;
    /* sacct says "CANCELLED by 0": the word ends at the blank. */
    if (n == 0 || n >= cap || (n < len && s[n] != ' '))
        return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

int sy_slurm_parse_squeue_line(char *line, sy_slurm_squeue_row *row)
{
    /* "ID|NAME|STATE|REASON|COMMENT": the comment last, since only it
     * could hold a '|' (ours never do: settings.c replaces them). */
    char *f[5];
    char *s = line;
    for (int i = 0; i < 5; i++) {
        f[i] = s;
        if (i == 4)
            break;
        s = strchr(s, '|');
        if (!s)
            return -1;
        *s++ = '\0';
    }
    if (sy_slurm_parse_id(f[0], strlen(f[0]), &row->id) != 0 ||
        state_word(f[2], strlen(f[2]), row->state, sizeof row->state) != 0)
        return -1;
    row->name = f[1];
    row->reason = f[3];
    row->comment = f[4];
    return 0;
}

int sy_slurm_parse_sacct_line(const char *line, size_t len,
                              sy_slurm_acct_row *row)
{
    /* "ID|STATE|EXIT:SIGNAL" (sacct -n -P -X -o JobIDRaw,State,ExitCode). */
    const char *b1 = memchr(line, '|', len);
    if (!b1)
        return -1;
    const char *rest = b1 + 1;
    size_t rlen = len - (size_t)(rest - line);
    const char *b2 = memchr(rest, '|', rlen);
    if (!b2)
        return -1;
    if (sy_slurm_parse_id(line, (size_t)(b1 - line), &row->id) != 0 ||
        state_word(rest, (size_t)(b2 - rest), row->state,
                   sizeof row->state) != 0)
        return -1;
    const char *ec = b2 + 1;
    size_t elen = len - (size_t)(ec - line);
    while (elen > 0 && (ec[elen - 1] == '\r' || ec[elen - 1] == ' '))
        elen--;
    const char *colon = memchr(ec, ':', elen);
    long code, sig;
    row->exit_code = -1;
    row->signal = 0;
    /* An exit code that is not "N:S" leaves the state to say it all. */
    if (colon && uint_of(ec, (size_t)(colon - ec), 255, &code) == 0 &&
        uint_of(colon + 1, elen - (size_t)(colon + 1 - ec), 128, &sig) == 0) {
        row->exit_code = (int)code;
        row->signal = (int)sig;
    }
    return 0;
}

int sy_slurm_parse_job_state(const char *out, char *state, size_t cap)
{
    /* `scontrol -o show job ID`: "JobId=1 JobName=x ... JobState=RUNNING
     * Reason=None ...", the key at a word's start. */
    for (const char *p = out; (p = strstr(p, "JobState=")) != NULL; p += 9) {
        if (p != out && p[-1] != ' ' && p[-1] != '\n')
            continue;
        const char *v = p + 9;
        return state_word(v, strcspn(v, " \n"), state, cap);
    }
    return -1;
}

int sy_slurm_parse_sbatch(const char *out, long *id)
{
    /* `sbatch --parsable`: "ID" or "ID;CLUSTER", then a newline. */
    size_t n = strcspn(out, ";\n");
    const char *end = out + n;
    if (*end == ';') {
        size_t c = strcspn(end + 1, "\n");
        if (c == 0)
            return -1;
        end += 1 + c;
    }
    if (*end == '\n')
        end++;
    if (*end != '\0')
        return -1;
    return sy_slurm_parse_id(out, n, id);
}
