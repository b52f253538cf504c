/*
 * switchyard/process.h -- who a process is, beyond its pid.
 *
 * A pid is reused once its process is reaped, so a pid or a process-group
 * id recorded by one host and acted on by another (the next host after a
 * crash kills what the dead one left running) names the right process only
 * together with the process's start time (field 22 of /proc/PID/stat:
 * clock ticks after boot), the boot it belongs to and the machine.  These
 * read them.  Linux only: elsewhere every reader fails with ENOSYS, and a
 * start time of 0 means "unknown" (nothing recorded with it is ever
 * killed).
 *
 * Code in libswitchyard-sdk.a (sdk/process.c); thread-safe, no global
 * state.  Functions return 0, or -1 with errno set.
 */
#ifndef SWITCHYARD_PROCESS_H
#define SWITCHYARD_PROCESS_H

#include <stddef.h>
#include <stdint.h>

/* What /proc/PID/stat says of one process (the fields these functions
 * need). */
typedef struct sy_process_stat {
    int64_t pid;
    char state;          /* 'R', 'S', 'D', 'Z' (zombie), 'X' (dead), ... */
    int64_t ppid;
    int64_t pgrp;        /* its process group */
    int64_t session;
    uint64_t start_time; /* clock ticks after boot */
} sy_process_stat;

/* Parses the text of a /proc/PID/stat file (`len` bytes, no NUL needed).
 * The command name in parentheses may hold spaces and parentheses: the
 * fields are read after the last ')'.  EINVAL when the text is not such a
 * line. */
int sy_process_parse_stat(const char *text, size_t len, sy_process_stat *out);

/* Reads and parses /proc/PID/stat.  ENOENT (or ESRCH) when no such process
 * is left, ENOSYS off Linux. */
int sy_process_stat_read(int64_t pid, sy_process_stat *out);

/* The start time of process `pid` (clock ticks after boot). */
int sy_process_start_time(int64_t pid, uint64_t *out);

/* This boot's id (/proc/sys/kernel/random/boot_id, 36 characters), NUL
 * terminated in buf (len >= 37). */
int sy_process_boot_id(char *buf, size_t len);

/* This machine's id: /etc/machine-id (or /var/lib/dbus/machine-id), else
 * "host:" and the host name, NUL terminated in buf (len >= 64). */
int sy_process_machine_id(char *buf, size_t len);

#endif /* SWITCHYARD_PROCESS_H */
