"""The commands benchmark: 2,000 /bin/true, 20 layers of 100, each task
depending on the whole layer above, two at a time, under Switchyard (pinned
workers and the defaults), make -j2 and ninja -j2.

    python3 cmds.py WORK ROUNDS SWITCHYARD [SPAWNFLOOR]

WORK holds cmds.cfg and cmdsfloat.cfg (written by bench/run).  With
SY_BENCH_THREAD_B set to another build of the thread plugin (a .so), a
system "pinned-b" runs the pinned configuration on that build, in the
same rounds, with a store of its own: an A/B of two plugin builds under
the same host.  The systems
run interleaved, one after another in each round, the order turning from
round to round: on a small machine timings drift by 10% over a minute, and
only runs taken side by side compare.  One untimed round warms the caches
first.  Prints one line a system:

    NAME MEDIAN MIN RUN_MEDIAN

in seconds for the whole command; RUN_MEDIAN is Switchyard's run alone
(first dispatch to last completion), "-" for the peers; a system that is not
installed prints "NAME missing".  SPAWNFLOOR, when given, is
bench/spawnfloor: the same 2,000 commands started by two bare threads, no
graph, timed as the others are; "floorsdk" is the same with the SDK's
sy_spawn_run (pipes, a process group, a pidfd).  A last line, "load", is
`switchyard check` of the same configuration: the load that precedes the
first command.

For the two Switchyard systems a "phases" line follows, medians over the
rounds of what `switchyard run --metrics-file` reports at the end of each
run: the loop thread's busy time (the run's wall time less the loop's
idle time, less the load), its share in store writes, and the thread
plugin's time per command from a worker's call to the command running
(pipes, clone, exec: "spawn") and from there to its end reaped ("run",
the command's own life and its output read), in microseconds:

    phases NAME loop_busy=S store=S spawn_us=U run_us=U record_us=U commands=N

"record_us" is the part of "spawn" a command waits for the host to record
its process group (switchyard_process_record_wait_seconds_total over
switchyard_process_records_total): the loop thread's write and commit,
and its wait for a core.
"""
import os, re, shutil, statistics, subprocess, sys, time

work, rounds, switchyard = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spawnfloor = sys.argv[4] if len(sys.argv) > 4 else None
names = [[f"s{l}_{i}" for i in range(100)] for l in range(20)]


def write_make(d):
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(".PHONY: all " + " ".join(n for l in names for n in l) + "\n")
        f.write("all: " + " ".join(names[-1]) + "\n")
        for l, layer in enumerate(names):
            deps = " ".join(names[l - 1]) if l else ""
            for n in layer:
                f.write(f"{n}: {deps}\n\t@/bin/true\n")


def write_ninja(d):
    with open(os.path.join(d, "build.ninja"), "w") as f:
        f.write("rule t\n  command = /bin/true\n")
        for l, layer in enumerate(names):
            deps = " ".join(names[l - 1]) if l else ""
            for n in layer:
                f.write(f"build {n}: t" + (f" | {deps}" if deps else "") + "\n")
        f.write("default " + " ".join(names[-1]) + "\n")


def forget_ninja(d):
    # Without its log ninja rebuilds everything, as make does with .PHONY.
    for p in (".ninja_log", ".ninja_deps"):
        try:
            os.unlink(os.path.join(d, p))
        except FileNotFoundError:
            pass


def prom(path):
    """The samples of a Prometheus text file: {name{labels}: value}."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def phases(path, whole):
    m = prom(path)
    def plugin(name):
        return sum(v for k, v in m.items()
                   if k.startswith("switchyard_executor_plugin_value{")
                   and f'name="{name}"' in k)
    n = plugin("commands.started")
    return {
        "loop_busy": whole - m.get("switchyard_loop_idle_seconds_total", 0.0),
        "store": m.get("switchyard_store_write_seconds_sum", 0.0),
        "spawn_us": plugin("commands.spawn_us") / n if n else 0.0,
        "run_us": plugin("commands.run_us") / n if n else 0.0,
        "record_us": (1e6 * m.get("switchyard_process_record_wait_seconds_total", 0.0)
                      / m["switchyard_process_records_total"]
                      if m.get("switchyard_process_records_total") else 0.0),
        "commands": n,
    }


class System:
    def __init__(self, name, cmd, cwd=None, env=None, before=None,
                 metrics=None):
        self.name, self.cmd, self.cwd, self.env = name, cmd, cwd, env
        self.before = before
        self.metrics = metrics
        self.whole, self.run, self.phases = [], [], []

    def once(self):
        if self.before:
            self.before()
        t0 = time.perf_counter()
        out = subprocess.run(self.cmd, cwd=self.cwd, env=self.env,
                             capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if out.returncode != 0:
            sys.exit(f"{self.name} failed ({out.returncode}): {out.stderr[-2000:]}")
        m = re.search(r"Completed in ([0-9.]+)s", out.stdout)
        if self.metrics:
            self.phases.append(phases(self.metrics, dt))
        return dt, (float(m[1]) if m else None)


systems, missing = [], []
for key, wf in (("pinned", "cmds"), ("default", "cmdsfloat")):
    env = dict(os.environ, SWITCHYARD_CONFIG=os.path.join(work, wf + ".cfg"))
    metrics = os.path.join(work, key + ".prom")
    systems.append(System(key, [switchyard, "run", wf, "--quiet",
                                "--metrics-file", metrics],
                          env=env, metrics=metrics))
other = os.environ.get("SY_BENCH_THREAD_B")
if other:
    # cmds.cfg with its plugin directory and store swapped for B's own.
    bdir = os.path.join(work, "plugins-b")
    os.makedirs(bdir, exist_ok=True)
    shutil.copy(other, os.path.join(bdir, "thread.so"))
    with open(os.path.join(work, "cmds.cfg")) as f:
        cfg = f.read()
    cfg = cfg.replace('"plugins"', '"plugins-b"').replace("var/cmds.db", "var/cmds-b.db")
    with open(os.path.join(work, "cmds-b.cfg"), "w") as f:
        f.write(cfg)
    env = dict(os.environ, SWITCHYARD_CONFIG=os.path.join(work, "cmds-b.cfg"))
    metrics = os.path.join(work, "pinned-b.prom")
    systems.append(System("pinned-b", [switchyard, "run", "cmds", "--quiet",
                                       "--metrics-file", metrics],
                          env=env, metrics=metrics))
for tool, writer in (("make", write_make), ("ninja", write_ninja)):
    if not shutil.which(tool):
        missing.append(tool)
        continue
    d = os.path.join(work, "peer-" + tool)
    os.makedirs(d, exist_ok=True)
    writer(d)
    if tool == "make":
        systems.append(System("make", ["make", "-s", "-j2", "-f", "Makefile"], cwd=d))
    else:
        systems.append(System("ninja", ["ninja", "-j2", "--quiet"], cwd=d,
                              before=lambda d=d: forget_ninja(d)))

if spawnfloor:
    systems.append(System("floor", [spawnfloor]))
    systems.append(System("floorsdk", [spawnfloor, "sdk"]))
# What has to happen before the first command can start, alone: the
# process, its plugins and the parse and checks of the 2 MB workflow.
systems.append(System("load", [switchyard, "check"],
                      env=dict(os.environ, SWITCHYARD_CONFIG=os.path.join(work, "cmds.cfg"))))

for s in systems:
    s.once()
    s.phases = []
for r in range(rounds):
    k = r % len(systems)
    for s in systems[k:] + systems[:k]:
        whole, run = s.once()
        s.whole.append(whole)
        if run is not None:
            s.run.append(run)

for s in systems:
    run = f"{statistics.median(s.run):.3f}" if s.run else "-"
    print(f"{s.name} {statistics.median(s.whole):.3f} {min(s.whole):.3f} {run}")
load = next((statistics.median(s.whole) for s in systems if s.name == "load"), 0.0)
for s in systems:
    if not s.phases:
        continue
    med = {k: statistics.median(p[k] for p in s.phases) for k in s.phases[0]}
    print(f"phases {s.name} loop_busy={med['loop_busy'] - load:.3f} "
          f"store={med['store']:.3f} spawn_us={med['spawn_us']:.0f} "
          f"run_us={med['run_us']:.0f} record_us={med['record_us']:.0f} "
          f"commands={med['commands']:.0f}")
for m in missing:
    print(f"{m} missing")
