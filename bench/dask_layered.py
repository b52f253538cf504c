"""The layered no-op DAG in Dask's threaded scheduler; prints the best of
three wall times in seconds."""
import time
import dask.threaded

def noop(*args):
    return None

dsk = {}
for layer in range(100):
    for i in range(100):
        dsk[f"l{layer}_{i}"] = (noop, f"j{layer-1}") if layer else (noop,)
    dsk[f"j{layer}"] = (noop, *[f"l{layer}_{i}" for i in range(100)])
best = None
for _ in range(3):
    t0 = time.perf_counter()
    dask.threaded.get(dsk, "j99", num_workers=2)
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
print(f"{best:.3f}")
