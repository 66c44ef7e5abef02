#!/usr/bin/env python3
"""tests/gen/lstm_loop.py - write the manifest of an L-layer LSTM built
from loops (Iterator, Recurrence, MatrixMultiply, ElementWise, Activation,
LoopOutput, with Constant weights), the same LSTM as one RNNv2 layer, or
both in one manifest, on the same random weights.

    lstm_loop.py --form both --layers 2 --hidden 4 --input 3 --steps 5 \\
        --batch 2 --inline -o tests/manifests/rnn/lstm_loop.yaml
    lstm_loop.py --form loop --layers 1 --hidden 512 --input 512 \\
        --steps 128 --batch 64 --dtype float16 -o /tmp/b/loop.yaml

Without --inline the weights go to .npy files beside the manifest
(rnn_*.npy, shared by every form written into that folder with the same
seed and sizes), and `--save-weights FILE.npz` also writes them in the
RNNv2 layout for other programs (bench/bench_rnn.py).

The loop form, one loop per layer, unidirectional, zero initial states:
before the loop, for each gate g of TensorRT's order (input, output,
forget, cell), xg = x W_g^T + (Wb_g + Rb_g) for every step at once (a
MatrixMultiply over [N, T, in]); in the loop, per step t, with Iterators
over axis 1 of each xg,
    pre_g = xg[t] + h R_g^T         (MatrixMultiply, ElementWise sum)
    i, o, f = sigmoid(pre), c~ = tanh(pre_c)
    c' = f c + i c~,  h' = o tanh(c')
and LoopOutputs: every h' concatenated along axis 1 (the next layer's
input, the last layer's y), and the last value of each Recurrence (h
and c after the last step).  The RNNv2 form: one
layer with the same weights, input and recurrent biases separate.
Inputs: x [N, T, E].  Outputs: loop y_loop, h_loop_l, c_loop_l for each
layer l; RNNv2 y_rnn, h_rnn [N, L, H], c_rnn.
"""
import argparse
import os
import sys

import numpy as np

import rnn_ref

GATE_NAMES = ("i", "o", "f", "c")   # TensorRT's order within an entry


def weights(args):
    """RNNv2 lists w, r, wb, rb (float32) for the arguments' sizes."""
    rng = np.random.default_rng(args.seed)
    scale = 1.0 / np.sqrt(args.hidden)
    return rnn_ref.random_weights(rng, "lstm", args.layers, args.hidden,
                                  args.input, scale=scale)


class Blobs:
    """The manifest's `weights` section: inline or .npy files."""

    def __init__(self, args, folder):
        self.args, self.folder, self.lines = args, folder, []

    def add(self, name, array):
        a = np.asarray(array, np.float16 if self.args.dtype == "float16"
                       else np.float32)
        shape = "[%s]" % ", ".join(map(str, a.shape))
        if self.args.inline:
            fmt = "%.9g" if a.dtype == np.float32 else "%.5g"
            data = ", ".join(fmt % v for v in a.reshape(-1))
            self.lines.append("  %s: {dtype: %s, shape: %s, data: [%s]}" % (
                name, self.args.dtype, shape, data))
        else:
            file = "rnn_%s_%s.npy" % (self.tag(), name)
            np.save(os.path.join(self.folder, file), a)
            self.lines.append("  %s: {npy: %s}" % (name, file))
        return name

    def tag(self):
        a = self.args
        return "s%d_l%dh%de%d_%s" % (a.seed, a.layers, a.hidden, a.input,
                                     a.dtype)


def rnnv2_layers(args, blobs, w, r, wb, rb):
    names = {}
    for tag, lst in (("W", w), ("R", r), ("Wb", wb), ("Rb", rb)):
        names[tag] = [blobs.add("%s%d" % (tag, k), a)
                      for k, a in enumerate(lst)]
    return [
        "  - name: rnn\n    type: RNNv2\n    inputs: [x]\n"
        "    outputs: [y_rnn, h_rnn, c_rnn]\n"
        "    params: {op: lstm, layers: %d, hidden_size: %d, "
        "max_seq_length: %d,\n"
        "             weights: [%s],\n"
        "             recurrent_weights: [%s],\n"
        "             biases: [%s],\n"
        "             recurrent_biases: [%s]}" % (
            args.layers, args.hidden, args.steps, ", ".join(names["W"]),
            ", ".join(names["R"]), ", ".join(names["Wb"]),
            ", ".join(names["Rb"]))]


def layer(name, type_, inputs, outputs, params=None, loop=None):
    s = "  - {name: %s, type: %s" % (name, type_)
    if loop:
        s += ", loop: %s" % loop
    s += ", inputs: [%s], outputs: [%s]" % (", ".join(inputs),
                                            ", ".join(outputs))
    if params:
        s += ", params: {%s}" % params
    return s + "}"


def loop_layers(args, blobs, w, r, wb, rb):
    H, N, T = args.hidden, args.batch, args.steps
    out = [layer("zeros_c", "Constant", [], ["zeros"],
                 "weights: %s, shape: [%d, %d]" % (
                     blobs.add("Z", np.zeros((N, H))), N, H)),
           layer("steps_c", "Constant", [], ["steps"],
                 "weights: {dtype: int32, shape: [], data: [%d]}, "
                 "shape: []" % T)]
    x = "x"
    for l in range(args.layers):
        W = w[l].reshape(4 * H, -1)
        R = r[l].reshape(4 * H, H)
        B = (wb[l] + rb[l]).reshape(4 * H)
        E = W.shape[1]
        loop = "L%d" % l
        pre = {}
        for g, gn in enumerate(GATE_NAMES):
            rows = slice(g * H, (g + 1) * H)
            p = "l%d%s" % (l, gn)
            out += [
                layer(p + "_Wc", "Constant", [], [p + "_W"],
                      "weights: %s, shape: [1, %d, %d]" % (
                          blobs.add(p.upper() + "W", W[rows][None]), H, E)),
                layer(p + "_Bc", "Constant", [], [p + "_B"],
                      "weights: %s, shape: [1, 1, %d]" % (
                          blobs.add(p.upper() + "B", B[rows][None, None]), H)),
                layer(p + "_Rc", "Constant", [], [p + "_R"],
                      "weights: %s, shape: [%d, %d]" % (
                          blobs.add(p.upper() + "R", R[rows]), H, H)),
                layer(p + "_xw", "MatrixMultiply", [x, p + "_W"], [p + "_xw"],
                      "op_b: transpose"),
                layer(p + "_xwb", "ElementWise", [p + "_xw", p + "_B"],
                      [p + "_xg"], "op: sum"),
                layer(p + "_it", "Iterator", [p + "_xg"], [p + "_xt"],
                      "axis: 1", loop),
                layer(p + "_hr", "MatrixMultiply", ["h%d" % l, p + "_R"],
                      [p + "_hr"], "op_b: transpose"),
                layer(p + "_pre", "ElementWise", [p + "_xt", p + "_hr"],
                      [p + "_pre"], "op: sum"),
                layer(p + "_act", "Activation", [p + "_pre"], [p + "_a"],
                      "type: %s" % ("tanh" if gn == "c" else "sigmoid")),
            ]
            pre[gn] = p + "_a"
        q = "l%d" % l
        out += [
            layer(q + "_h", "Recurrence", ["zeros", q + "_hn"], ["h%d" % l],
                  loop=loop),
            layer(q + "_c", "Recurrence", ["zeros", q + "_cn"], ["c%d" % l],
                  loop=loop),
            layer(q + "_fc", "ElementWise", [pre["f"], "c%d" % l],
                  [q + "_fc"], "op: prod"),
            layer(q + "_ic", "ElementWise", [pre["i"], pre["c"]], [q + "_ic"],
                  "op: prod"),
            layer(q + "_cnew", "ElementWise", [q + "_fc", q + "_ic"],
                  [q + "_cn"], "op: sum"),
            layer(q + "_tc", "Activation", [q + "_cn"], [q + "_tc"],
                  "type: tanh"),
            layer(q + "_hnew", "ElementWise", [pre["o"], q + "_tc"],
                  [q + "_hn"], "op: prod"),
            layer(q + "_ys", "LoopOutput", [q + "_hn", "steps"],
                  ["y_loop" if l == args.layers - 1 else q + "_y"],
                  "kind: concatenate, axis: 1", loop),
            layer(q + "_hlast", "LoopOutput", ["h%d" % l],
                  ["h_loop_%d" % l], "kind: last_value", loop),
            layer(q + "_clast", "LoopOutput", ["c%d" % l],
                  ["c_loop_%d" % l], "kind: last_value", loop),
        ]
        x = q + "_y"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--form", choices=("loop", "rnnv2", "both"),
                    default="both")
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=4)
    ap.add_argument("--input", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--dtype", choices=("float32", "float16"),
                    default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inline", action="store_true",
                    help="weights inline in the manifest")
    ap.add_argument("--save-weights", metavar="FILE.npz",
                    help="also save the RNNv2 lists (w0.., r0.., wb0.., rb0..)")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    w, r, wb, rb = weights(args)
    if args.dtype == "float16":   # both forms see the float16 values
        w, r, wb, rb = ([a.astype(np.float16).astype(np.float32) for a in lst]
                        for lst in (w, r, wb, rb))
    blobs = Blobs(args, os.path.dirname(os.path.abspath(args.output)))
    layers, outputs = [], []
    if args.form in ("loop", "both"):
        layers += loop_layers(args, blobs, w, r, wb, rb)
        outputs += ["y_loop"] + ["h_loop_%d" % l for l in range(args.layers)]
        outputs += ["c_loop_%d" % l for l in range(args.layers)]
    if args.form in ("rnnv2", "both"):
        layers += rnnv2_layers(args, blobs, w, r, wb, rb)
        outputs += ["y_rnn", "h_rnn", "c_rnn"]
    if args.save_weights:
        np.savez(args.save_weights,
                 **{"%s%d" % (t, k): a for t, lst in
                    (("w", w), ("r", r), ("wb", wb), ("rb", rb))
                    for k, a in enumerate(lst)})
    text = [
        "# Written by tests/gen/lstm_loop.py %s; do not edit." % " ".join(
            sys.argv[1:]),
        "# A %d-layer LSTM (hidden %d, input %d) over %d x %d steps as %s." % (
            args.layers, args.hidden, args.input, args.batch, args.steps,
            {"loop": "loops", "rnnv2": "one RNNv2 layer",
             "both": "loops and as one RNNv2 layer, same weights"}[args.form]),
        "mica: 1",
        "name: lstm-%s" % args.form,
        "inputs:",
        "  x: {dtype: %s, shape: [%d, %d, %d]}" % (
            args.dtype, args.batch, args.steps, args.input),
        "weights:"] + blobs.lines + ["layers:"] + layers + [
        "outputs: [%s]" % ", ".join(outputs), ""]
    with open(args.output, "w") as f:
        f.write("\n".join(text))


if __name__ == "__main__":
    main()
