/*
 * switchyard/spawn.h -- run one command to its end.
 *
 * For executor plugins that run programs (the thread plugin's command tasks
 * and isolated functions, the gpu plugin's tasks).  Declarations only: the
 * code is in libswitchyard-sdk.a (sdk/spawn_start.c starts the child,
 * sdk/spawn_io.c moves its bytes, sdk/spawn_run.c runs the loop); link it
 * with $(pkg-config --libs switchyard-sdk) and -pthread.  This header
 * needs nothing but the C library.
 *
 * What it does, in order:
 *
 *   - Starts the program without a shell and without a fork of a large
 *     threaded host: on Linux with glibc by clone(CLONE_VM | CLONE_VFORK) on
 *     a buffer of the caller's stack (the way posix_spawn works inside,
 *     without its per-call stack mapping; see sdk/spawn_start.c), elsewhere,
 *     or in a library built with -DSY_SPAWN_NO_CLONE, or where clone() is
 *     refused, by posix_spawn(). Either way the child is in a new process
 *     group, has an empty signal mask, every signal at its default action,
 *     every descriptor above 2 closed (with posix_spawn, glibc 2.34+; below
 *     that, descriptors without FD_CLOEXEC leak), the working directory `cwd`
 *     and the caller's environment plus `env`, and inherits the calling
 *     thread's CPU affinity.
 *   - On the clone() path the program gets SIGKILL when the thread that
 *     started it ends, as when the host is killed (PR_SET_PDEATHSIG; see
 *     sy_spawn_opts.on_process for what covers the processes it forks,
 *     which do not inherit it).
 *   - What fits of `input` is written to the stdin pipe before the start
 *     (most inputs fit: no poll round, no SIGPIPE possible).
 *   - One poll() loop feeds the rest of `input` to stdin (then closes it),
 *     captures stdout up to max_output_bytes, keeps the last
 *     SY_SPAWN_STDERR_TAIL bytes of stderr, and watches the timeout, the
 *     cancel descriptor and the child's exit (a pidfd; where the kernel has
 *     none, a tick that grows from 1 ms to 10 ms).
 *   - Timeout, cancel, or stdout beyond max_output_bytes: SIGTERM to the
 *     whole process group, then SIGKILL to it when the leader has exited or
 *     kill_grace_ms has passed, whichever comes first.
 *   - When the leader exits, whatever it left in its process group is sent
 *     SIGKILL (a task's processes end with it; a program that must outlive
 *     its task leaves the group with setsid()). The leader is reaped only
 *     after that, so its pid, which names the group, cannot have been reused
 *     by then.  Then it is always reaped: no zombie is left.
 *
 * Ownership: sy_spawn_run() keeps no pointer from `o` beyond the call; what
 * it puts into the result is the caller's, freed with sy_spawn_result_free().
 * The cancel descriptor stays the caller's.
 *
 * Threading: sy_spawn_run() blocks the calling thread until the child has
 * been reaped, and needs about 40 KiB of its stack (on Linux the child runs
 * on 32 KiB of it until exec). Any number of threads may run it at once; its
 * only global state is two flags remembering that the kernel has no
 * pidfd_open and that clone() was refused.  It reads `environ` (do not
 * setenv() concurrently), blocks every signal in the calling thread for the
 * few microseconds of the start, blocks SIGPIPE in it while it feeds input
 * that did not fit in the pipe (so a child that exits without reading its
 * input cannot kill the host), and waits for its own child only
 * (waitid/waitpid on that pid), so it coexists with libuv.  The host must not
 * set SIGCHLD to SIG_IGN (children would vanish unreaped and their exit
 * status with them; sy_spawn_run then reports status -1).
 */
#ifndef SWITCHYARD_SPAWN_H
#define SWITCHYARD_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How much of the end of stderr is kept. */
#define SY_SPAWN_STDERR_TAIL (64 * 1024)
/* How much of the start of stderr is kept besides, when the tail does not
 * hold it all. */
#define SY_SPAWN_STDERR_HEAD (32 * 1024)
/* The stdout limit when max_output_bytes is 0. */
#define SY_SPAWN_DEFAULT_MAX_OUTPUT ((size_t)16 * 1024 * 1024)
/* The grace between SIGTERM and SIGKILL that sy_spawn_opts_init sets. */
#define SY_SPAWN_DEFAULT_KILL_GRACE_MS 5000

/* What to run.  Owned by the caller; read during sy_spawn_run() only. */
typedef struct sy_spawn_opts {
    /* Required.  NULL-terminated; argv[0] is the program: searched in the
     * host's PATH when it has no '/' (as execvp does; a PATH in `env` is
     * not used for the search), else a path (a relative one is relative to
     * cwd). */
    const char *const *argv;
    /* "NAME=value" strings added to the host's environment, each replacing
     * a variable of the same name (a later one wins over an earlier one);
     * a bare "NAME" removes the variable.  NULL-terminated, or NULL for
     * none. */
    const char *const *env;
    /* The child's working directory, or NULL for the host's. */
    const char *cwd;
    /* Fed to stdin, which is then closed; NULL (or input_len 0) for an
     * empty stdin. */
    const char *input;
    size_t input_len;
    /* Stdout beyond this many bytes fails the run (output_too_large) and
     * terminates the group; 0 means SY_SPAWN_DEFAULT_MAX_OUTPUT. */
    size_t max_output_bytes;
    /* True: stdout goes to /dev/null (never too large, out is ""). */
    bool discard_stdout;
    /* True: stdout is a log, not a result: its first max_output_bytes are
     * kept in out, the rest is read and counted in out_dropped, and the
     * run never ends for it (output_too_large stays false). */
    bool stdout_as_log;
    /* Terminate the group after this long; 0 for no limit. */
    int64_t timeout_ms;
    /* Between SIGTERM and SIGKILL; 0 sends SIGKILL at once. */
    int64_t kill_grace_ms;
    /* Readable means "cancel" (an eventfd or a pipe the caller writes to);
     * -1 for none.  Never read: it stays readable, and the caller owns and
     * closes it. */
    int cancel_fd;
    /* Called once, on the calling thread, as soon as the child runs the
     * program (it has exec'd) and before the wait for it begins; never
     * when the start failed.  NULL for none.  For work the caller means to
     * do while the child runs: the thread plugin reports the task it ran
     * before from here, so that the host's thread wakes after this exec
     * rather than beside it. */
    void (*on_start)(void *arg);
    void *on_start_arg;
    /* Called once, on the calling thread, right after the start (the child
     * has exec'd) and before on_start, with the child's pid (which is also
     * its process group's id) and its start time (switchyard/process.h; 0
     * when unknown).  For a plugin to record the group with its host
     * (sy_host_api.attempt_process) before the run goes on.  A non-zero
     * return kills the whole group at once (SIGKILL, no grace, no more
     * input); the run then ends as usual, killed, with the value in
     * r->process_refused.  NULL for none. */
    int (*on_process)(void *arg, pid_t pgid, uint64_t start_time);
    void *on_process_arg;
    /* Readable means "kill the group now": SIGKILL to it at once, no
     * grace, no more input, as a non-zero on_process does (an eventfd or
     * a pipe); -1 for none.  For a refusal that comes after the start: a
     * record asked from on_process without waiting for it
     * (attempt_process_async).  Never read; the caller owns it.  The
     * result says nothing of it: the caller knows why it wrote. */
    int kill_fd;
} sy_spawn_opts;

/* How the run ended.  Filled by sy_spawn_run(); free with
 * sy_spawn_result_free(). */
typedef struct sy_spawn_result {
    pid_t pid;               /* the child (reaped) */
    int status;              /* raw wait status; -1 when unknown */
    bool exited;             /* ended by exit(): exit_code is valid */
    int exit_code;
    bool signaled;           /* ended by a signal: signal_no is valid */
    int signal_no;
    bool timed_out;          /* we terminated it: timeout_ms passed */
    bool cancelled;          /* we terminated it: cancel_fd became readable */
    bool output_too_large;   /* we terminated it: stdout passed the limit */
    char *out;               /* malloc'd stdout, NUL-terminated (never NULL
                                after success; truncated at the limit) */
    size_t out_len;
    size_t out_dropped;      /* stdout_as_log: bytes after `out`, not kept */
    char *err;               /* malloc'd last bytes of stderr, NUL-terminated
                                (never NULL after success) */
    size_t err_len;
    size_t err_dropped;      /* stderr bytes before `err`, not in it */
    char *err_head;          /* malloc'd first bytes of those err_dropped,
                                NUL-terminated: at most
                                SY_SPAWN_STDERR_HEAD; NULL when none were
                                dropped.  Bytes between it and `err`:
                                err_dropped - err_head_len */
    size_t err_head_len;
    int process_refused;     /* what on_process returned when non-zero: the
                                group was killed right after its start */
} sy_spawn_result;

/* Fills `o` with the defaults for running `argv` (kept, not copied): no
 * env, no cwd, no input, 16 MiB of stdout, no timeout, 5 s of grace, no
 * cancel or kill descriptor. */
void sy_spawn_opts_init(sy_spawn_opts *o, const char *const *argv);

/* Frees what sy_spawn_run() put into `r` and empties it; safe to call
 * twice, and on a result sy_spawn_run() left empty after an error. */
void sy_spawn_result_free(sy_spawn_result *r);

/* A thread-safe name for a signal ("Segmentation fault"); static text,
 * "unknown signal" for a number that names none. */
const char *sy_spawn_signal_name(int sig);

/* Writes how the run ended into the caller's buf (truncated to len):
 * "exited with status 3", "killed by signal 9 (Killed)". */
void sy_spawn_describe(const sy_spawn_result *r, char *buf, size_t len);

/* Runs `o` to its end, blocking the calling thread.  Returns 0 when the
 * child was started and has been reaped, whatever its end (see r:
 * exited/exit_code, signaled/signal_no, timed_out, cancelled,
 * output_too_large); free r with sy_spawn_result_free().  Returns -1 with
 * one line in err (the caller's buffer; may be NULL) when it could not
 * start (no such program, a bad cwd, no memory for a pipe) or ran out of
 * memory capturing output (the child was still terminated and reaped); r
 * then holds nothing to free.  After -1, errno is the system's reason the
 * child could not start (ENOENT, EACCES, EAGAIN when the process table is
 * full, EMFILE or ENFILE when descriptors ran out, ENOMEM, ...), or 0 when
 * it had started and run: a caller may try again later after EAGAIN,
 * EMFILE, ENFILE or ENOMEM without the task having run. */
int sy_spawn_run(const sy_spawn_opts *o, sy_spawn_result *r, char *err,
                 size_t err_len);

/* True while runs start their child with clone(); false in a library built
 * without that path, and for the rest of the process once the kernel (or
 * an emulator such as valgrind, or a seccomp filter) refused clone(), after
 * which every run uses posix_spawn().  For tests and diagnostics. */
bool sy_spawn_uses_clone(void);

#endif /* SWITCHYARD_SPAWN_H */
