/*
 * spawn_internal.h -- what the three parts of sy_spawn_run() share:
 * spawn_start.c starts the child, spawn_io.c moves its bytes, spawn_run.c
 * runs the loop.  Not installed; nothing here is API.
 *
 * Every function works on one run's state, owned by the thread inside
 * sy_spawn_run(); none is thread-safe on the same state.  Functions that
 * take (err, err_len) write one line there; those returning an int give 0
 * or an errno value unless said otherwise.
 */
#ifndef SY_SPAWN_INTERNAL_H
#define SY_SPAWN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <switchyard/spawn.h>

/* The state of one run's loop. */
typedef struct sy_spawn__run {
    const sy_spawn_opts *o;  /* the caller's; read only */
    sy_spawn_result *r;      /* the caller's; filled here */
    pid_t pid;
    int in_fd, out_fd, err_fd, pidfd, cancel_fd; /* -1 when closed; owned
                                                    but cancel_fd */
    size_t in_off, out_cap, max_out;
    char *ring;              /* owned; SY_SPAWN_STDERR_TAIL bytes */
    size_t ring_start, ring_len;
    char *head;              /* owned: the first SY_SPAWN_STDERR_HEAD bytes
                                of stderr, made once the ring is full */
    size_t head_len;
    int64_t deadline;        /* 0: no timeout */
    int64_t kill_at;         /* when SIGKILL follows SIGTERM */
    int tick_ms;             /* without a pidfd: 1, 2, 4, 8, 10, 10, ... */
    bool terminating, killed, exited, reaped_elsewhere, oom;
} sy_spawn__run;

/* --- spawn_start.c ------------------------------------------------------- */

/* snprintf into err when err is not NULL and err_len not 0. */
void sy_spawn__err(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Closes *fd when open and sets it to -1. */
void sy_spawn__close(int *fd);
/* A close-on-exec pipe with both ends above 2; 0 or -1 with errno. */
int sy_spawn__pipe(int p[2]);
/* Closes every end still open. */
void sy_spawn__close_pipes(int pipes[3][2]);
/* O_NONBLOCK on a fresh descriptor of ours (fd < 0: nothing). */
void sy_spawn__nonblock(int fd);
/* argv, cwd: 0, or -1 with err. */
int sy_spawn__check_opts(const sy_spawn_opts *o, char *err, size_t err_len);
/* Starts the child on pipes[0..2] (stdin, stdout, stderr) and closes the
 * child's ends; *pid gets it, *start_time its start time in clock ticks
 * when the clock around the clone() said it for sure (0: read /proc). */
int sy_spawn__start(const sy_spawn_opts *o, int pipes[3][2], pid_t *pid,
                    uint64_t *start_time);

/* --- spawn_io.c ---------------------------------------------------------- */

/* CLOCK_MONOTONIC in milliseconds. */
int64_t sy_spawn__now_ms(void);
/* `sig` to the child's whole process group. */
void sy_spawn__signal_group(sy_spawn__run *s, int sig);
/* SIGTERM to the group now, SIGKILL at kill_at (or SIGKILL now without a
 * grace); stdin is no longer fed.  Once per run. */
void sy_spawn__terminate(sy_spawn__run *s);
/* Writes what stdin takes without blocking; closes it when done. */
void sy_spawn__feed(sy_spawn__run *s);
/* Room for more stdout; false when out of memory. */
bool sy_spawn__grow_out(sy_spawn__run *s);
/* Reads what stdout and stderr hold without blocking. */
void sy_spawn__read_out(sy_spawn__run *s);
void sy_spawn__read_err(sy_spawn__run *s);
/* The stderr tail into r->err and, when some was dropped, its head into
 * r->err_head; false when out of memory. */
bool sy_spawn__collect_err(sy_spawn__run *s);

#endif
