"""Writes the benchmark workflows into DIR/workflows."""
import sys, os

d = os.path.join(sys.argv[1], "workflows")

def write(name, tasks, sub="workflows"):
    os.makedirs(os.path.join(sys.argv[1], sub), exist_ok=True)
    with open(os.path.join(sys.argv[1], sub, name + ".cfg"), "w") as f:
        f.write('workflow = {\n  name = "%s";\n  tasks = (\n' % name)
        f.write(",\n".join(tasks))
        f.write("\n  );\n};\n")

def task(tid, deps, extra=""):
    after = ' after = [%s];' % ", ".join('"%s"' % x for x in deps) if deps else ""
    return '    { id = "%s";%s%s }' % (tid, after, extra)

# 100 layers of 100 tasks; a join after each layer, which the next layer
# depends on: 10,100 tasks.
t = []
for layer in range(100):
    for i in range(100):
        t.append(task(f"l{layer}_{i}", [f"j{layer-1}"] if layer else []))
    t.append(task(f"j{layer}", [f"l{layer}_{i}" for i in range(100)]))
write("layered", t)
write("layered_out", t)  # routed to an instance whose tasks return output

# Dynamic fan-out: one task mapped over a range (each element returns
# output: routed to the output instance), then a join that gets every
# output in order.
for name, n in (("mapped", 10000), ("mapped100k", 100000)):
    write(name, ['    { id = "m"; map_range = %d; max_map = %d; }' % (n, n),
                 task("j", ["m"])])

write("chain", [task(f"c{i}", [f"c{i-1}"] if i else []) for i in range(1000)])

# 20 layers of 100 /bin/true, each task depending on the whole layer above.
t = []
for layer in range(20):
    deps = [f"s{layer-1}_{i}" for i in range(100)] if layer else []
    for i in range(100):
        t.append(task(f"s{layer}_{i}", deps, ' command = ["/bin/true"]; output = "none";'))
write("cmds", t, "cmds")  # needs the thread plugin: its own directory
write("cmdsfloat", t, "cmdsfloat")
