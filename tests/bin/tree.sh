#!/bin/sh
# tree.sh PIDFILE -- a process tree for the thread executor's timeout test.
# This shell is the command; it starts a child (the task's grandchild) that
# ignores SIGTERM, writes "SHELL_PID CHILD_PID" to PIDFILE, and waits.  Only
# a SIGKILL to the whole process group ends the child.
pidfile=$1
( trap '' TERM; exec sleep 1000 ) &
echo "$$ $!" > "$pidfile.tmp" && mv "$pidfile.tmp" "$pidfile"
wait
