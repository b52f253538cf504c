/*
 * slurm.c -- fuzz target: the slurm plugin's readers of what the Slurm
 * commands print (plugins/slurm/parse.c): squeue's query lines, sacct's
 * accounting lines, scontrol's JobState and sbatch's job id.  The commands
 * are another program's output (another Slurm version, a site's wrapper),
 * so any bytes must read as a row or be refused, never half-trusted.
 *
 * Input: the whole input through every reader, line by line, and as one
 * text.  Properties: an accepted id is positive and all digits in the
 * text; an accepted state is one word of capitals and '_'; an exit code is
 * -1 or 0-255 and a signal 0-128; squeue's fields lie inside the line.
 */
#include "fuzz.h"

#include <string.h>

#include "parse.h"

static void check_state(const char *s)
{
    SY_FUZZ_CHECK(s[0] != '\0', "an empty state accepted");
    for (const char *c = s; *c; c++)
        SY_FUZZ_CHECK((*c >= 'A' && *c <= 'Z') || *c == '_',
                      "state \"%s\" is not a word", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = sy_fuzz_str(data, size);
    if (!text)
        return 0;
    size_t tlen = strlen(text);
    for (size_t at = 0; at <= tlen;) {
        size_t len = strcspn(text + at, "\n");
        char *line = strndup(text + at, len);
        SY_FUZZ_CHECK(line != NULL, "out of memory");
        sy_slurm_squeue_row q;
        char *end = line + len;
        if (sy_slurm_parse_squeue_line(line, &q) == 0) {
            SY_FUZZ_CHECK(q.id > 0, "squeue id %ld", q.id);
            check_state(q.state);
            SY_FUZZ_CHECK(q.name > line && q.name <= end &&
                          q.reason > q.name && q.reason <= end &&
                          q.comment > q.reason && q.comment <= end,
                          "a field outside its line");
        }
        sy_slurm_acct_row a;
        if (sy_slurm_parse_sacct_line(text + at, len, &a) == 0) {
            SY_FUZZ_CHECK(a.id > 0, "sacct id %ld", a.id);
            check_state(a.state);
            SY_FUZZ_CHECK(a.exit_code >= -1 && a.exit_code <= 255 &&
                          a.signal >= 0 && a.signal <= 128,
                          "exit %d signal %d", a.exit_code, a.signal);
        }
        long id;
        if (sy_slurm_parse_id(text + at, len, &id) == 0)
            SY_FUZZ_CHECK(id > 0 && strspn(text + at, "0123456789") == len,
                          "id %ld from a non-number", id);
        free(line);
        at += len + 1;
    }
    char state[32];
    if (sy_slurm_parse_job_state(text, state, sizeof state) == 0)
        check_state(state);
    long id;
    if (sy_slurm_parse_sbatch(text, &id) == 0)
        SY_FUZZ_CHECK(id > 0 && strspn(text, "0123456789") > 0,
                      "sbatch id %ld", id);
    free(text);
    return 0;
}
