"""A map over 10,000 elements and a join that gets every output in order,
in Dask, the way its users write it: dask.delayed on the threaded scheduler,
and client.map + client.submit on a distributed LocalCluster in this
process (threads, no worker processes: the cheapest Dask has).  Each
element returns {"task": i, "attempt": 1}, as the Switchyard case's do.
Prints "delayed SECONDS" and "client SECONDS", the best of three each;
nothing is durable in either."""
import sys
import time

import dask
from dask.distributed import Client, LocalCluster

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000


def element(i):
    return {"task": i, "attempt": 1}


def join(outputs):
    return len(outputs)


def best_of_3(f):
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        assert f() == N
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def delayed_run():
    parts = [dask.delayed(element)(i) for i in range(N)]
    return dask.delayed(join)(parts).compute(scheduler="threads", num_workers=2)


print(f"delayed {best_of_3(delayed_run):.3f}")
with LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                  dashboard_address=None) as cluster, Client(cluster) as client:
    def client_run():
        futures = client.map(element, range(N), pure=False)
        return client.submit(join, futures).result()
    print(f"client {best_of_3(client_run):.3f}")
