#!/usr/bin/env python3
"""The house rules as a test: layers point one way, no circles between
files, plugins and the SDK see api/ and sdk/ only, files stay small.

Usage: architecture.py SRCDIR BUILDDIR.  Speaks TAP.  The include checks
read the sources; the circle check reads the symbols of the host's object
files in BUILDDIR (nm), because a circle is two files that call each
other, whatever they include.
"""
import os
import re
import subprocess
import sys

# Which layers each layer may include, besides itself (docs/architecture.md).
ALLOWED = {
    "cli": {"admin", "service", "engine", "workflow", "executor", "store", "config", "base"},
    "admin": {"service", "engine", "workflow", "executor", "store", "config", "base"},
    "service": {"engine", "workflow", "executor", "store", "config", "base"},
    "engine": {"workflow", "executor", "store", "config", "base"},
    "store": {"workflow", "config", "base"},
    "workflow": {"config", "base"},
    "executor": {"config", "base"},
    "config": {"base"},
    "base": set(),
}
MAX_LINES = 600
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)

n = 0
failed = 0


def ok(cond, name, detail=()):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {name}")
    if not cond:
        failed += 1
        for line in detail:
            print(f"#   {line}")


def sources(top, *dirs):
    for d in dirs:
        for root, _, files in os.walk(os.path.join(top, d)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(root, f)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def check_layers(src):
    bad = []
    for path in sources(src, "host"):
        rel = os.path.relpath(path, os.path.join(src, "host"))
        layer = rel.split(os.sep)[0] if os.sep in rel else None
        for kind, name in includes(path):
            if kind != '"':
                continue
            target = name.split("/")[0] if "/" in name else None
            if layer is None:  # host/main.c may use every layer
                continue
            if target is None or (target != layer and target not in ALLOWED[layer]):
                bad.append(f"host/{rel} ({layer}) includes \"{name}\"")
    ok(not bad, "host/: every include points down the layers", bad)


def check_plugin_includes(src):
    """A plugin, the SDK and the kit include only standard headers, the
    ABI and SDK headers (<switchyard/...>), and headers of their own
    folder."""
    api = {p for p in os.listdir(os.path.join(src, "api", "switchyard"))}
    sdk = {p for p in os.listdir(os.path.join(src, "sdk", "switchyard"))}
    bad = []
    for path in sources(src, "plugins", "sdk"):
        here = os.path.dirname(path)
        for kind, name in includes(path):
            if name.startswith("switchyard/"):
                if name.split("/", 1)[1] not in api | sdk:
                    bad.append(f"{os.path.relpath(path, src)}: <{name}> is neither in api/ nor sdk/")
            elif kind == '"' and not os.path.exists(os.path.join(here, name)):
                bad.append(f"{os.path.relpath(path, src)}: \"{name}\" is not in its own folder")
    ok(not bad, "plugins/ and sdk/ see api/ and sdk/ only", bad)


def check_sizes(src):
    big = []
    for path in sources(src, "host", "plugins", "sdk", "api"):
        with open(path, encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            big.append(f"{os.path.relpath(path, src)}: {lines} lines")
    ok(not big, f"no source file over {MAX_LINES} lines", big)


def symbols(objs):
    """{path: (defined, used)} for every object, from two runs of nm over
    all of them (a run per object was most of this test's time)."""
    table = {obj: (set(), set()) for obj in objs}
    for slot, flags in ((0, ["--defined-only", "-g"]), (1, ["-u"])):
        out = subprocess.run(["nm", "-A", *flags, *objs], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            # -A: "path.o:value type name" ("path.o:   U name" when
            # undefined); make allows no ':' in the paths.
            obj, _, rest = line.partition(":")
            if obj in table and rest.strip():
                table[obj][slot].add(rest.split()[-1])
    return table


def host_objects(src, build):
    objs = {}
    for root, _, files in os.walk(os.path.join(build, "host")):
        for f in files:
            # libtool keeps the PIC objects under .libs; the program's
            # objects (cli/, main) sit beside their sources.
            if f.endswith(".o") and (root.endswith(".libs") or "libsyhost" not in f):
                name = re.sub(r"^(libsyhost_la|switchyard)-", "", f)[:-2]
                layer = os.path.relpath(root, os.path.join(build, "host")).split(os.sep)[0]
                rel = f"{layer}/{name}.c" if layer not in (".", ".libs") else f"{name}.c"
                # An object whose source is gone is a leftover of an older
                # layout in a reused build directory.
                if os.path.exists(os.path.join(src, "host", rel)):
                    objs[rel] = os.path.join(root, f)
    return objs


def strongly_connected(graph):
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return comps


def check_circles(src, build):
    objs = host_objects(src, build)
    if not objs:
        ok(False, "no circles between host files", [f"no objects under {build}/host: build first"])
        return
    by_path = symbols(sorted(objs.values()))
    table = {name: by_path[path] for name, path in objs.items()}
    owner = {}
    for name, (defined, _) in table.items():
        for s in defined:
            owner[s] = name
    graph = {name: sorted({owner[s] for s in used if s in owner and owner[s] != name})
             for name, (_, used) in table.items()}
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    ok(not circles, "no circles between host files (calls point one way)",
       [" <-> ".join(c) for c in circles])


def main():
    src, build = sys.argv[1], sys.argv[2]
    check_layers(src)
    check_plugin_includes(src)
    check_sizes(src)
    check_circles(src, build)
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
