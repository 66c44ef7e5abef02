#!/usr/bin/env python3
"""bench/resnet50_torch.py - ResNet-50 v1.5 in float16 at batch 1 and 256
through mica, next to PyTorch eager and PyTorch in a CUDA graph, on the
same GPU in the same run, with the same network and weights.

    python3 bench/resnet50_torch.py --build BUILD_DIR [--dir OUT]
                                    [--batches 1,256]

BUILD_DIR is a built mica tree with CUDA (bench/bench_model, tools/mica,
modules/.libs).  The model comes from bench/resnet50_gen.py (run here into
OUT, default /tmp/mica-resnet50, unless it is there already): the same
folded network (convolutions with bias, ReLU, max pooling, residual sums,
global average pooling, FullyConnected) is built here from its JSON and
weights file as PyTorch functional calls, channels last, float16, with
torch.backends.cudnn.benchmark on.  mica runs the manifest built with
--fp16 (bench_model: median of 5 trials of R runs queued then one
synchronization, inputs uploaded once), layer by layer and replayed as a
CUDA graph (--cuda-graph); PyTorch is timed the same way, eager and
replaying a CUDA graph.  Before timing, mica's logits at batch 1
are compared with PyTorch's in float32.  The table comes last.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def load(d, dtype):
    meta = json.load(open(os.path.join(d, "resnet50.json")))
    raw = open(os.path.join(d, "resnet50.bin"), "rb").read()
    W = {}
    for name, w in meta["weights"].items():
        n = int(np.prod(w["shape"]))
        a = np.frombuffer(raw, "<f4", n, w["offset"]).reshape(w["shape"])
        t = torch.from_numpy(a.copy()).to("cuda", dtype)
        if t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        W[name] = t
    return meta["layers"], W


def forward(layers, W, x):
    t = {"x": x}
    for l in layers:
        k, n = l["kind"], l["name"]
        if k == "conv":
            t[l["output"]] = F.conv2d(t[l["input"]], W[n + "_w"], W[n + "_b"],
                                      l["stride"], l["pad"])
        elif k == "relu":
            t[l["output"]] = F.relu(t[l["inputs"][0]])
        elif k == "add":
            t[l["output"]] = t[l["inputs"][0]] + t[l["inputs"][1]]
        elif k == "maxpool":
            t[l["output"]] = F.max_pool2d(t[l["inputs"][0]], 3, 2, 1)
        elif k == "avgpool":
            t[l["output"]] = F.avg_pool2d(t[l["inputs"][0]], 7)
        elif k == "fc":
            t[l["output"]] = F.linear(t[l["input"]].flatten(1), W["fc_w"],
                                      W["fc_b"])
    return t["logits"]


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    v = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        v.append((time.perf_counter() - t0) / reps)
    return 1e3 * statistics.median(v)


def time_torch(layers, W, n):
    x = torch.randn(n, 3, 224, 224, device="cuda", dtype=torch.float16)
    x = x.contiguous(memory_format=torch.channels_last)
    reps = 50 if n == 1 else 10
    with torch.no_grad():
        for _ in range(3):
            forward(layers, W, x)
        eager = timed(lambda: forward(layers, W, x), reps)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                forward(layers, W, x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            forward(layers, W, x)
        graph = timed(g.replay, reps)
    return eager, graph


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", default="/tmp/mica-resnet50")
    ap.add_argument("--batches", default="1,256")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    if not all(os.path.exists(os.path.join(a.dir, "resnet50_b%d.yaml" % b))
               for b in batches):
        subprocess.check_call([sys.executable,
                               os.path.join(HERE, "resnet50_gen.py"), a.dir,
                               "--batches", a.batches])
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(a.build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(a.build, "core", ".libs"))
    mica = os.path.join(a.build, "tools", "mica")
    torch.backends.cudnn.benchmark = True

    # The same logits first: mica float16 against PyTorch float32.
    layers, W32 = load(a.dir, torch.float32)
    x = np.random.RandomState(1).uniform(-1, 1, (1, 3, 224, 224))
    x = x.astype(np.float32)
    np.save(os.path.join(a.dir, "x1.npy"), x)
    with torch.no_grad():
        want = forward(layers, W32, torch.from_numpy(x).cuda()).cpu().numpy()
    del W32
    engine = os.path.join(a.dir, "resnet50_b1_fp16.mica")
    subprocess.check_call([mica, "build", os.path.join(a.dir, "resnet50_b1.yaml"),
                           "-o", engine, "--device", "cuda", "--fp16"],
                          env=env)
    out = os.path.join(a.dir, "mica-out")
    subprocess.check_call([mica, "run", engine, "--input",
                           "x=" + os.path.join(a.dir, "x1.npy"),
                           "--output-dir", out], env=env,
                          stdout=subprocess.DEVNULL)
    got = np.load(os.path.join(out, "logits.npy")).reshape(want.shape)
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    print("logits at batch 1: max |mica fp16 - torch fp32| / max |torch| = "
          "%.2e" % err, flush=True)

    layers, W = load(a.dir, torch.float16)
    def mica_ms(n, *extra):
        line = subprocess.check_output(
            [os.path.join(a.build, "bench", "bench_model"),
             os.path.join(a.dir, "resnet50_b%d.yaml" % n), "--device", "cuda",
             "--fp16", "--runs", "50" if n == 1 else "10"] + list(extra),
            env=env, text=True)
        print(line.strip(), flush=True)
        return float(re.search(r" ms=([0-9.]+)", line).group(1))

    rows = []
    for n in batches:
        m = mica_ms(n)
        mg = mica_ms(n, "--cuda-graph")
        eager, graph = time_torch(layers, W, n)
        rows.append((n, m, mg, eager, graph))
        print("batch %d: mica %.3f ms, mica graph %.3f ms, torch eager %.3f "
              "ms, torch graph %.3f ms" % (n, m, mg, eager, graph), flush=True)

    print()
    print("ResNet-50 v1.5 float16 on %s (PyTorch %s): ms per batch, images/s"
          % (torch.cuda.get_device_name(), torch.__version__))
    print("%6s %10s %11s %10s %12s %12s %11s %11s" % (
        "batch", "mica", "mica graph", "img/s", "torch eager", "torch graph",
        "eager/mica", "graph/graph"))
    for n, m, mg, e, g in rows:
        best = min(m, mg)
        print("%6d %10.3f %11.3f %10.0f %12.3f %12.3f %10.0f%% %10.0f%%" % (
            n, m, mg, n * 1e3 / best, e, g, 100.0 * e / m, 100.0 * g / mg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
