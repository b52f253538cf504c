/*
 * spawnfloor: the least a program can do to run the commands benchmark's
 * 2,000 /bin/true two at a time: two threads, each starting 1,000 in a row
 * with posix_spawn and waiting for each with waitpid; no graph, no store,
 * no output captured.  Prints the seconds it took.  A floor to read the
 * other rows against, not a peer: it knows nothing of dependencies.
 *
 * `spawnfloor sdk` starts each with the SDK's sy_spawn_run() instead, as
 * the thread plugin does for `output = "none"`: stdin and stderr on pipes,
 * a process group of its own, a pidfd to wait on.  The difference between
 * the two is what capturing and supervising a command costs, apart from
 * any graph or store.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <switchyard/spawn.h>

extern char **environ;

static bool use_sdk;

static void sdk_one(const char *const *argv)
{
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.discard_stdout = true;
    sy_spawn_result r;
    char err[256];
    if (sy_spawn_run(&o, &r, err, sizeof err) != 0) {
        fprintf(stderr, "spawnfloor: %s\n", err);
        exit(1);
    }
    bool ok = r.exited && r.exit_code == 0;
    sy_spawn_result_free(&r);
    if (!ok) {
        fputs("spawnfloor: /bin/true did not succeed\n", stderr);
        exit(1);
    }
}

static void *starter(void *arg)
{
    (void)arg;
    char *argv[] = {"/bin/true", NULL};
    for (int i = 0; i < 1000; i++) {
        if (use_sdk) {
            sdk_one((const char *const *)argv);
            continue;
        }
        pid_t pid;
        int status;
        if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 ||
            waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fputs("spawnfloor: /bin/true did not run\n", stderr);
            exit(1);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    use_sdk = argc > 1 && strcmp(argv[1], "sdk") == 0;
    if (argc > 2 || (argc == 2 && !use_sdk)) {
        fputs("usage: spawnfloor [sdk]\n", stderr);
        return 2;
    }
    struct timespec a, b;
    pthread_t t[2];
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, starter, NULL) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
