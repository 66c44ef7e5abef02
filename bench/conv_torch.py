#!/usr/bin/env python3
"""bench/conv_torch.py - torch.nn.functional.conv2d, channels last,
float16, with bias, on the convolutions of bench/resnet50_convs.txt at
batch 1 and 256: PyTorch's side of bench_conv.

    python3 bench/conv_torch.py [--shapes FILE] [--mica CSV] [--batches 1,256]

torch.backends.cudnn.benchmark is on (PyTorch times cuDNN's algorithms on
the first call of a shape, as bench_conv's cuDNN columns do).  Timing as
bench_conv's: R calls queued then one synchronization, per call, the
median of 5 trials after a warm-up.  With --mica (the CSV that
`bench_conv --csv` wrote in the same session), the table puts mica's
times beside PyTorch's and the share of PyTorch's time mica takes.
"""
import argparse
import csv
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def shapes(path):
    out = []
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        v = [int(t) for t in f[1:]]
        g = v[8] if len(v) > 8 else 1
        out.append((f[0], v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], g))
    return out


def time_conv(s, n):
    name, c, h, w, k, r, sk, stride, pad, g = s
    dev = torch.device("cuda")
    x = torch.randn(n, c, h, w, device=dev, dtype=torch.float16)
    x = x.to(memory_format=torch.channels_last)
    wt = torch.randn(k, c // g, r, sk, device=dev, dtype=torch.float16)
    wt = wt.to(memory_format=torch.channels_last)
    b = torch.randn(k, device=dev, dtype=torch.float16)
    reps = 200 if n == 1 else 10
    with torch.no_grad():
        for _ in range(3):
            F.conv2d(x, wt, b, stride, pad, 1, g)
        torch.cuda.synchronize()
        v = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps):
                F.conv2d(x, wt, b, stride, pad, 1, g)
            torch.cuda.synchronize()
            v.append((time.perf_counter() - t0) / reps)
    return 1e3 * statistics.median(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=os.path.join(HERE,
                                                     "resnet50_convs.txt"))
    ap.add_argument("--mica")
    ap.add_argument("--batches", default="1,256")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("conv_torch: no CUDA device")
        return 1
    torch.backends.cudnn.benchmark = True
    mica = {}
    if a.mica:
        for row in csv.DictReader(open(a.mica)):
            mica[(row["name"], int(row["batch"]))] = row
    print("device: %s, PyTorch %s, cuDNN %s" % (
        torch.cuda.get_device_name(), torch.__version__,
        torch.backends.cudnn.version()))
    for n in [int(b) for b in a.batches.split(",")]:
        print("\nconv2d float16 channels_last, batch %d (ms per call)" % n)
        print("%-8s %10s %10s %10s %10s %9s" % (
            "conv", "torch", "cuDNN NCHW", "cuDNN NHWC", "mica",
            "torch/mica"))
        tot_t = tot_m = 0.0
        for s in shapes(a.shapes):
            t = time_conv(s, n)
            m = mica.get((s[0], n))
            if m:
                mm = float(m["mica_ms"])
                tot_t += t
                tot_m += mm
                print("%-8s %10.4f %10.4f %10.4f %10.4f %8.1f%%" % (
                    s[0], t, float(m["cudnn_nchw_ms"]),
                    float(m["cudnn_nhwc_ms"]), mm, 100.0 * t / mm), flush=True)
            else:
                tot_t += t
                print("%-8s %10.4f" % (s[0], t), flush=True)
        if tot_m:
            print("%-8s %10.4f %10s %10s %10.4f %8.1f%%" % (
                "sum", tot_t, "", "", tot_m, 100.0 * tot_t / tot_m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
