#!/usr/bin/env python3
"""bench/bench_rnn.py - an LSTM on CUDA three ways, on the same weights and
the same GPU in one run: mica's RNNv2 layer (cuDNN), the same LSTM built
from loops (tests/gen/lstm_loop.py), and PyTorch's nn.LSTM (cuDNN).

    python3 bench/bench_rnn.py --build BUILD_DIR

Default: one layer, float16, batch 64, 128 steps, input and hidden 512
(issue 12's figure).  Each form is timed as the host clock around one
forward pass plus a synchronization, the median of --runs runs after a
warm-up: mica through bench/bench_rnn (enqueue + sync, inputs already on
the GPU; then again replayed as CUDA graphs, the loops as conditional
nodes), PyTorch around lstm(x) + torch.cuda.synchronize() with x
already on the GPU.  Outputs are compared too (mica's two forms through
`mica run`, then PyTorch on the same input).  Prints a table last; needs
numpy (PyTorch optional: its rows say n/a without it).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def sh(cmd, env=None):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("bench_rnn: %s failed:\n%s%s" % (" ".join(cmd), proc.stdout,
                                                  proc.stderr))
    return proc.stdout


def torch_lstm(np, a, npz, x):
    """(ms, y) of PyTorch's nn.LSTM on the weights of npz, or None."""
    try:
        import torch
    except ImportError:
        return None, None, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return None, None, "PyTorch sees no GPU"
    dt = torch.float16 if a.dtype == "float16" else torch.float32
    lstm = torch.nn.LSTM(a.input, a.hidden, num_layers=a.layers,
                         batch_first=True).cuda().to(dt).eval()
    order = [0, 2, 3, 1]   # TensorRT's i, o, f, c as PyTorch's i, f, g, o

    def torch_order(v):
        blocks = np.split(v, 4, axis=0)
        return np.concatenate([blocks[k] for k in order], axis=0)
    with torch.no_grad():
        for l in range(a.layers):
            for tname, key in (("weight_ih", "w"), ("weight_hh", "r"),
                               ("bias_ih", "wb"), ("bias_hh", "rb")):
                v = torch_order(npz["%s%d" % (key, l)])
                getattr(lstm, "%s_l%d" % (tname, l)).copy_(
                    torch.from_numpy(v.reshape(
                        getattr(lstm, "%s_l%d" % (tname, l)).shape)))
    xt = torch.from_numpy(x).cuda().to(dt)
    times = []
    with torch.inference_mode():
        for i in range(-5, a.runs):
            t0 = time.perf_counter()
            y, _ = lstm(xt)
            torch.cuda.synchronize()
            if i >= 0:
                times.append(time.perf_counter() - t0)
        y, _ = lstm(xt)
        y = y.float().cpu().numpy()
    return 1e3 * statistics.median(times), y, torch.cuda.get_device_name()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=".", help="mica's build folder")
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--input", type=int, default=512)
    ap.add_argument("--dtype", choices=("float16", "float32"),
                    default="float16")
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    try:
        import numpy as np
    except ImportError:
        print("bench_rnn: skipped: numpy is not installed")
        return 0
    build = os.path.abspath(a.build)
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(build, "core", ".libs"))
    tmp = tempfile.mkdtemp(prefix="mica-bench-rnn-")
    gen = os.path.join(TOP, "tests", "gen", "lstm_loop.py")
    sizes = ["--layers", str(a.layers), "--batch", str(a.batch), "--steps",
             str(a.steps), "--hidden", str(a.hidden), "--input", str(a.input),
             "--dtype", a.dtype]
    npz = os.path.join(tmp, "weights.npz")
    forms = {}
    for form in ("rnnv2", "loop"):
        forms[form] = os.path.join(tmp, form + ".yaml")
        sh([sys.executable, gen, "--form", form, "-o", forms[form],
            "--save-weights", npz] + sizes)
    # Outputs: both forms and PyTorch on one input.
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (a.batch, a.steps, a.input)).astype(
        np.float16 if a.dtype == "float16" else np.float32)
    np.save(os.path.join(tmp, "x.npy"), x)
    mica = os.path.join(build, "tools", "mica")
    ys = {}
    for form, path in forms.items():
        out = os.path.join(tmp, "out_" + form)
        sh([mica, "run", path, "--device", "cuda", "--input",
            "x=" + os.path.join(tmp, "x.npy"), "--output-dir", out], env)
        ys[form] = np.load(os.path.join(
            out, "y_rnn.npy" if form == "rnnv2" else "y_loop.npy")).astype(
                np.float32)
    # Times.
    text = sh([os.path.join(build, "bench", "bench_rnn"), "-n", str(a.runs),
               forms["rnnv2"], forms["loop"]], env)
    ms, layers, why = {}, {}, {}
    for line in text.splitlines():
        f = line.split()
        for form, path in forms.items():
            if f and f[0] == path:
                ms[form], layers[form] = float(f[2]), int(f[4])
    text = sh([os.path.join(build, "bench", "bench_rnn"), "-n", str(a.runs),
               "-g", forms["rnnv2"], forms["loop"]], env)
    for line in text.splitlines():
        f = line.split()
        for form, path in forms.items():
            if f and f[0] == path:
                ms[form + "_g"] = float(f[2])
                why[form] = " ".join(f[6:])
    t_ms, t_y, gpu = torch_lstm(np, a, np.load(npz), x)
    ref = ms.get("rnnv2")
    print()
    print("LSTM, %d layer%s, %s, batch %d, %d steps, input %d, hidden %d, "
          "on %s; median of %d runs" % (
              a.layers, "s" if a.layers > 1 else "", a.dtype, a.batch,
              a.steps, a.input, a.hidden,
              gpu if t_ms is not None else "the GPU", a.runs))
    print("%-28s %10s %14s %16s" % ("form", "ms", "vs PyTorch",
                                    "max |y - RNNv2|"))
    dl = float(np.abs(ys["loop"] - ys["rnnv2"]).max())
    rows = [("mica RNNv2 (cuDNN)", ms.get("rnnv2"), 0.0),
            ("mica loops (%d layers)" % layers.get("loop", 0), ms.get("loop"),
             dl),
            ("mica RNNv2, CUDA graph", ms.get("rnnv2_g"), 0.0),
            ("mica loops, CUDA graph", ms.get("loop_g"), dl)]
    if t_ms is not None:
        rows.append(("PyTorch nn.LSTM (cuDNN)", t_ms,
                     float(np.abs(t_y - ys["rnnv2"]).max())))
    for name, v, diff in rows:
        if v is None:
            continue
        ratio = "%.2fx" % (v / t_ms) if t_ms and v else "n/a"
        print("%-28s %10.3f %14s %16.3g" % (name, v, ratio, diff))
    if t_ms is None:
        print("PyTorch: n/a (%s)" % gpu)
    if ref and ms.get("loop"):
        print("loops / RNNv2: %.2fx" % (ms["loop"] / ref))
    if ms.get("rnnv2_g") and ms.get("loop_g"):
        print("with CUDA graphs (loops: graph %s): loops / RNNv2: %.2fx" %
              (why.get("loop", "?"), ms["loop_g"] / ms["rnnv2_g"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
