"""The commands DAG (2,000 /bin/true, 20 layers of 100, each task depending
on the whole layer above) under make -j2 or ninja -j2: best of three."""
import os, subprocess, sys, time

tool, work = sys.argv[1], sys.argv[2]
d = os.path.join(work, "peer-" + tool)
os.makedirs(d, exist_ok=True)
names = [[f"s{l}_{i}" for i in range(100)] for l in range(20)]
if tool == "make":
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(".PHONY: all " + " ".join(n for l in names for n in l) + "\n")
        f.write("all: " + " ".join(names[-1]) + "\n")
        for l, layer in enumerate(names):
            deps = " ".join(names[l - 1]) if l else ""
            for n in layer:
                f.write(f"{n}: {deps}\n\t@/bin/true\n")
    cmd = ["make", "-s", "-j2", "-f", "Makefile"]
else:
    with open(os.path.join(d, "build.ninja"), "w") as f:
        f.write("rule t\n  command = /bin/true\n")
        for l, layer in enumerate(names):
            deps = " ".join(names[l - 1]) if l else ""
            for n in layer:
                f.write(f"build {n}: t" + (f" | {deps}" if deps else "") + "\n")
        f.write("default " + " ".join(names[-1]) + "\n")
    cmd = ["ninja", "-j2", "--quiet"]
best = None
for _ in range(3):
    if tool == "ninja":
        for p in (".ninja_log", ".ninja_deps"):
            try:
                os.unlink(os.path.join(d, p))
            except FileNotFoundError:
                pass
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=d, check=True, stdout=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
print(f"{best:.3f}")
