#!/usr/bin/env python3
"""bench/triton_bench.py BUILDDIR - the MLP served by Triton, next to mica
called in-process, at client concurrency 1, 8 and 32.

Run with the Python of a virtual environment holding nvidia-pytriton and
tritonclient[http] (the one $MICA_TRITON_VENV names), from a build
configured with --enable-triton:

    MICA_MODULE_DIR=BUILDDIR/modules/.libs \\
        $MICA_TRITON_VENV/bin/python bench/triton_bench.py BUILDDIR

It writes the model repository of tests/triton/make_repo.py with a larger
MLP (--sizes, default 64,256,16; two KIND_CPU instances, the dynamic
batcher with a 100 us queue delay, default-max-batch-size 32), starts
tritonserver on 127.0.0.1, and keeps N requests of one row ([1, IN],
binary tensors over HTTP) in flight from N client threads (each its own
tritonclient connection) for --seconds each, N in --concurrency; then runs
bench/bench_serving on the same manifest and rows with the same numbers
of threads.  Prints one table; asserts nothing.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import tritonclient.http as th

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "triton"))
from server import Server  # noqa: E402


def client_run(port, x, threads, seconds):
    """Requests per second, p50 and p99 latency (s) over `seconds`."""
    lat = [[] for _ in range(threads)]
    start = threading.Barrier(threads + 1)
    stop = [0.0]

    def work(k):
        c = th.InferenceServerClient("127.0.0.1:%d" % port,
                                     connection_timeout=10,
                                     network_timeout=60)
        i = th.InferInput("x", [1, x.shape[1]], "FP32")
        out = [th.InferRequestedOutput("y", binary_data=True)]
        for w in range(20):  # warm-up
            i.set_data_from_numpy(x[w:w + 1], binary_data=True)
            c.infer("mlp", [i], outputs=out)
        start.wait()
        n = k
        while time.monotonic() < stop[0]:
            i.set_data_from_numpy(x[n % len(x):n % len(x) + 1],
                                  binary_data=True)
            t0 = time.monotonic()
            c.infer("mlp", [i], outputs=out)
            lat[k].append(time.monotonic() - t0)
            n += threads
        c.close()

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    stop[0] = time.monotonic() + 3600
    start.wait()
    t0 = time.monotonic()
    stop[0] = t0 + seconds
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    all_lat = np.sort(np.concatenate([np.array(v) for v in lat]))
    return (len(all_lat) / wall, all_lat[len(all_lat) // 2],
            all_lat[int(len(all_lat) * 0.99)], len(all_lat))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builddir")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--sizes", default="64,256,16")
    ap.add_argument("--concurrency", default="1,8,32")
    args = ap.parse_args()
    build = os.path.abspath(args.builddir)
    conc = [int(v) for v in args.concurrency.split(",")]
    tmp = tempfile.mkdtemp(prefix="mica-triton-bench.")
    repo = os.path.join(tmp, "repo")
    subprocess.run([sys.executable, os.path.join(HERE, "..", "tests",
                                                 "triton", "make_repo.py"),
                    repo, "--sizes", args.sizes, "--delay-us", "100"],
                   check=True)
    n_in = int(args.sizes.split(",")[0])
    x = np.random.default_rng(5).standard_normal((1024, n_in)).astype(
        np.float32)
    np.save(os.path.join(tmp, "x.npy"), x)

    server = Server(tmp, repo, build, lambda: 120,
                    os.path.join(build, "tools", "triton", ".libs",
                                 "libtriton_mica.so"),
                    ["--backend-config=mica,default-max-batch-size=32"])
    rows = []

    def batch_totals():
        stats = server.client.get_inference_statistics("mlp")
        batches = stats["model_stats"][0]["batch_stats"]
        return (sum(b["batch_size"] * b["compute_infer"]["count"]
                    for b in batches),
                sum(b["compute_infer"]["count"] for b in batches))

    try:
        if not server.start(["mlp"]):
            sys.exit("tritonserver did not start:\n" + server.tail())
        for c in conc:
            before = batch_totals()
            rps, p50, p99, n = client_run(server.port, x, c, args.seconds)
            after = batch_totals()
            rows.append(("Triton (HTTP)", c, rps, p50, p99, n, "%.1f" % (
                (after[0] - before[0]) / max(after[1] - before[1], 1))))
            print(rows[-1], flush=True)
    finally:
        server.stop()
    env = dict(os.environ, BENCH_SECONDS=str(args.seconds))
    out = subprocess.run([os.path.join(build, "bench", "bench_serving"),
                          os.path.join(repo, "mlp", "1", "model.yaml"),
                          os.path.join(tmp, "x.npy")] +
                         [str(c) for c in conc], env=env, check=True,
                         capture_output=True, text=True).stdout
    print(out, flush=True)
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "in-process":
            rows.append(("mica in-process", int(f[2]), float(f[3]),
                         float(f[6]) * 1e-6, float(f[9]) * 1e-6,
                         int(f[11].lstrip("(")), "1"))
    print("\n| path | concurrency | req/s | p50 ms | p99 ms | requests | "
          "rows per execution (mean) |")
    print("|---|---|---|---|---|---|---|")
    for path, c, rps, p50, p99, n, mean in sorted(rows,
                                                  key=lambda r: (r[1], r[0])):
        print("| %s | %d | %.0f | %.3f | %.3f | %d | %s |" % (
            path, c, rps, p50 * 1e3, p99 * 1e3, n, mean))


if __name__ == "__main__":
    main()
