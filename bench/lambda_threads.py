#!/usr/bin/env python3
"""The thread-per-request peer of the lambda benchmark: what Prefect and
Dagster do, one blocking call per thread.  concurrent.futures with 64
threads, each call an urllib POST to the Invoke path, signed with SigV4
(hashlib/hmac, as the plugin signs).  Prints the same key=value line as
bench/lambda_bench.c.

Usage: lambda_threads.py PORT [N] [THREADS]
"""
import concurrent.futures
import datetime
import hashlib
import hmac
import resource
import sys
import time
import urllib.request

KEY, SECRET, REGION = "AKIDBENCH", "bench-secret", "us-east-1"


def signed_request(url, host, path, body):
    now = datetime.datetime.now(datetime.timezone.utc)
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz[:8]
    creq = "\n".join(["POST", path, "", f"host:{host}\nx-amz-date:{amz}\n",
                      "host;x-amz-date", hashlib.sha256(body).hexdigest()])
    scope = f"{day}/{REGION}/lambda/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + SECRET).encode()
    for part in (day, REGION, "lambda", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return urllib.request.Request(url, data=body, method="POST", headers={
        "X-Amz-Date": amz, "Content-Type": "application/json",
        "X-Amz-Invocation-Type": "RequestResponse",
        "Authorization": f"AWS4-HMAC-SHA256 Credential={KEY}/{scope}, "
                         f"SignedHeaders=host;x-amz-date, Signature={sig}"})


def main():
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    host = f"127.0.0.1:{port}"
    path = "/2015-03-31/functions/bench/invocations"
    url = f"http://{host}{path}"
    body = b'{"n": 1, "payload": "0123456789"}'

    def call(_):
        with urllib.request.urlopen(signed_request(url, host, path, body)) as r:
            r.read()
            return r.status == 200

    t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        ok = sum(pool.map(call, range(n)))
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(f"system=python-threads calls={n} ok={ok} failed={n - ok} "
          f"in_flight={threads} peak_in_flight={threads} wall_s={wall:.3f} "
          f"calls_per_s={n / wall:.0f} cpu_s={cpu:.3f} "
          f"cpu_us_per_call={cpu / n * 1e6:.1f} max_rss_mib={r1.ru_maxrss / 1024:.1f}")
    return 0 if ok == n else 1


if __name__ == "__main__":
    sys.exit(main())
