#!/usr/bin/env python3
"""bench/pointwise_cpu.py - Pointwise layers on the CPU against ONNX
Runtime and memcpy, in interleaved rounds (issues 20 and 22).

Each round runs, for each workload of bench/bench_pointwise (chain3, relu,
scalar, bias, sigmoid, half), mica's bench_pointwise (the layers, the
pointwise pass, a Pointwise layer written by hand, and memcpy of the
same bytes) and ONNX Runtime on the same operations as an ONNX model
(one thread, every graph optimization on, inputs and outputs bound so
that no run allocates), then prints GB/s (bytes read and written over
the time: CPU time of the process, which a shared machine disturbs
less than the wall clock) and the load average before and after.

    python3 bench/pointwise_cpu.py --build BUILD [--rounds 3]
        [--elements 4194304]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

WORKS = ("chain3", "relu", "scalar", "bias", "sigmoid", "half")


def model(name, n):
    """The ONNX model of workload `name` over n elements: inputs, dims."""
    f32, f16 = TensorProto.FLOAT, TensorProto.FLOAT16
    full = [n]
    if name == "chain3":
        ins = [("a", f32, full), ("b", f32, full), ("c", f32, full)]
        nodes = [helper.make_node("Add", ["a", "b"], ["t0"]),
                 helper.make_node("Mul", ["t0", "c"], ["t1"]),
                 helper.make_node("Relu", ["t1"], ["y"])]
        out = (f32, full)
    elif name == "relu":
        ins = [("a", f32, full)]
        nodes = [helper.make_node("Relu", ["a"], ["y"])]
        out = (f32, full)
    elif name == "scalar":
        ins = [("a", f32, full), ("b", f32, [1])]
        nodes = [helper.make_node("Mul", ["a", "b"], ["y"])]
        out = (f32, full)
    elif name == "bias":
        full = [1, 64, n // 4096, 64]
        ins = [("a", f32, full), ("b", f32, [1, 64, 1, 1])]
        nodes = [helper.make_node("Add", ["a", "b"], ["t0"]),
                 helper.make_node("Relu", ["t0"], ["y"])]
        out = (f32, full)
    elif name == "sigmoid":
        ins = [("a", f32, full)]
        nodes = [helper.make_node("Sigmoid", ["a"], ["y"])]
        out = (f32, full)
    else:  # half
        ins = [("a", f16, full), ("b", f16, full)]
        nodes = [helper.make_node("Add", ["a", "b"], ["t0"]),
                 helper.make_node("Relu", ["t0"], ["y"])]
        out = (f16, full)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, t, d) for k, t, d in ins],
        [helper.make_tensor_value_info("y", out[0], out[1])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, ins, out


def np_type(t):
    return np.float16 if t == TensorProto.FLOAT16 else np.float32


def ort_time(name, n, reps=15):
    """Seconds per run of ONNX Runtime (1 thread), and the bytes moved."""
    m, ins, out = model(name, n)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), so,
                             providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    b = s.io_binding()
    moved = 0
    for k, t, d in ins:
        x = rng.uniform(-1, 1, size=d).astype(np_type(t))
        moved += x.nbytes
        b.bind_cpu_input(k, x)
    y = np.empty(out[1], dtype=np_type(out[0]))
    moved += y.nbytes
    b.bind_output("y", "cpu", 0, y.dtype, y.shape,
                  y.__array_interface__["data"][0])
    s.run_with_iobinding(b)
    t0 = time.process_time()
    s.run_with_iobinding(b)
    once = time.process_time() - t0
    k = max(1, int(0.02 / max(once, 1e-7)) + 1)
    times = []
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(k):
            s.run_with_iobinding(b)
        times.append((time.process_time() - t0) / k)
    return float(np.median(times)), moved


def mica_rows(build, name, n):
    env = dict(os.environ, OMP_NUM_THREADS="1",
               MICA_MODULE_DIR=f"{build}/modules/.libs",
               MICA_DEVICE_DIR=f"{build}/core/.libs")
    r = subprocess.run([f"{build}/bench/bench_pointwise", "--cpu-time",
                        "--elements", str(n), "--only", name],
                       env=env, capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if f and f[0] == name:
            # workload, MB, copy, layers, n, pass, n, hand, pass/cp, hand/cp
            return {"copy": float(f[2]), "layers": float(f[3]),
                    "pass": float(f[5]), "hand": float(f[7])}
    raise RuntimeError(r.stdout + r.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--elements", type=int, default=1 << 22)
    a = ap.parse_args()
    n = a.elements // 4096 * 4096
    rows = {w: [] for w in WORKS}
    for r in range(a.rounds):
        load0 = os.getloadavg()[0]
        for w in WORKS:
            m = mica_rows(a.build, w, n)
            t, moved = ort_time(w, n)
            m["ort"] = moved / t / 1e9
            rows[w].append(m)
        print(f"# round {r + 1}: load average {load0:.2f} -> "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    print(f"# {n} elements, 1 thread, GB/s (bytes read + written / CPU "
          f"time), median of {a.rounds} rounds; ort: ONNX Runtime "
          f"{ort.__version__}")
    print(f"{'workload':8} {'memcpy':>7} {'layers':>7} {'pass':>7} "
          f"{'hand':>7} {'ort':>7} {'pass/cp':>8} {'pass/ort':>9}")
    for w in WORKS:
        med = {k: float(np.median([x[k] for x in rows[w]]))
               for k in rows[w][0]}
        print(f"{w:8} {med['copy']:7.1f} {med['layers']:7.1f} "
              f"{med['pass']:7.1f} {med['hand']:7.1f} {med['ort']:7.1f} "
              f"{100 * med['pass'] / med['copy']:7.0f}% "
              f"{med['pass'] / med['ort']:8.2f}x")


if __name__ == "__main__":
    sys.exit(main())
