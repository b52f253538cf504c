"""Plays systemd's side of sd_notify(3) for the tests: binds a Unix datagram
socket (a path, or "@name" for an abstract one) and appends each datagram it
receives to a file, one line each, its own newlines written as " | ", and
" @SECONDS" (CLOCK_MONOTONIC) after it.  Runs until killed; the file
LOG.listening appears once it listens."""
import os
import socket
import sys
import time

where, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + where[1:] if where.startswith("@") else where)
open(log + ".listening", "w").close()
with open(log, "a", buffering=1) as out:
    while True:
        data = s.recv(4096)
        text = data.decode("utf-8", "replace").replace("\n", " | ")
        out.write("%s @%.3f\n" % (text, time.monotonic()))
