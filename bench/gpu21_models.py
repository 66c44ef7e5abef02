#!/usr/bin/env python3
"""bench/gpu21_models.py - torchvision's ResNet-50, MobileNetV3-Large and
EfficientNet-B0 in float16 through mica next to PyTorch on the same GPU
in the same run (issue 21): each exported to ONNX at a fixed batch,
built by `mica build --fp16` (tactics timed, the timing cache of --dir
kept between builds), timed with `mica bench --no-data-transfers` (CUDA
graphs on, the GPU compute median), its logits checked against PyTorch
float32; PyTorch float16 channels last eager, replaying a CUDA graph,
and, with --compile, torch.compile (default mode), each the median of
5 trials of R runs timed with CUDA events.  The table comes last.

    python3 bench/gpu21_models.py --build BUILD_DIR [--dir OUT]
        [--models resnet50:1,256,mobilenet_v3_large:1,64,...]
        [--compile MODEL[:BATCH],...] [--build-times]

Weights are random (torchvision's init, batch norms' statistics and
scales drawn so that activations stay of order 1; nothing is
downloaded).  MobileNetV3's Hardswish is exported as x * HardSigmoid(x)
(the same function), which the ONNX importer maps.  --build-times also
builds ResNet-50 at batch 1 with a cold timing cache, again with that
cache, and with --no-autotune, and reports the three build times.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

DEFAULT = "resnet50:1,256,mobilenet_v3_large:1,64,efficientnet_b0:1,64"


class HardSwish(nn.Module):
    def forward(self, x):
        return x * F.hardsigmoid(x)


def model_of(name, seed=0):
    torch.manual_seed(seed)
    m = getattr(torchvision.models, name)(weights=None).eval()
    g = torch.Generator().manual_seed(seed + 1)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            mod.weight.data = torch.rand(n, generator=g) * 0.5 + 0.75
            mod.bias.data = torch.rand(n, generator=g) * 0.2 - 0.1
            mod.running_mean = torch.rand(n, generator=g) * 0.2 - 0.1
            mod.running_var = torch.rand(n, generator=g) * 0.5 + 0.75

    def swap(p):
        for k, c in p.named_children():
            if isinstance(c, nn.Hardswish):
                setattr(p, k, HardSwish())
            else:
                swap(c)
    swap(m)
    return m


def parse_models(text):
    out, name = [], None
    for tok in text.split(","):
        if ":" in tok:
            name, tok = tok.split(":")
        out.append((name, int(tok)))
    return out


def export(m, batch, path):
    if os.path.exists(path):
        return
    x = torch.randn(batch, 3, 224, 224)
    with torch.no_grad():
        torch.onnx.export(m, x, path, opset_version=17, dynamo=False,
                          input_names=["x"], output_names=["y"])


def sh(cmd, env, check=True):
    t0 = time.time()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.time() - t0
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd),
                                       (r.stderr or r.stdout)[-2000:]))
    return r, dt


def gpu_median(text):
    m = re.search(r"GPU Compute Time: min = [0-9.e+-]+ ms, max = "
                  r"[0-9.e+-]+ ms, mean = [0-9.e+-]+ ms, median = "
                  r"([0-9.e+-]+) ms", text)
    return float(m.group(1)) if m else float("nan")


def timed(fn, reps, trials=5):
    """Median ms of fn() from CUDA events, R runs per trial."""
    fn()
    torch.cuda.synchronize()
    v = []
    for _ in range(trials):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        v.append(a.elapsed_time(b) / reps)
    return statistics.median(v)


def time_torch(m, batch, do_compile):
    m16 = m.to("cuda", torch.float16).to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=torch.float16)
    x = x.contiguous(memory_format=torch.channels_last)
    reps = 50 if batch <= 8 else 10
    res = {}
    with torch.no_grad():
        for _ in range(3):
            m16(x)
        res["eager"] = timed(lambda: m16(x), reps)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                m16(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            m16(x)
        res["graph"] = timed(g.replay, reps)
        if do_compile:
            t0 = time.time()
            c = torch.compile(m16)
            for _ in range(3):
                c(x)
            torch.cuda.synchronize()
            res["compile_s"] = time.time() - t0
            res["compile"] = timed(lambda: c(x), reps)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", default="/tmp/mica-gpu21")
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--compile", default="")
    ap.add_argument("--build-times", action="store_true")
    ap.add_argument("--profile", default="",
                    help="MODEL:BATCH,... whose per-layer table (mica bench "
                    "--profile-layers, layer by layer) is printed too")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(a.build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(a.build, "core", ".libs"))
    mica = os.path.join(a.build, "tools", "mica")
    cache = os.path.join(a.dir, "timing-cache.txt")
    torch.backends.cudnn.benchmark = True
    compile_want = {c for c in a.compile.split(",") if c}
    rows, builds = [], []

    if a.build_times:
        m = model_of("resnet50")
        path = os.path.join(a.dir, "resnet50_b1.onnx")
        export(m, 1, path)
        cold = os.path.join(a.dir, "cold-cache.txt")
        if os.path.exists(cold):
            os.remove(cold)
        eng = os.path.join(a.dir, "bt.mica")
        for what, extra in [("tactics timed, cold cache",
                             ["--timing-cache", cold]),
                            ("tactics timed, cache warm",
                             ["--timing-cache", cold]),
                            ("--no-autotune", ["--no-autotune"])]:
            _, dt = sh([mica, "build", path, "-o", eng, "--device", "cuda",
                        "--fp16"] + extra, env)
            r, _ = sh([mica, "bench", eng, "--no-data-transfers",
                       "--duration-s", "1"], env)
            builds.append((what, dt, gpu_median(r.stdout)))
            print("build ResNet-50 b1 (%s): %.1f s, then %.3f ms" %
                  (what, dt, builds[-1][2]), flush=True)

    for name, batch in parse_models(a.models):
        m = model_of(name)
        path = os.path.join(a.dir, "%s_b%d.onnx" % (name, batch))
        export(m, batch, path)
        eng = os.path.join(a.dir, "%s_b%d.mica" % (name, batch))
        _, bt = sh([mica, "build", path, "-o", eng, "--device", "cuda",
                    "--fp16", "--timing-cache", cache], env)
        r, _ = sh([mica, "bench", eng, "--no-data-transfers"], env)
        ms = gpu_median(r.stdout)
        if "%s:%d" % (name, batch) in a.profile.split(","):
            # The per-layer table: layer by layer (markers after each).
            rp, _ = sh([mica, "bench", eng, "--no-data-transfers",
                        "--profile-layers", "--duration-s", "1"], env)
            print(rp.stdout, flush=True)
        rn, _ = sh([mica, "bench", eng, "--no-data-transfers",
                    "--no-cuda-graph", "--duration-s", "1"], env)
        ms_nog = gpu_median(rn.stdout)
        # Logits: mica float16 against PyTorch float32 on the same input.
        xin = np.random.RandomState(1).uniform(-1, 1, (batch, 3, 224, 224))
        xin = xin.astype(np.float32)
        np.save(os.path.join(a.dir, "x.npy"), xin)
        out = os.path.join(a.dir, "out")
        sh([mica, "run", eng, "--input", "x=" + os.path.join(a.dir, "x.npy"),
            "--output-dir", out], env)
        got = np.load(os.path.join(out, "y.npy"))
        with torch.no_grad():
            want = m.cuda()(torch.from_numpy(xin).cuda()).cpu().numpy()
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        t = time_torch(m, batch, name in compile_want or
                       "%s:%d" % (name, batch) in compile_want)
        rows.append((name, batch, ms, ms_nog, bt, err, t))
        print("%s b%d: mica %.3f ms (graphs), %.3f ms (layer by layer), "
              "build %.1f s, err %.1e; torch %s" %
              (name, batch, ms, ms_nog, bt, err,
               ", ".join("%s %.3f" % kv for kv in t.items())), flush=True)
        del m
        torch.cuda.empty_cache()

    print()
    print("%s, PyTorch %s, float16: GPU ms per batch (median)" %
          (torch.cuda.get_device_name(), torch.__version__))
    print("%-20s %5s %9s %9s %9s %9s %9s %11s %8s %8s" % (
        "model", "batch", "mica", "mica-nog", "eager", "graph", "compile",
        "graph/mica", "build_s", "err"))
    for name, batch, ms, nog, bt, err, t in rows:
        print("%-20s %5d %9.3f %9.3f %9.3f %9.3f %9s %10.2fx %8.1f %8.1e" % (
            name, batch, ms, nog, t["eager"], t["graph"],
            "%.3f" % t["compile"] if "compile" in t else "-",
            t["graph"] / ms, bt, err))
    for what, dt, ms in builds:
        print("build ResNet-50 b1, %s: %.1f s (then %.3f ms)" %
              (what, dt, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
