#!/usr/bin/env python3
"""Hop latency of every dependency edge of a benchmark's runs (bench/postgres).

    hops.py EDGES STORE_ROWS TRACE_PREFIX

EDGES: JSON, {child task id: [parent task ids]}, the workflow's `after`.
STORE_ROWS: the store's task rows after the run, tab-separated:
run_id, task_id, host, started, finished (ms since the epoch).
TRACE_PREFIX: bench/noop.c's `trace` files, PREFIX.PID, one per host:
"START END RUN TASK ATTEMPT", CLOCK_MONOTONIC nanoseconds.

A hop is the time from the parent's completion to the child's start.  A
child with several parents became ready when the last of them finished,
so its hop is measured from that one (and counted once among the
"edges" printed).  Two figures per edge:

* trace: the noop executor completes a task inside submit(); the hop is
  the parent's completion handed back to the host (END) to the child's
  submit (START): the host's completion, the commit of the transaction
  that holds it, the decision, the child's submit.  One machine's
  monotonic clock, so it compares across hosts on that machine.
* store: the child's `started` minus the parent's `finished` from the task
  rows, in the store's resolution (milliseconds).

An edge is across hosts when the two rows' `host` (the owner id of the
host that started the attempt) differ.  The trace file of a host is named
after its process id, which ends its owner id: the two are checked to
agree.
"""
import glob
import json
import sys


def pct(v, q):
    return v[min(len(v) - 1, int(q * len(v)))]


def summary(v, unit, scale, digits):
    if not v:
        return "none"
    v = sorted(v)
    f = lambda x: f"{x / scale:,.{digits}f}"
    return (f"p50 {f(pct(v, 0.5))} {unit}  p99 {f(pct(v, 0.99))} {unit}  "
            f"max {f(v[-1])} {unit}")


def main():
    edges_path, rows_path, prefix = sys.argv[1:4]
    edges = json.load(open(edges_path))
    rows = {}
    for line in open(rows_path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 5:
            continue
        rows[(f[0], f[1])] = (f[2], int(f[3]), int(f[4]))
    trace = {}
    mismatch = 0
    for path in glob.glob(prefix + ".*"):
        pid = path.rsplit(".", 1)[1]
        if not pid.isdigit():
            continue
        for line in open(path):
            start, end, run, task, attempt = line.split()
            key = (run, task)
            # The last attempt is the one whose completion freed the child.
            if key not in trace or int(attempt) >= trace[key][2]:
                trace[key] = (int(start), int(end), int(attempt), pid)
    out = {"cross": ([], []), "same": ([], [])}
    missing = 0
    runs = sorted({r for r, _ in rows})
    for run in runs:
        for child, parents in edges.items():
            c = rows.get((run, child))
            ct = trace.get((run, child))
            ps = [(p, rows.get((run, p)), trace.get((run, p))) for p in parents]
            if not c or not ct or any(not pr or not pt for _, pr, pt in ps):
                missing += 1
                continue
            # The parent that finished last: by the trace (exact), the
            # store's figure taken from the same parent.
            _, pr, pt = max(ps, key=lambda x: x[2][1])
            for row, tr in ((c, ct), (pr, pt)):
                if not row[0] or not row[0].endswith(":" + tr[3]):
                    mismatch += 1
            kind = "same" if c[0] == pr[0] else "cross"
            out[kind][0].append(ct[0] - pt[1])
            out[kind][1].append(c[1] - pr[2])
    for kind, name in (("cross", "across hosts"), ("same", "same host")):
        ns, ms = out[kind]
        print(f"#   hop latency, {name}: {len(ns):,} edges; trace "
              f"{summary(ns, 'us', 1000, 1)}; store stamps {summary(ms, 'ms', 1, 0)}")
    if missing or mismatch:
        print(f"#   hop latency: {missing} edges without both rows and traces, "
              f"{mismatch} rows whose host is not their trace's process")


main()
