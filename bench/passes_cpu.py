#!/usr/bin/env python3
"""bench/passes_cpu.py - what the graph passes (docs/passes.md) change of
a model's time on the CPU: mica without passes (--no-passes all), mica
with every pass, and ONNX Runtime (all its graph optimizations) in the
same rounds, one after the other, float32, at the shapes given.

    python3 bench/passes_cpu.py --build BUILD_DIR MODEL.onnx [MODEL.onnx...]
        [--base BASE_BUILD_DIR] [--shapes NAME:AxB,...] [--threads N]
        [--rounds R] [--duration S]

BUILD_DIR is a built mica tree (tools/mica, modules/.libs, core/.libs,
registry/mica-scan-module); BASE_BUILD_DIR, if given, one built from a
commit before graph passes existed, timed in the same rounds as it is.  Each round times the three one after the
other (mica: the median latency of `mica bench --duration-s S`; ONNX
Runtime: the median of the same number of runs of one session on seeded
random inputs); the table gives each round with the load average after
it, then the medians and mica's time over ONNX Runtime's.  On a shared
machine look at the spread of the rounds and the load.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np


def mica_env(build, threads):
    env = dict(os.environ)
    env.update({
        "MICA_MODULE_DIR": os.path.join(build, "modules/.libs"),
        "MICA_DEVICE_DIR": os.path.join(build, "core/.libs"),
        "MICA_SCANNER": os.path.join(build, "registry/mica-scan-module"),
        "OMP_NUM_THREADS": str(threads),
        "OMP_WAIT_POLICY": env.get("OMP_WAIT_POLICY", "passive"),
    })
    return env


def mica_median(build, model, shapes, threads, duration, passes):
    cmd = [os.path.join(build, "tools/mica"), "bench", model, "--device",
           "cpu", "--duration-s", str(duration), "--warmup-ms", "200"]
    if shapes:
        cmd += ["--shapes", shapes]
    if passes is False:
        cmd += ["--no-passes", "all"]
    out = subprocess.run(cmd, env=mica_env(build, threads), check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"^Latency: .*median = ([0-9.e+-]+) ms", out, re.M)
    if not m:
        sys.exit("no latency in:\n" + out)
    return float(m.group(1))


def ort_session(model, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def ort_feeds(sess, shapes):
    given = {}
    for item in (shapes or "").split(","):
        if item:
            name, dims = item.rsplit(":", 1)
            given[name] = [int(d) for d in dims.split("x")]
    rng = np.random.default_rng(1)
    feeds = {}
    for i in sess.get_inputs():
        dims = given.get(i.name) or [d if isinstance(d, int) else 1
                                     for d in i.shape]
        if "int" in i.type:
            dt = np.int64 if "int64" in i.type else np.int32
            feeds[i.name] = rng.integers(0, 4, size=dims).astype(dt)
        else:
            feeds[i.name] = rng.uniform(-1, 1, size=dims).astype(np.float32)
    return feeds


def ort_median(sess, feeds, duration):
    sess.run(None, feeds)
    times = []
    end = time.perf_counter() + duration
    while time.perf_counter() < end or len(times) < 10:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--base")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--shapes")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3)
    a = ap.parse_args()
    for model in a.models:
        sess = ort_session(model, a.threads)
        feeds = ort_feeds(sess, a.shapes)
        rows = []
        print(f"== {os.path.basename(model)} ({a.threads} thread(s), "
              f"shapes {a.shapes or 'of the model'})")
        print("round  base (ms)  no passes (ms)  passes (ms)  onnxruntime "
              "(ms)  load")
        for r in range(a.rounds):
            base = mica_median(a.base, model, a.shapes, a.threads,
                               a.duration, None) if a.base else float("nan")
            none = mica_median(a.build, model, a.shapes, a.threads,
                               a.duration, False)
            all_ = mica_median(a.build, model, a.shapes, a.threads,
                               a.duration, True)
            ort = ort_median(sess, feeds, a.duration)
            load = open("/proc/loadavg").read().split()[0]
            rows.append((base, none, all_, ort))
            print(f"{r:5d}  {base:9.2f}  {none:14.2f}  {all_:11.2f}  "
                  f"{ort:16.2f}  {load}")
        m = np.median(np.array(rows), axis=0)
        print(f"median {m[0]:9.2f}  {m[1]:14.2f}  {m[2]:11.2f}  "
              f"{m[3]:16.2f}")
        print(f"mica / onnxruntime: {m[0] / m[3]:.2f}x base, {m[1] / m[3]:.2f}x "
              f"without passes, {m[2] / m[3]:.2f}x with them")


if __name__ == "__main__":
    main()
