#!/usr/bin/env python3
"""Runs one `switchyard run` and measures it for bench/kubernetes.

    kubernetes_measure.py PORT CMD...

Prints one line of key=value figures: wall seconds, the host's user and
system CPU (from wait4, the whole process), its peak resident memory,
and the most TCP connections it held to 127.0.0.1:PORT at once, sampled
every 50 ms from /proc (the process's socket inodes matched against
/proc/net/tcp and tcp6).
"""
import os
import sys
import time


def sockets_of(pid):
    inodes = set()
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        pass
    return inodes


def connections_to(pid, port):
    mine = sockets_of(pid)
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            # rem_address is HEX_IP:HEX_PORT; st 01 is ESTABLISHED.
            if f[3] == "01" and int(f[2].rsplit(":", 1)[1], 16) == port and f[9] in mine:
                n += 1
    return n


def main():
    port = int(sys.argv[1])
    cmd = sys.argv[2:]
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execvp(cmd[0], cmd)
    peak = 0
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        peak = max(peak, connections_to(pid, port))
        time.sleep(0.05)
    wall = time.monotonic() - t0
    print("exit=%d wall_s=%.2f user_s=%.2f sys_s=%.2f max_rss_mib=%.1f max_connections=%d" % (
        os.waitstatus_to_exitcode(status), wall, usage.ru_utime, usage.ru_stime,
        usage.ru_maxrss / 1024.0, peak))


if __name__ == "__main__":
    main()
