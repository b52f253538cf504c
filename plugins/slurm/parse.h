/*
 * parse.h -- what the Slurm commands print, read without trusting it
 * (parse.c).  No function here allocates or keeps a pointer; any thread.
 */
#ifndef SY_SLURM_PARSE_H
#define SY_SLURM_PARSE_H

#include <stddef.h>

/* A job id: digits only, 1 to 18 of them, not 0.  0, or -1 when it is
 * not one. */
int sy_slurm_parse_id(const char *s, size_t len, long *id);

/* One line of the query, squeue -o "%i|%j|%T|%r|%k". */
typedef struct sy_slurm_squeue_row {
    long id;
    char state[32];        /* %T, a word such as RUNNING */
    const char *name;      /* %j, into the line */
    const char *reason;    /* %r, into the line */
    const char *comment;   /* %k, into the line (the rest of it) */
} sy_slurm_squeue_row;

/* Splits `line` (one line, no newline; written: its bars become NULs)
 * into row.  0, or -1 when it is not such a line (row then unset). */
int sy_slurm_parse_squeue_line(char *line, sy_slurm_squeue_row *row);

/* One line of sacct -n -P -X -o JobIDRaw,State,ExitCode. */
typedef struct sy_slurm_acct_row {
    long id;
    char state[32];        /* the state's first word ("CANCELLED by 0") */
    int exit_code;         /* 0-255, or -1 when not given */
    int signal;            /* the signal that ended it, or 0 */
} sy_slurm_acct_row;

/* Reads [line, line + len) into row.  0, or -1 when it is not such a
 * line. */
int sy_slurm_parse_sacct_line(const char *line, size_t len,
                              sy_slurm_acct_row *row);

/* The JobState= word of `scontrol -o show job` output (NUL-terminated)
 * into state (cap bytes).  0, or -1 when there is none. */
int sy_slurm_parse_job_state(const char *out, char *state, size_t cap);

/* The job id `sbatch --parsable` printed ("ID" or "ID;CLUSTER", one
 * line).  0, or -1 when the output is anything else. */
int sy_slurm_parse_sbatch(const char *out, long *id);

#endif /* SY_SLURM_PARSE_H */
