#!/usr/bin/env python3
"""tests/gen/rnn_onnx_check.py - mica's RNNv2 layer against ONNX Runtime's
RNN, LSTM and GRU operators on the same weights: a second source for the
gate order (ONNX's LSTM iofc and GRU zrh are TensorRT's), the GRU's reset
gate (linear_before_reset = 1), ragged bidirectional sequences and two
stacked layers (one ONNX operator per layer).  Prints TAP; run by
tests/test_rnn_onnx.sh:

    rnn_onnx_check.py MICA_BIN [DEVICE]

needs numpy, onnx and onnxruntime (the caller checks).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

GATES = {"relu": 1, "tanh": 1, "lstm": 4, "gru": 3}
# name, op, layers, bidirectional, states, ragged
CASES = [
    ("lstm_1l_uni_states", "lstm", 1, False, True, False),
    ("lstm_1l_bi_ragged", "lstm", 1, True, True, True),
    ("lstm_2l_bi_ragged", "lstm", 2, True, False, True),
    ("gru_1l_uni_states", "gru", 1, False, True, False),
    ("gru_2l_bi_ragged", "gru", 2, True, True, True),
    ("rnn_relu_1l_bi_ragged", "relu", 1, True, False, True),
    ("rnn_tanh_2l_uni_states", "tanh", 2, False, True, False),
]
N, T, E, H = 3, 5, 4, 6


def onnx_layer(op, bi, x, w, r, b, lens, h0, c0):
    """One ONNX operator over x [T, N, in]: (Y [T, D, N, H], Y_h, Y_c)."""
    D = 2 if bi else 1
    direction = "bidirectional" if bi else "forward"
    kind = {"lstm": "LSTM", "gru": "GRU"}.get(op, "RNN")
    attrs = {"hidden_size": H, "direction": direction}
    if kind == "GRU":
        attrs["linear_before_reset"] = 1
    if kind == "RNN":
        attrs["activations"] = [op.capitalize()] * D
    names = ["X", "W", "R", "B", "sequence_lens", "initial_h"]
    feeds = {"X": x, "W": w, "R": r, "B": b, "sequence_lens": lens,
             "initial_h": h0}
    if kind == "LSTM":
        names.append("initial_c")
        feeds["initial_c"] = c0
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, names, outs, **attrs)
    inputs = [helper.make_tensor_value_info(
        k, TensorProto.INT32 if k == "sequence_lens" else TensorProto.FLOAT,
        list(feeds[k].shape)) for k in names]
    outputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, None)
               for k in outs]
    graph = helper.make_graph([node], "rnn", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    res = sess.run(None, feeds)
    return res[0], res[1], (res[2] if kind == "LSTM" else None)


def case_data(rng, op, layers, bi, states, ragged):
    D, G = (2 if bi else 1), GATES[op]
    lists = {"W": [], "R": [], "Wb": [], "Rb": []}
    for l in range(layers):
        for _ in range(D):
            inp = E if l == 0 else D * H
            lists["W"].append(rng.uniform(-.6, .6, (G * H, inp)))
            lists["R"].append(rng.uniform(-.6, .6, (G * H, H)))
            lists["Wb"].append(rng.uniform(-.3, .3, G * H))
            lists["Rb"].append(rng.uniform(-.3, .3, G * H))
    lists = {k: [a.astype(np.float32) for a in v] for k, v in lists.items()}
    x = rng.uniform(-1, 1, (N, T, E)).astype(np.float32)
    h0 = (rng.uniform(-.5, .5, (N, layers * D, H)) if states
          else np.zeros((N, layers * D, H))).astype(np.float32)
    c0 = (rng.uniform(-.5, .5, (N, layers * D, H)) if states
          else np.zeros((N, layers * D, H))).astype(np.float32)
    lens = np.array([T, 2, 4] if ragged else [T] * N, np.int32)
    return lists, x, h0, c0, lens


def onnx_expected(op, layers, bi, lists, x, h0, c0, lens):
    D = 2 if bi else 1
    seq = x.transpose(1, 0, 2)               # [T, N, E]
    hy, cy = [], []
    for l in range(layers):
        e = slice(l * D, (l + 1) * D)
        w = np.stack(lists["W"][e])
        r = np.stack(lists["R"][e])
        b = np.stack([np.concatenate([wb, rb]) for wb, rb in
                      zip(lists["Wb"][e], lists["Rb"][e])])
        y, yh, yc = onnx_layer(op, bi, seq, w, r, b, lens,
                               h0[:, e].transpose(1, 0, 2).copy(),
                               c0[:, e].transpose(1, 0, 2).copy())
        # Padding past each length: zeros, as mica's.
        mask = np.arange(T)[:, None] < lens[None, :]          # [T, N]
        y = y * mask[:, None, :, None]
        seq = y.transpose(0, 2, 1, 3).reshape(T, N, D * H)   # [T, N, D*H]
        hy.append(yh.transpose(1, 0, 2))
        if yc is not None:
            cy.append(yc.transpose(1, 0, 2))
    want = {"y": seq.transpose(1, 0, 2), "hy": np.concatenate(hy, axis=1)}
    if cy:
        want["cy"] = np.concatenate(cy, axis=1)
    return want


def manifest(folder, name, op, layers, bi, lists):
    lines, names = [], {}
    for key, lst in lists.items():
        names[key] = []
        for k, a in enumerate(lst):
            wn = "%s%d" % (key, k)
            np.save(os.path.join(folder, "%s_%s.npy" % (name, wn)), a)
            lines.append("  %s: {npy: %s_%s.npy}" % (wn, name, wn))
            names[key].append(wn)
    D = 2 if bi else 1
    ins = ["x", "h0"] + (["c0"] if op == "lstm" else ["~"]) + ["lens"]
    outs = ["y", "hy"] + (["cy"] if op == "lstm" else [])
    text = ["mica: 1", "inputs:",
            "  x: {dtype: float32, shape: [%d, %d, %d]}" % (N, T, E),
            "  h0: {dtype: float32, shape: [%d, %d, %d]}" % (N, layers * D, H)]
    if op == "lstm":
        text.append("  c0: {dtype: float32, shape: [%d, %d, %d]}" % (
            N, layers * D, H))
    text += ["  lens: {dtype: int32, shape: [%d]}" % N, "weights:"] + lines
    text += [
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
    path = os.path.join(folder, name + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(text))
    return path


def main():
    mica = sys.argv[1]
    device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
    rng = np.random.default_rng(11)
    folder = tempfile.mkdtemp(prefix="mica-rnn-onnx-")
    print("1..%d" % len(CASES))
    failed = 0
    for i, (name, op, layers, bi, states, ragged) in enumerate(CASES, 1):
        lists, x, h0, c0, lens = case_data(rng, op, layers, bi, states, ragged)
        want = onnx_expected(op, layers, bi, lists, x, h0, c0, lens)
        path = manifest(folder, name, op, layers, bi, lists)
        args = [mica, "run", path, "--device", device, "--output-dir",
                os.path.join(folder, name)]
        for k, v in (("x", x), ("h0", h0), ("c0", c0), ("lens", lens)):
            if k == "c0" and op != "lstm":
                continue
            f = os.path.join(folder, "%s_in_%s.npy" % (name, k))
            np.save(f, v)
            args += ["--input", "%s=%s" % (k, f)]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            print("not ok %d - %s: mica run: %s" % (
                i, name, proc.stderr.strip().replace("\n", " ")))
            failed += 1
            continue
        worst, where = 0.0, ""
        for k, v in want.items():
            got = np.load(os.path.join(folder, name, k + ".npy"))
            d = (float(np.abs(got - v).max()) if got.shape == v.shape
                 else float("inf"))
            if d > worst:
                worst, where = d, k
        good = worst <= 1e-4
        failed += not good
        print("%s %d - %s on %s against ONNX Runtime (largest difference "
              "%.3g%s)" % ("ok" if good else "not ok", i, name, device, worst,
                           " in " + where if where else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
