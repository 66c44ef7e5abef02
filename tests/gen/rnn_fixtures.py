#!/usr/bin/env python3
"""tests/gen/rnn_fixtures.py - write tests/rnn_fixtures.h, the expected
values of tests/test_mod_rnn.c, from the NumPy model in rnn_ref.py.

    /work/venv/bin/python tests/gen/rnn_fixtures.py > tests/rnn_fixtures.h

Each case: the layer's params, its inputs (x, optional h0, c0, lengths),
weights lists in the manifest's layout, and the expected outputs.  For
float16 cases every input and weight is rounded to float16 first and the
model runs in float64 on those values.  Deterministic (fixed seeds).
"""
import sys

import numpy as np

import rnn_ref

# name, op, layers, hidden, E, bidirectional, skip, x dims, h0, c0, lens,
# biases, dtype, max_seq_length
CASES = [
    ("relu_1l_uni", "relu", 1, 4, 3, False, False, (2, 4), False, False,
     None, True, "float32", 4),
    ("tanh_2l_bi_ragged", "tanh", 2, 4, 3, True, False, (3, 4), True, False,
     [4, 2, 3], True, "float32", 6),
    ("lstm_1l_uni_states", "lstm", 1, 4, 3, False, False, (2, 5), True, True,
     None, True, "float32", 5),
    ("lstm_2l_bi_ragged", "lstm", 2, 4, 3, True, False, (3, 5), True, True,
     [5, 1, 3], True, "float32", 5),
    ("lstm_1l_uni_nobias", "lstm", 1, 3, 2, False, False, (2, 3), False,
     False, None, False, "float32", 3),
    ("gru_1l_uni_ragged", "gru", 1, 4, 3, False, False, (2, 5), False, False,
     [3, 5], True, "float32", 5),
    ("gru_2l_bi_states", "gru", 2, 3, 4, True, False, (2, 4), True, False,
     None, True, "float32", 4),
    ("lstm_skip_2l_uni", "lstm", 2, 4, 4, False, True, (2, 4), True, True,
     None, True, "float32", 4),
    ("gru_skip_1l_bi_ragged", "gru", 1, 4, 4, True, True, (3, 4), False,
     False, [2, 4, 1], True, "float32", 4),
    ("tanh_skip_2l_bi", "tanh", 2, 3, 3, True, True, (2, 3), True, False,
     None, True, "float32", 3),
    ("tanh_batch_dims", "tanh", 1, 4, 3, False, False, (2, 2, 4), True,
     False, [[2, 3], [1, 4]], True, "float32", 4),
    ("relu_no_batch", "relu", 2, 3, 2, True, False, (4,), True, False, 3,
     True, "float32", 8),
    ("lstm_1l_bi_half", "lstm", 1, 4, 3, True, False, (2, 5), True, True,
     [5, 3], True, "float16", 5),
    ("gru_2l_uni_half", "gru", 2, 4, 3, False, False, (3, 4), True, False,
     None, True, "float16", 4),
    ("relu_1l_bi_half", "relu", 1, 4, 3, True, False, (2, 3), False, False,
     None, True, "float16", 3),
    # Runtime batch and steps within one profile: same weights, two shapes.
    ("dyn_a", "lstm", 1, 4, 3, True, False, (2, 5), True, True, [5, 2],
     True, "float32", 6),
    ("dyn_b", "lstm", 1, 4, 3, True, False, (3, 3), True, True, [3, 1, 2],
     True, "float32", 6),
]


def c_array(name, ctype, values, fmt):
    flat = np.asarray(values).reshape(-1)
    body = ", ".join(fmt % v for v in flat)
    lines, line = [], "   "
    for tok in body.split(", "):
        if len(line) + len(tok) + 2 > 78:
            lines.append(line.rstrip())
            line = "   "
        line += " " + tok + ","
    lines.append(line.rstrip())
    return "static const %s %s[] = {\n%s\n};\n" % (ctype, name,
                                                   "\n".join(lines))


def f32(name, values):
    return c_array(name, "float", np.asarray(values, np.float32), "%.9g")


def emit(out, case):
    (name, op, L, H, E, bi, skip, xd, has_h, has_c, lens, biases, dtype,
     max_seq) = case
    seed = sum(map(ord, name.rstrip("ab") if name.startswith("dyn") else name))
    rng = np.random.default_rng(seed)
    D = 2 if bi else 1
    half = dtype == "float16"
    w, r, wb, rb = rnn_ref.random_weights(rng, op, L, H, E, bi, skip)
    xrng = np.random.default_rng(seed + (7 if name == "dyn_b" else 0))
    x = xrng.uniform(-1, 1, xd + (E,)).astype(np.float32)
    lead = xd[:-1]
    h0 = (xrng.uniform(-0.5, 0.5, lead + (L * D, H)).astype(np.float32)
          if has_h else None)
    c0 = (xrng.uniform(-0.5, 0.5, lead + (L * D, H)).astype(np.float32)
          if has_c else None)
    if half:
        rd = lambda a: None if a is None else a.astype(np.float16).astype(np.float32)
        x, h0, c0 = rd(x), rd(h0), rd(c0)
        w, r, wb, rb = ([rd(a) for a in lst] for lst in (w, r, wb, rb))
    if not biases:
        wb = rb = None
    y, hy, cy = rnn_ref.run(op, x, w, r, wb, rb, L, H, bi, skip, h0, c0,
                            None if lens is None else np.asarray(lens))
    p = "c_" + name
    out.append("/* %s */\n" % name)
    out.append(f32(p + "_x", x))
    for tag, a in (("h0", h0), ("c0", c0)):
        if a is not None:
            out.append(f32("%s_%s" % (p, tag), a))
    if lens is not None:
        out.append(c_array(p + "_lens", "int32_t",
                           np.asarray(lens, np.int32), "%d"))
    for tag, lst in (("w", w), ("r", r), ("wb", wb), ("rb", rb)):
        if not lst:
            continue
        for k, a in enumerate(lst):
            out.append(f32("%s_%s%d" % (p, tag, k), a))
        out.append("static const float *const %s_%s[] = {\n%s};\n" % (
            p, tag, "".join("    %s_%s%d,\n" % (p, tag, k)
                            for k in range(len(lst)))))
        out.append(c_array("%s_%sn" % (p, tag), "int64_t",
                           [a.size for a in lst], "%d"))
    out.append(f32(p + "_y", y))
    out.append(f32(p + "_hy", hy))
    if cy is not None:
        out.append(f32(p + "_cy", cy))
    xdims = tuple(xd) + (E,)
    lens_rank = len(xd) - 1
    ref = lambda tag, ok: "%s_%s" % (p, tag) if ok else "NULL"
    nw = len(w)
    members = [
        ("name", '"%s"' % name), ("op", '"%s"' % op), ("layers", L),
        ("hidden", H), ("max_seq", max_seq), ("dirs", D),
        ("skip", int(skip)), ("input_size", E),
        ("dtype", "MICA_FLOAT16" if half else "MICA_FLOAT32"),
        ("nb_xdims", len(xdims)), ("xdims", "{%s}" % ", ".join(map(str, xdims))),
        ("x", p + "_x"), ("h0", ref("h0", has_h)), ("c0", ref("c0", has_c)),
        ("lens", ref("lens", lens is not None)), ("lens_rank", lens_rank),
        ("nb_w", nw), ("w", ref("w", nw > 0)), ("wn", ref("wn", nw > 0)),
        ("r", p + "_r"), ("rn", p + "_rn"), ("wb", ref("wb", biases)),
        ("wbn", ref("wbn", biases)), ("rb", ref("rb", biases)),
        ("rbn", ref("rbn", biases)), ("y", p + "_y"), ("hy", p + "_hy"),
        ("cy", ref("cy", cy is not None))]
    out.append("static const rnn_case_t %s = {\n%s};\n\n" % (
        p, "".join("    .%s = %s,\n" % m for m in members)))


def main():
    out = ["/* tests/rnn_fixtures.h - written by tests/gen/rnn_fixtures.py "
           "(NumPy model:\n * tests/gen/rnn_ref.py); do not edit. */\n"
           "#ifndef MICA_RNN_FIXTURES_H\n#define MICA_RNN_FIXTURES_H\n\n"
           "#include <stdint.h>\n#include <stddef.h>\n\n"
           "typedef struct rnn_case {\n"
           "    const char *name, *op;\n"
           "    int layers, hidden, max_seq, dirs, skip, input_size;\n"
           "    mica_dtype_t dtype;\n"
           "    int nb_xdims;\n    int64_t xdims[4];\n"
           "    const float *x, *h0, *c0;\n"
           "    const int32_t *lens;\n    int lens_rank;\n"
           "    int nb_w;  /* entries of w; r, wb, rb have layers*dirs */\n"
           "    const float *const *w;\n    const int64_t *wn;\n"
           "    const float *const *r;\n    const int64_t *rn;\n"
           "    const float *const *wb;\n    const int64_t *wbn;\n"
           "    const float *const *rb;\n    const int64_t *rbn;\n"
           "    const float *y, *hy, *cy;\n"
           "} rnn_case_t;\n\n"]
    for case in CASES:
        emit(out, case)
    out.append("static const rnn_case_t *const rnn_cases[] = {\n%s\n};\n\n" %
               ",\n".join("    &c_%s" % c[0] for c in CASES))
    out.append("#endif\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
