#!/usr/bin/env python3
"""tests/gen/rnn_torch_check.py - check mica's RNNv2 layer, gate order
included, against PyTorch's nn.RNN, nn.LSTM and nn.GRU on the same
weights.  For the GPU machine (PyTorch is no dependency of the project):

    python3 tests/gen/rnn_torch_check.py --build BUILD_DIR [--device cuda]

PyTorch's parameters are rearranged into mica's layout: LSTM gates
i, f, g, o become TensorRT's input, output, forget, cell; GRU r, z, n
become update, reset, hidden (PyTorch's GRU applies the reset gate after
the recurrent product, as mica's).  Each case writes a manifest with the
weights as .npy files, runs it with `mica run` on the CPU and on CUDA,
and compares y, the final hidden and cell states with PyTorch's (in
float64 on the CPU, ragged batches through pack_padded_sequence).
float16 cases round inputs and weights to float16 first.  Prints one
line per case and device; exits 1 if any differs, 0 with a note when
PyTorch is not installed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

# PyTorch's gate blocks in mica's (TensorRT's) order.
TORCH_TO_MICA = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "relu": [0],
                 "tanh": [0]}

# name, op, layers, bidirectional, states, ragged, dtype
CASES = [
    ("lstm_1l_uni", "lstm", 1, False, True, False, "float32"),
    ("lstm_2l_bi_ragged", "lstm", 2, True, True, True, "float32"),
    ("gru_1l_uni", "gru", 1, False, True, False, "float32"),
    ("gru_2l_bi_ragged", "gru", 2, True, True, True, "float32"),
    ("rnn_relu_1l_bi", "relu", 1, True, False, True, "float32"),
    ("rnn_tanh_2l_uni", "tanh", 2, False, True, False, "float32"),
    ("lstm_2l_bi_half", "lstm", 2, True, True, True, "float16"),
    ("gru_1l_uni_half", "gru", 1, False, True, False, "float16"),
]
N, T, E, H = 3, 6, 5, 8


def torch_module(torch, op, layers, bi):
    kw = dict(input_size=E, hidden_size=H, num_layers=layers,
              bidirectional=bi, batch_first=True)
    if op == "lstm":
        return torch.nn.LSTM(**kw)
    if op == "gru":
        return torch.nn.GRU(**kw)
    return torch.nn.RNN(nonlinearity=op, **kw)


def reorder(a, op):
    blocks = np.split(a, len(TORCH_TO_MICA[op]), axis=0)
    return np.concatenate([blocks[k] for k in TORCH_TO_MICA[op]], axis=0)


def write_case(torch, folder, case, rng):
    """The manifest, inputs and PyTorch's expected outputs of one case."""
    name, op, layers, bi, states, ragged, dtype = case
    D = 2 if bi else 1
    np_dt = np.float16 if dtype == "float16" else np.float32
    rd = lambda a: np.asarray(a, np.float32).astype(np_dt).astype(np.float64)
    mod = torch_module(torch, op, layers, bi).double()
    with torch.no_grad():  # PyTorch's own parameters, rounded to the dtype
        for p in mod.parameters():
            p.copy_(torch.from_numpy(rd(p.detach().numpy())))
    lists = {"W": [], "R": [], "Wb": [], "Rb": []}
    for l in range(layers):
        for d in range(D):
            sfx = "_l%d%s" % (l, "_reverse" if d else "")
            for key, tname in (("W", "weight_ih"), ("R", "weight_hh"),
                               ("Wb", "bias_ih"), ("Rb", "bias_hh")):
                a = getattr(mod, tname + sfx).detach().numpy()
                lists[key].append(reorder(a, op))
    x = rd(rng.uniform(-1, 1, (N, T, E)))
    h0 = rd(rng.uniform(-0.5, 0.5, (N, layers * D, H)))
    c0 = rd(rng.uniform(-0.5, 0.5, (N, layers * D, H)))
    lens = (np.array([T, 2, 4], np.int32) if ragged
            else np.full(N, T, np.int32))
    # PyTorch: states [L*D, N, H]; ragged batches packed.
    xt = torch.from_numpy(x)
    hx = torch.from_numpy(h0.transpose(1, 0, 2).copy())
    cx = torch.from_numpy(c0.transpose(1, 0, 2).copy())
    init = ((hx, cx) if op == "lstm" else hx) if states else None
    with torch.no_grad():
        if ragged:
            packed = torch.nn.utils.rnn.pack_padded_sequence(
                xt, torch.from_numpy(lens.astype(np.int64)), batch_first=True,
                enforce_sorted=False)
            out, fin = mod(packed, init)
            y, _ = torch.nn.utils.rnn.pad_packed_sequence(
                out, batch_first=True, total_length=T)
        else:
            y, fin = mod(xt, init)
    hn, cn = fin if op == "lstm" else (fin, None)
    want = {"y": y.numpy(), "hy": hn.numpy().transpose(1, 0, 2)}
    if cn is not None:
        want["cy"] = cn.numpy().transpose(1, 0, 2)
    # mica: inputs and weights as .npy, one RNNv2 layer.
    inputs = {"x": x.astype(np_dt)}
    ins = ["x"]
    if states:
        inputs["h0"] = h0.astype(np_dt)
        ins.append("h0")
        if op == "lstm":
            inputs["c0"] = c0.astype(np_dt)
            ins.append("c0")
    if ragged:
        while len(ins) < 3:
            ins.append("~")
        inputs["lens"] = lens
        ins.append("lens")
    weights = []
    names = {}
    for key, lst in lists.items():
        names[key] = []
        for k, a in enumerate(lst):
            wn = "%s%d" % (key, k)
            np.save(os.path.join(folder, name + "_" + wn + ".npy"),
                    a.astype(np_dt))
            weights.append("  %s: {npy: %s_%s.npy}" % (wn, name, wn))
            names[key].append(wn)
    outs = ["y", "hy"] + (["cy"] if op == "lstm" else [])
    text = [
        "mica: 1", "inputs:"] + [
        "  %s: {dtype: %s, shape: [%s]}" % (
            k, "int32" if k == "lens" else dtype,
            ", ".join(map(str, v.shape))) for k, v in inputs.items()] + [
        "weights:"] + weights + [
        "layers:",
        "  - name: rnn",
        "    type: RNNv2",
        "    inputs: [%s]" % ", ".join(ins),
        "    outputs: [%s]" % ", ".join(outs),
        "    params: {op: %s, layers: %d, hidden_size: %d, max_seq_length: %d,"
        % (op, layers, H, T),
        "             direction: %s," % ("bidirection" if bi
                                         else "unidirection"),
        "             weights: [%s]," % ", ".join(names["W"]),
        "             recurrent_weights: [%s]," % ", ".join(names["R"]),
        "             biases: [%s]," % ", ".join(names["Wb"]),
        "             recurrent_biases: [%s]}" % ", ".join(names["Rb"]),
        "outputs: [%s]" % ", ".join(outs), ""]
    manifest = os.path.join(folder, name + ".yaml")
    with open(manifest, "w") as f:
        f.write("\n".join(text))
    files = []
    for k, v in inputs.items():
        path = os.path.join(folder, "%s_in_%s.npy" % (name, k))
        np.save(path, v)
        files += ["--input", "%s=%s" % (k, path)]
    return manifest, files, want


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True,
                    help="build folder (tools/mica, modules/.libs)")
    ap.add_argument("--device", action="append",
                    help="cpu and/or cuda (default: both)")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("rnn_torch_check: skipped: PyTorch is not installed")
        return 0
    devices = args.device or ["cpu", "cuda"]
    mica = os.path.join(args.build, "tools", "mica")
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(os.path.abspath(args.build),
                                            "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(os.path.abspath(args.build),
                                            "core", ".libs"))
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    failed = 0
    folder = tempfile.mkdtemp(prefix="mica-rnn-torch-")
    print("%-20s %-6s %-8s %12s %12s %12s  %s" % (
        "case", "device", "dtype", "y", "hidden", "cell", "result"))
    for case in CASES:
        manifest, files, want = write_case(torch, folder, case, rng)
        tol = 2e-2 if case[6] == "float16" else 1e-4
        for dev in devices:
            out = os.path.join(folder, "%s_%s" % (case[0], dev))
            proc = subprocess.run(
                [mica, "run", manifest, "--device", dev, "--output-dir", out]
                + files, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                print("%-20s %-6s %-8s %s" % (case[0], dev, case[6],
                                               "FAIL: " + proc.stderr.strip()))
                failed += 1
                continue
            diffs = {}
            for k, v in want.items():
                got = np.load(os.path.join(out, k + ".npy")).astype(np.float64)
                diffs[k] = (float(np.abs(got - v).max()) if got.shape == v.shape
                            else float("inf"))
            good = all(d <= tol for d in diffs.values())
            failed += not good
            print("%-20s %-6s %-8s %12.3g %12.3g %12s  %s" % (
                case[0], dev, case[6], diffs["y"], diffs["hy"],
                "%.3g" % diffs["cy"] if "cy" in diffs else "-",
                "ok" if good else "FAIL (tolerance %g)" % tol))
    print("files in %s" % folder)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
