/*
 * spawnfloor: the least a program can do to run the commands benchmark's
 * 2,000 /bin/true two at a time: two threads, each starting 1,000 in a row
 * with posix_spawn and waiting for each with waitpid; no graph, no store,
 * no output captured.  Prints the seconds it took.  A floor to read the
 * other rows against, not a peer: it knows nothing of dependencies.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static void *starter(void *arg)
{
    (void)arg;
    char *argv[] = {"/bin/true", NULL};
    for (int i = 0; i < 1000; i++) {
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

int main(void)
{
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
