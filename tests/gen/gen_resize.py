#!/usr/bin/env python3
"""tests/gen/gen_resize.py - Resize fixtures for tests/test_mod_resize.c.

Each case is computed twice: by an independent NumPy transcription of the
ONNX Resize (opset 11+) formulas in float32, and by onnxruntime on the
equivalent ONNX model (mica's settings mapped as TensorRT's ONNX parser
maps them: pytorch_half_pixel is half_pixel with the upper_left selector,
round_prefer_floor is half_down, round_prefer_ceil is half_up).  The two
must agree (nearest exactly, linear within 1e-5 relative) or the script
stops; onnxruntime's values are written.  onnxruntime runs linear only on
some ranks, so a linear case is run on the input reshaped to 5-D (the
leading dims, which linear never resizes, folded into the first; a dim
of scale 1 maps to itself under every transformation).  Settings with no
ONNX equivalent (the upper_left selector with another transformation)
are checked against NumPy alone.

Inputs are integers in [-100, 100], exact in every type the C test runs
(float32, float16, int8, int32).

    /work/venv/bin/python tests/gen/gen_resize.py > tests/resize_fixtures.h
"""
import math
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

F = np.float32
COORDS = ["align_corners", "asymmetric", "half_pixel"]
ROUNDS = ["half_down", "half_up", "floor", "ceil"]
SELECTORS = ["formula", "upper_left"]
ONNX_ROUND = {"half_down": "round_prefer_floor", "half_up": "round_prefer_ceil",
              "floor": "floor", "ceil": "ceil"}


def fraction(s):
    """The simplest p/q (q <= 1000) whose float32 value is s, as mica reads
    a scale for the output length; else s's exact binary value."""
    for q in range(1, 1001):
        p = round(float(s) * q)
        if p > 0 and F(p / q) == s:
            return p, q
    m, e = math.frexp(float(s))
    m, e = int(m * (1 << 24)), e - 24
    return (m << e, 1) if e >= 0 else (m, 1 << -e)


def coord(x, scale, n_in, n_out, ct, sel):
    if sel == "upper_left" and n_out == 1:
        return F(0)
    if ct == "half_pixel":
        return (F(x) + F(0.5)) / scale - F(0.5)
    if ct == "asymmetric":
        return F(x) / scale
    if n_out == 1:
        return F(0)
    return F(x) * F(n_in - 1) / F(n_out - 1)


def round_away(c):
    return math.copysign(math.floor(abs(float(c)) + 0.5), float(c))


def nearest_index(c, rnd, n_in):
    c = float(c)
    if rnd == "half_down":
        i = math.floor(c) if c == math.floor(c) + 0.5 else round_away(c)
    elif rnd == "half_up":
        i = round_away(c)
    elif rnd == "floor":
        i = math.floor(c)
    else:
        i = math.ceil(c)
    return int(min(max(i, 0), n_in - 1))


def linear_taps(c, n_in):
    c = F(max(F(0), min(c, F(n_in - 1))))
    i0 = min(int(c), n_in - 1)
    i1 = min(i0 + 1, n_in - 1)
    if i0 == i1:
        return [(i0, 0.5), (i1, 0.5)]
    return [(i0, float(abs(c - F(i1)))), (i1, float(abs(c - F(i0))))]


def numpy_resize(x, out, scales, mode, ct, rnd, sel):
    y = np.zeros(out, dtype=np.float64)
    axes = []
    for k in range(x.ndim):
        taps = []
        for o in range(out[k]):
            c = coord(o, scales[k], x.shape[k], out[k], ct, sel)
            if mode == "nearest":
                taps.append([(nearest_index(c, rnd, x.shape[k]), 1.0)])
            else:
                taps.append(linear_taps(c, x.shape[k]))
        axes.append(taps)
    for idx in np.ndindex(*out):
        acc = 0.0
        for combo in np.ndindex(*[len(axes[k][idx[k]]) for k in range(x.ndim)]):
            w, src = 1.0, []
            for k in range(x.ndim):
                i, wk = axes[k][idx[k]][combo[k]]
                w *= wk
                src.append(i)
            acc += w * float(x[tuple(src)])
        y[idx] = acc
    return y


def onnx_run(x, out, scales, by_scales, mode, ct, rnd):
    names = ["X", "roi", "scales"]
    inits = [helper.make_tensor("roi", TensorProto.FLOAT, [0], [])]
    if by_scales:
        inits.append(helper.make_tensor("scales", TensorProto.FLOAT,
                                        [len(scales)],
                                        [float(s) for s in scales]))
    else:
        inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [0], []))
        inits.append(helper.make_tensor("sizes", TensorProto.INT64, [len(out)],
                                        list(out)))
        names.append("sizes")
    node = helper.make_node("Resize", names, ["Y"], mode=mode,
                            coordinate_transformation_mode=ct,
                            nearest_mode=ONNX_ROUND[rnd])
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})[0]


def onnx_resize(x, out, scales, by_scales, mode, ct, rnd, sel):
    """onnxruntime's result, or None where ONNX has no equivalent."""
    if sel == "upper_left":
        if ct != "half_pixel":
            return None
        ct = "pytorch_half_pixel"
    if mode == "nearest":
        return onnx_run(x, out, scales, by_scales, mode, ct, rnd)
    lead = x.ndim - 3
    if lead < 0:
        shape5 = (1, 1) + (1,) * -lead + x.shape
        out5 = (1, 1) + (1,) * -lead + tuple(out)
        sc5 = [F(1)] * (2 - lead) + list(scales)
    else:
        shape5 = (int(np.prod(x.shape[:lead])), 1) + x.shape[lead:]
        out5 = (shape5[0], 1) + tuple(out[lead:])
        sc5 = [F(1), F(1)] + list(scales[lead:])
    y = onnx_run(x.reshape(shape5), out5, sc5, by_scales, mode, ct, rnd)
    return y.reshape(out)


CASES = []


def case(name, shape, mode, ct="asymmetric", rnd="floor", sel="formula",
         sizes=None, scales=None):
    CASES.append(dict(name=name, shape=tuple(shape), mode=mode, ct=ct, rnd=rnd,
                      sel=sel, sizes=sizes, scales=scales))


def build_cases():
    for ct in COORDS:
        for sel in SELECTORS:
            for rnd in ROUNDS:
                case("nearest up and down", (1, 2, 4, 5), "nearest", ct, rnd,
                     sel, sizes=(1, 2, 7, 3))
            case("nearest to one pixel", (1, 1, 4, 6), "nearest", ct,
                 "half_down", sel, sizes=(1, 1, 1, 1))
            case("linear up and down", (1, 2, 4, 5), "linear", ct, sel=sel,
                 sizes=(1, 2, 7, 3))
            case("linear down by 3", (1, 1, 8, 9), "linear", ct, sel=sel,
                 sizes=(1, 1, 3, 3))
            case("linear to one pixel", (2, 4, 6), "linear", ct, sel=sel,
                 sizes=(2, 1, 1))
            case("linear rank 1", (5,), "linear", ct, sel=sel, sizes=(8,))
            case("linear rank 3, every dim", (3, 4, 5), "linear", ct,
                 sel=sel, sizes=(5, 2, 7))
            case("linear rank 4, 3 inner dims", (2, 3, 4, 5), "linear", ct,
                 sel=sel, sizes=(2, 4, 2, 7))
        for rnd in ROUNDS:
            case("nearest by scales", (2, 3, 4), "nearest", ct, rnd,
                 scales=(1.0, 1.5, 0.75))
            case("nearest rank 1 by 3", (4,), "nearest", ct, rnd,
                 scales=(3.0,))
        case("linear by scales", (1, 1, 4, 4), "linear", ct,
             scales=(1.0, 1.0, 1.5, 0.75))
        case("linear by 0.7", (1, 10), "linear", ct, scales=(1.0, 0.7))
        case("nearest by 1/3", (3, 9), "nearest", ct, "half_up",
             scales=(1.0, 1.0 / 3))
        case("nearest rank 5, every dim", (2, 3, 2, 3, 2), "nearest", ct,
             "half_up", sizes=(3, 2, 4, 2, 3))
        case("nearest rank 8, every dim", (2, 1, 2, 3, 1, 2, 2, 3), "nearest",
             ct, "half_down", sizes=(1, 2, 3, 2, 2, 1, 3, 4))
        case("linear scale 1 (a copy)", (2, 3, 4), "linear", ct,
             scales=(1.0, 1.0, 1.0))


def cnum(v):
    return "%.9g" % v


def main():
    build_cases()
    rng = np.random.default_rng(11)
    xs, ys, rows = [], [], []
    for c in CASES:
        x = rng.integers(-100, 101, size=c["shape"]).astype(F)
        if c["scales"] is not None:
            scales = [F(s) for s in c["scales"]]
            out = []
            for d, s in zip(c["shape"], scales):
                p, q = fraction(s)
                out.append(d * p // q)
            out = tuple(out)
        else:
            out = tuple(c["sizes"])
            scales = [F(o) / F(i) for o, i in zip(out, c["shape"])]
        ref = numpy_resize(x, out, scales, c["mode"], c["ct"], c["rnd"], c["sel"])
        got = onnx_resize(x, out, scales, c["scales"] is not None, c["mode"],
                          c["ct"], c["rnd"], c["sel"])
        oracle = "numpy"
        if got is not None:
            if got.shape != out:
                sys.exit("%s: onnxruntime's shape %s, expected %s"
                         % (c["name"], got.shape, out))
            tol = 0 if c["mode"] == "nearest" else 1e-5
            if not np.allclose(got, ref, rtol=tol, atol=tol):
                sys.exit("%s (%s %s %s %s): NumPy and onnxruntime differ by %g"
                         % (c["name"], c["mode"], c["ct"], c["rnd"], c["sel"],
                            np.abs(got - ref).max()))
            ref, oracle = got.astype(np.float64), "onnxruntime"
        rows.append((c, out, scales, len(xs), len(ys), oracle))
        xs.extend(x.ravel().tolist())
        ys.extend(ref.ravel().tolist())
    w = sys.stdout.write
    w("/*\n * tests/resize_fixtures.h - written by tests/gen/gen_resize.py "
      "(do not edit):\n * Resize cases checked against onnxruntime %s and an "
      "independent\n * NumPy transcription of the ONNX formulas.\n */\n\n"
      % ort.__version__)
    w("static const float resize_x[] = {\n")
    for i in range(0, len(xs), 12):
        w("    " + ", ".join(cnum(v) for v in xs[i:i + 12]) + ",\n")
    w("};\n\nstatic const float resize_y[] = {\n")
    for i in range(0, len(ys), 6):
        w("    " + ", ".join(cnum(v) for v in ys[i:i + 6]) + ",\n")
    w("};\n\nstatic const resize_case_t resize_cases[] = {\n")
    for c, out, scales, xo, yo, oracle in rows:
        n = len(c["shape"])
        w("    {\"%s (%s)\", \"%s\", \"%s\", \"%s\", \"%s\", %d, %d,\n"
          % (c["name"], oracle, c["mode"], c["ct"], c["rnd"], c["sel"],
             c["scales"] is not None, n))
        w("     {%s}, {%s},\n     {%s}, %d, %d},\n"
          % (", ".join(str(d) for d in c["shape"]),
             ", ".join(str(d) for d in out),
             ", ".join(cnum(s) for s in scales), xo, yo))
    w("};\n")


if __name__ == "__main__":
    main()
