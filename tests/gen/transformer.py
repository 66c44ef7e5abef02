#!/usr/bin/env python3
"""tests/gen/transformer.py - a transformer encoder block as a mica
manifest, with its weights, an input and NumPy's output.

Writes tests/manifests/transformer/: encoder.yaml, weights.bin (raw
little-endian float32, every weights entry at its offset), x.npy and
y.npy (the expected output).  The block (pre-norm, as in GPT-2):

    h = x + Wo(attention(LN1(x)))
    y = h + W2(gelu(W1(LN2(h))))

with layer norm from Reduce/ElementWise/Unary, two heads of attention
from MatrixMultiply, Shuffle and SoftMax, and the exact GELU
0.5 x (1 + erf(x / sqrt 2)) from Unary erf.  Run it again after changing
the block:

    /work/venv/bin/python tests/gen/transformer.py
"""
import math
import os

import numpy as np

SEQ, D, HEADS, FF = 8, 16, 2, 32
DH = D // HEADS
EPS = 1e-5
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "manifests", "transformer")
rng = np.random.default_rng(11)


def rand(*shape, scale=0.3):
    return rng.uniform(-scale, scale, size=shape).astype(np.float32)


w = {
    "ln1_g": (1 + rand(1, D, scale=0.1)), "ln1_b": rand(1, D, scale=0.1),
    "wq": rand(D, D), "bq": rand(1, D), "wk": rand(D, D), "bk": rand(1, D),
    "wv": rand(D, D), "bv": rand(1, D), "wo": rand(D, D), "bo": rand(1, D),
    "ln2_g": (1 + rand(1, D, scale=0.1)), "ln2_b": rand(1, D, scale=0.1),
    "w1": rand(D, FF), "b1": rand(1, FF), "w2": rand(FF, D), "b2": rand(1, D),
    "eps": np.full((1, 1), EPS, np.float32),
    "scale": np.full((1, 1, 1), 1 / math.sqrt(DH), np.float32),
    "half": np.full((1, 1), 0.5, np.float32),
    "one": np.full((1, 1), 1.0, np.float32),
    "rsqrt2": np.full((1, 1), 1 / math.sqrt(2), np.float32),
}
x = rng.uniform(-2, 2, size=(SEQ, D)).astype(np.float32)


def reference(x):
    p = {k: v.astype(np.float64) for k, v in w.items()}
    x = x.astype(np.float64)

    def ln(t, g, b):
        m = t.mean(axis=1, keepdims=True)
        c = t - m
        v = (c * c).mean(axis=1, keepdims=True)
        return c / np.sqrt(v + EPS) * g + b

    def heads(t):  # [SEQ, D] -> [HEADS, SEQ, DH]
        return t.reshape(SEQ, HEADS, DH).transpose(1, 0, 2)

    a = ln(x, p["ln1_g"], p["ln1_b"])
    q, k, v = (heads(a @ p["w" + n] + p["b" + n]) for n in "qkv")
    s = q @ k.transpose(0, 2, 1) / math.sqrt(DH)
    s = np.exp(s - s.max(axis=2, keepdims=True))
    s = s / s.sum(axis=2, keepdims=True)
    ctx = (s @ v).transpose(1, 0, 2).reshape(SEQ, D)
    h = x + ctx @ p["wo"] + p["bo"]
    f = ln(h, p["ln2_g"], p["ln2_b"]) @ p["w1"] + p["b1"]
    erf = np.vectorize(math.erf)
    f = 0.5 * f * (1 + erf(f / math.sqrt(2)))
    return (h + f @ p["w2"] + p["b2"]).astype(np.float32)


def layer(name, type_, inputs, output, params=None):
    s = "  - {name: %s, type: %s, inputs: [%s], outputs: [%s]" % (
        name, type_, ", ".join(inputs), output)
    if params:
        s += ", params: {%s}" % ", ".join("%s: %s" % kv for kv in params)
    return s + "}"


def ew(name, op, a, b, out):
    return layer(name, "ElementWise", [a, b], out, [("op", op)])


def layer_norm(p, t, g, b):
    return [
        layer(p + "_mean", "Reduce", [t], p + "_m",
              [("op", "avg"), ("axes", "[1]"), ("keep_dims", "true")]),
        ew(p + "_center", "sub", t, p + "_m", p + "_c"),
        ew(p + "_square", "prod", p + "_c", p + "_c", p + "_c2"),
        layer(p + "_var", "Reduce", [p + "_c2"], p + "_v",
              [("op", "avg"), ("axes", "[1]"), ("keep_dims", "true")]),
        ew(p + "_veps", "sum", p + "_v", "eps", p + "_ve"),
        layer(p + "_std", "Unary", [p + "_ve"], p + "_sd", [("op", "sqrt")]),
        ew(p + "_norm", "div", p + "_c", p + "_sd", p + "_n"),
        ew(p + "_gain", "prod", p + "_n", g, p + "_ng"),
        ew(p + "_bias", "sum", p + "_ng", b, p),
    ]


def linear(p, t, wname, bname):
    return [layer(p + "_mm", "MatrixMultiply", [t, wname], p + "_w"),
            ew(p + "_add", "sum", p + "_w", bname, p)]


def split_heads(p, t):
    return layer(p + "_heads", "Shuffle", [t], p + "_h",
                 [("reshape", "[%d, %d, %d]" % (SEQ, HEADS, DH)),
                  ("second_transpose", "[1, 0, 2]")])


def manifest():
    blob, entries = bytearray(), []
    for name, v in w.items():
        entries.append("  %s: {dtype: float32, shape: [%s], file: weights.bin,"
                       " offset: %d}" % (name, ", ".join(map(str, v.shape)),
                                         len(blob)))
        blob += v.astype("<f4").tobytes()
    consts = [layer("c_" + n, "Constant", [], n,
                    [("weights", n), ("shape", "[%s]" % ", ".join(
                        map(str, w[n].shape)))]).replace("inputs: [], ", "")
              for n in w]
    body = []
    body += layer_norm("ln1", "x", "ln1_g", "ln1_b")
    for n in "qkv":
        body += linear(n, "ln1", "w" + n, "b" + n)
        body.append(split_heads(n, n))
    body += [
        layer("scores", "MatrixMultiply", ["q_h", "k_h"], "s_raw",
              [("op_b", "transpose")]),
        ew("scaled", "prod", "s_raw", "scale", "s"),
        layer("softmax", "SoftMax", ["s"], "p", [("axis", "2")]),
        layer("context", "MatrixMultiply", ["p", "v_h"], "ctx_h"),
        layer("merge", "Shuffle", ["ctx_h"], "ctx",
              [("first_transpose", "[1, 0, 2]"),
               ("reshape", "[%d, %d]" % (SEQ, D))]),
    ]
    body += linear("attn", "ctx", "wo", "bo")
    body.append(ew("residual1", "sum", "x", "attn", "h"))
    body += layer_norm("ln2", "h", "ln2_g", "ln2_b")
    body += linear("ff1", "ln2", "w1", "b1")
    body += [
        ew("gelu_scale", "prod", "ff1", "rsqrt2", "g_s"),
        layer("gelu_erf", "Unary", ["g_s"], "g_e", [("op", "erf")]),
        ew("gelu_one", "sum", "g_e", "one", "g_1"),
        ew("gelu_half", "prod", "g_1", "half", "g_h"),
        ew("gelu", "prod", "g_h", "ff1", "gelu"),
    ]
    body += linear("ff2", "gelu", "w2", "b2")
    body.append(ew("residual2", "sum", "h", "ff2", "y"))
    text = ["# tests/manifests/transformer/encoder.yaml - written by",
            "# tests/gen/transformer.py: a pre-norm transformer encoder block",
            "# (%d tokens of %d, %d heads, feed-forward %d) from mica's "
            "plain layers." % (SEQ, D, HEADS, FF),
            "mica: 1", "name: encoder",
            "inputs:", "  x: {dtype: float32, shape: [%d, %d]}" % (SEQ, D),
            "weights:"] + entries + ["layers:"] + consts + body + \
        ["outputs: [y]", ""]
    return "\n".join(text), bytes(blob)


os.makedirs(OUT, exist_ok=True)
text, blob = manifest()
with open(os.path.join(OUT, "encoder.yaml"), "w") as f:
    f.write(text)
with open(os.path.join(OUT, "weights.bin"), "wb") as f:
    f.write(blob)
np.save(os.path.join(OUT, "x.npy"), x)
np.save(os.path.join(OUT, "y.npy"), reference(x))
