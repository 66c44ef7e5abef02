#!/usr/bin/env python3
"""bench/conv_ncu.py - where ResNet-50's batch-1 float16 time goes on the
GPU, kernel by kernel, in mica and in PyTorch (issue 21's diagnosis):
Nsight Compute (ncu) times every kernel of one forward pass of each
(gpu__time_duration, with the grid size), and this script prints both
lists grouped by kernel name, largest total first, and the totals.

    python3 bench/conv_ncu.py --build BUILD_DIR --dir OUT [--ncu ncu]

mica: the engine `gpu21_models.py` builds (OUT/resnet50_b1.mica; built
here with `mica build --fp16` if missing, from OUT/resnet50_b1.onnx,
exported as gpu21_models.py does if missing) run once by `mica run`, layer by
layer; PyTorch: torchvision's ResNet-50 float16 channels last with
cudnn.benchmark, one forward pass between cudaProfilerStart and Stop
after warm-up runs.  ncu serializes kernels and times each alone, so the
sums are GPU time without launch gaps.
"""
import argparse
import csv
import io
import os
import subprocess
import sys

TORCH_PROG = r"""
import torch, torchvision
torch.backends.cudnn.benchmark = True
m = torchvision.models.resnet50(weights=None).eval().cuda().half()
m = m.to(memory_format=torch.channels_last)
x = torch.randn(1, 3, 224, 224, device="cuda", dtype=torch.float16)
x = x.contiguous(memory_format=torch.channels_last)
with torch.no_grad():
    for _ in range(5):
        m(x)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    m(x)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
"""


def ncu_csv(ncu, cmd, env, extra):
    r = subprocess.run([ncu, "--csv", "--metrics",
                        "gpu__time_duration.sum,launch__grid_size,"
                        "launch__block_size"] + extra + cmd,
                       env=env, capture_output=True, text=True)
    text = r.stdout
    start = text.find('"ID"')
    if start < 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        return []
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    kern = {}
    for row in rows:
        k = (row["ID"], row["Kernel Name"])
        e = kern.setdefault(k, {"name": row["Kernel Name"]})
        try:
            v = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        unit = row.get("Metric Unit", "")
        if row["Metric Name"] == "gpu__time_duration.sum":
            e["us"] = v / 1000.0 if unit in ("nsecond", "ns") else \
                v * 1000.0 if unit in ("msecond", "ms") else v
        elif row["Metric Name"] == "launch__grid_size":
            e["grid"] = int(v)
    return [e for e in kern.values() if "us" in e]


def summary(title, ks, out):
    total = sum(k["us"] for k in ks)
    print("\n== %s: %d kernels, %.1f us of GPU time" % (title, len(ks),
                                                       total), file=out)
    by = {}
    for k in ks:
        n = k["name"][:90]
        b = by.setdefault(n, [0, 0.0, set()])
        b[0] += 1
        b[1] += k["us"]
        b[2].add(k.get("grid", 0))
    for n, (c, us, grids) in sorted(by.items(), key=lambda v: -v[1][1])[:25]:
        print("%9.1f us %4d x %7.1f us  grids %-16s %s" % (
            us, c, us / c, ",".join(str(g) for g in sorted(grids)[:4]), n),
            file=out)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ncu", default="ncu")
    a = ap.parse_args()
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(a.build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(a.build, "core", ".libs"))
    mica = os.path.join(a.build, "tools", "mica")
    eng = os.path.join(a.dir, "resnet50_b1.mica")
    onnx = os.path.join(a.dir, "resnet50_b1.onnx")
    if not os.path.exists(eng):
        if not os.path.exists(onnx):
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import gpu21_models
            os.makedirs(a.dir, exist_ok=True)
            gpu21_models.export(gpu21_models.model_of("resnet50"), 1, onnx)
        subprocess.check_call([mica, "build", onnx, "-o", eng, "--device",
                               "cuda", "--fp16"], env=env)
    out_dir = os.path.join(a.dir, "ncu-out")
    mk = ncu_csv(a.ncu, [mica, "run", eng, "--output-dir", out_dir], env, [])
    prog = os.path.join(a.dir, "torch_rn50.py")
    with open(prog, "w") as f:
        f.write(TORCH_PROG)
    tk = ncu_csv(a.ncu, [sys.executable, prog], env,
                 ["--profile-from-start", "off"])
    tm = summary("mica ResNet-50 b1 float16 (mica run, layer by layer)",
                 mk, sys.stdout)
    tt = summary("PyTorch ResNet-50 b1 float16 channels last", tk,
                 sys.stdout)
    print("\nGPU time of one forward pass, kernels alone: mica %.1f us, "
          "PyTorch %.1f us" % (tm, tt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
