#!/usr/bin/env python3
"""tests/gen/layers.py - the expected values of the SoftMax, RaggedSoftMax,
TopK, Scatter and Einsum tests, computed with NumPy independently of mica.

Writes tests/gen/{softmax,topk,scatter,einsum}_cases.h (arrays of
gen_case_t, see gen_case.h) beside this file.  The tests themselves need no
Python: the headers are checked in.  Run it again after changing a case:

    /work/venv/bin/python tests/gen/layers.py

Inputs come from a seeded generator, so the output is reproducible.
float16 cases round the inputs to float16 first, compute in float64, and
round the expected values to float16.
"""
import os

import numpy as np

F32, F16, I32 = 0, 1, 3
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261122)


def c_double(v):
    v = float(v)
    if np.isnan(v):
        return "NAN"
    if np.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


class Writer:
    def __init__(self, name):
        self.name = name
        self.arrays = []
        self.cases = []
        self.n = 0

    def array(self, a):
        name = "%s_v%d" % (self.name, self.n)
        self.n += 1
        vals = [c_double(x) for x in np.asarray(a, dtype=np.float64).ravel()]
        if not vals:
            vals = ["0"]
        lines = []
        for i in range(0, len(vals), 6):
            lines.append("    " + ", ".join(vals[i:i + 6]) + ",")
        self.arrays.append("static const double %s[] = {\n%s\n};" %
                           (name, "\n".join(lines)))
        return name

    def tensor(self, a, dtype):
        a = np.asarray(a)
        dims = list(a.shape) + [0] * (8 - a.ndim)
        return "{%d, %d, {%s}, %s}" % (dtype, a.ndim,
                                       ", ".join(str(d) for d in dims),
                                       self.array(a))

    def case(self, label, ins, outs, text=None, p0=-1, p1=-1):
        """ins and outs: lists of (array, dtype)."""
        t = '"%s"' % text if text is not None else "NULL"
        self.cases.append(
            '    {"%s", %s, %d, %d, %d, %d,\n     {%s},\n     {%s}},' %
            (label, t, p0, p1, len(ins), len(outs),
             ", ".join(self.tensor(a, d) for a, d in ins),
             ", ".join(self.tensor(a, d) for a, d in outs)))

    def write(self):
        path = os.path.join(HERE, "%s_cases.h" % self.name)
        with open(path, "w") as f:
            f.write("/* tests/gen/%s_cases.h - written by tests/gen/layers.py"
                    " (NumPy %s): do not edit. */\n" %
                    (self.name, np.__version__))
            f.write("#include <math.h>\n\n#include \"gen_case.h\"\n\n")
            f.write("\n".join(self.arrays))
            f.write("\n\nstatic const gen_case_t %s_cases[] = {\n%s\n};\n" %
                    (self.name, "\n".join(self.cases)))


def f16(a):
    return np.asarray(a, dtype=np.float16).astype(np.float64)


# ---- SoftMax and RaggedSoftMax ---------------------------------------------

def softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def gen_softmax():
    w = Writer("softmax")
    # (label, shape, axis param (-1: default), dtype, scale)
    for label, shape, axis, dtype, scale in [
            ("rank 1, default axis 0", (7,), -1, F32, 1),
            ("rank 2, default axis 0", (3, 5), -1, F32, 1),
            ("rank 3, default axis 0", (4, 3, 2), -1, F32, 1),
            ("rank 4, default axis 1", (2, 3, 4, 5), -1, F32, 1),
            ("rank 4, axis 0", (2, 3, 4, 5), 0, F32, 1),
            ("rank 4, axis 2", (2, 3, 4, 5), 2, F32, 1),
            ("rank 4, axis 3", (2, 3, 4, 5), 3, F32, 1),
            ("rank 2, axis 1, |x| up to 400", (4, 33), 1, F32, 400),
            ("rank 3, axis 1, 40 long, |x| up to 300", (3, 40, 2), 1, F32,
             300),
            ("float16, axis 1", (3, 40), 1, F16, 4),
            ("float16, default axis 0", (6, 5), -1, F16, 4),
    ]:
        x = rng.uniform(-scale, scale, size=shape)
        if dtype == F16:
            x = f16(x)
        ax = axis if axis >= 0 else max(0, len(shape) - 3)
        y = softmax(x, ax)
        if dtype == F16:
            y = f16(y)
        w.case(label, [(x, dtype)], [(y, dtype)], p0=axis)
    x = np.array([[1.0, -np.inf, 2.0, 3.0], [-np.inf, 0.5, -np.inf, 0.5]])
    w.case("-inf entries, axis 1", [(x, F32)], [(softmax(x, 1), F32)], p0=1)
    w.write()

    w = Writer("ragged")

    def ragged(x, b):
        y = np.zeros_like(x)
        rows = x.reshape(-1, x.shape[-1])
        out = y.reshape(-1, x.shape[-1])
        for r, n in enumerate(np.asarray(b).ravel()):
            n = min(max(int(n), 0), x.shape[-1])
            if n:
                out[r, :n] = softmax(rows[r, :n], 0)
        return y

    # TensorRT's example.
    x = np.array([[1.0, 1.0, 1.0, 1.0, 0.5], [3.0, 4.0, -20.0, 10.0, 5.0]])
    b = np.array([[5], [3]])
    w.case("TensorRT's example", [(x, F32), (b, I32)], [(ragged(x, b), F32)])
    x = rng.uniform(-3, 3, size=(1, 3, 6))
    b = np.array([[[6], [0], [9]]])
    w.case("rank 3, bounds 6, 0 and 9 of 6", [(x, F32), (b, I32)],
           [(ragged(x, b), F32)])
    x = rng.uniform(-200, 200, size=(5, 37))
    b = np.array([[1], [37], [20], [-4], [36]])
    w.case("|x| up to 200, bounds 1, 37, 20, -4, 36", [(x, F32), (b, I32)],
           [(ragged(x, b), F32)])
    x = f16(rng.uniform(-4, 4, size=(4, 70)))
    b = np.array([[70], [3], [69], [35]])
    w.case("float16", [(x, F16), (b, I32)], [(f16(ragged(x, b)), F16)])
    w.write()


# ---- TopK ------------------------------------------------------------------

def topk(x, op, k, axis):
    """Sort each slice by value (NaN the largest), ties by lower index."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    vals = np.zeros(x.shape[:-1] + (k,))
    idx = np.zeros(x.shape[:-1] + (k,), dtype=np.int64)
    for pos in np.ndindex(*x.shape[:-1]):
        row = x[pos]

        def key(j):
            v = row[j]
            nan = bool(np.isnan(v))
            if op == "max":
                return (not nan, 0.0 if nan else -v, j)
            return (nan, 0.0 if nan else v, j)
        order = sorted(range(row.shape[0]), key=key)[:k]
        idx[pos] = order
        vals[pos] = row[order]
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def gen_topk():
    w = Writer("topk")

    def case(label, x, dtype, op, k, axis):
        v, i = topk(x, op, k, axis)
        w.case(label, [(x, dtype)], [(v, dtype), (i, I32)], text=op, p0=k,
               p1=axis)

    x = np.array([[-3.0, -2.0, -1.0, 10.0, -25.0], [0.0, 1.0, 2.0, -2.0, -1.0]])
    case("TensorRT's example, max k 3 axis 1", x, F32, "max", 3, 1)
    case("min k 2 axis 0", rng.uniform(-5, 5, size=(4, 3)), F32, "min", 2, 0)
    t = np.array([[1, 3, 3, 1, 2, 3], [0, 0, -0.0, 0, 5, 5]], dtype=float)
    case("ties, max k 4", t, F32, "max", 4, 1)
    case("ties, min k 4", t, F32, "min", 4, 1)
    case("k = axis length", rng.uniform(-1, 1, size=(3, 7)), F32, "max", 7, 1)
    case("rank 3, axis 1, k 2", rng.uniform(-9, 9, size=(2, 5, 3)), F32, "max",
         2, 1)
    case("rank 3, axis 2, min k 1", rng.uniform(-9, 9, size=(2, 3, 6)), F32,
         "min", 1, 2)
    case("rank 1, k 1", np.array([4.0, 9.0, 9.0, -1.0]), F32, "max", 1, 0)
    n = np.array([[1.0, np.nan, 3.0, -np.inf, np.inf]])
    case("NaN and infinities, max k 3", n, F32, "max", 3, 1)
    case("NaN and infinities, min k 3", n, F32, "min", 3, 1)
    case("float16, k 5", f16(rng.uniform(-3, 3, size=(3, 50))), F16, "max", 5,
         1)
    case("int32, min k 3", rng.integers(-20, 20, size=(3, 10)).astype(float),
         I32, "min", 3, 1)
    w.write()


# ---- Scatter ---------------------------------------------------------------

def norm(i, n):
    return i + n if i < 0 else i


def scatter_element(data, idx, upd, axis):
    out = np.array(data, dtype=np.float64)
    for pos in np.ndindex(*idx.shape):
        p = list(pos)
        p[axis] = norm(int(idx[pos]), data.shape[axis])
        out[tuple(p)] = upd[pos]
    return out


def scatter_nd(data, idx, upd):
    out = np.array(data, dtype=np.float64)
    k = idx.shape[-1]
    for pos in np.ndindex(*idx.shape[:-1]):
        t = tuple(norm(int(v), data.shape[a]) for a, v in enumerate(idx[pos]))
        out[t] = upd[pos]
    return out


def gen_scatter():
    w = Writer("scatter")

    def el(label, data, idx, upd, axis, dtype=F32):
        data, idx, upd = np.array(data, float), np.array(idx), np.array(upd,
                                                                        float)
        w.case(label, [(data, dtype), (idx, I32), (upd, dtype)],
               [(scatter_element(data, idx, upd, axis), dtype)],
               text="element", p0=axis)

    def nd(label, data, idx, upd, dtype=F32):
        data, idx, upd = np.array(data, float), np.array(idx), np.array(upd,
                                                                        float)
        w.case(label, [(data, dtype), (idx, I32), (upd, dtype)],
               [(scatter_nd(data, idx, upd), dtype)], text="nd")

    el("element: TensorRT's example, axis 2",
       [[[-3.0, -2.0, -1.0, 10.0, -25.0]], [[0.0, 1.0, 2.0, -2.0, -1.0]]],
       [[[1, 2, 3, 0, 4]], [[4, 1, 2, 3, 0]]],
       [[[-1.0, 2.4, 3.2, 10.8, 8.9]], [[0, -11.2, 34.2, 223.9, -100]]], 2)
    el("element: ONNX's example, axis 0", np.zeros((3, 3)),
       [[1, 0, 2], [0, 2, 1]], [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], 0)
    el("element: negative index, axis 1", [[1.0, 2, 3, 4, 5]], [[1, -3]],
       [[1.1, 2.1]], 1)
    el("element: smaller indices, axis 1", rng.uniform(-1, 1, (4, 5, 3)),
       np.stack([rng.permutation(5)[:4] for _ in range(2)]).reshape(2, 4, 1),
       rng.uniform(5, 6, (2, 4, 1)), 1)
    el("element: int32", rng.integers(-9, 9, (2, 4)), [[3, 0], [1, 2]],
       [[100, 200], [300, 400]], 1, I32)
    el("element: float16", f16(rng.uniform(-1, 1, (3, 4))), [[2, 1, 0, 2]],
       f16([[7, 8, 9, 10]]), 0, F16)
    nd("nd: ONNX's example 1", [1.0, 2, 3, 4, 5, 6, 7, 8],
       [[4], [3], [1], [7]], [9.0, 10, 11, 12])
    d = np.arange(64, dtype=float).reshape(4, 4, 4)
    nd("nd: ONNX's example 2, slices", d, [[0], [2]],
       rng.uniform(-1, 1, (2, 4, 4)))
    nd("nd: full coordinates, negative", rng.uniform(-1, 1, (3, 4)),
       [[0, 1], [2, 3], [-1, 0]], [5.0, 6, 7])
    nd("nd: indices of rank 3", rng.uniform(-1, 1, (5, 3)),
       [[[4], [0]], [[2], [-2]]], rng.uniform(5, 6, (2, 2, 3)))
    nd("nd: int32 rows", rng.integers(0, 9, (3, 2)), [[1]], [[-7, -8]])
    w.write()


# ---- Einsum ----------------------------------------------------------------

def gen_einsum():
    w = Writer("einsum")

    def case(eq, shapes, dtype=F32, label=None, bshapes=None):
        xs = [rng.uniform(-1, 1, size=s) for s in shapes]
        if dtype == F16:
            xs = [f16(x) for x in xs]
        # Size-1 dimensions of a label broadcast (as in PyTorch): NumPy's
        # einsum gets the operands broadcast explicitly.
        ys = xs if bshapes is None else [np.broadcast_to(x, b)
                                         for x, b in zip(xs, bshapes)]
        y = np.einsum(eq.replace(" ", ""), *ys)
        if dtype == F16:
            y = f16(y)
        w.case(label or eq, [(x, dtype) for x in xs], [(np.asarray(y), dtype)],
               text=eq)

    case("ij,jk->ik", [(2, 3), (3, 4)])
    case("ij,jk", [(3, 2), (2, 5)], label="implicit ij,jk")
    case("ij,kj->ik", [(3, 4), (2, 4)])
    case("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)])
    case("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)])
    case("bhqd,bhkd->bhkq", [(1, 2, 3, 4), (1, 2, 5, 4)])
    case("bqhd,bkhd->bhqk", [(2, 3, 2, 4), (2, 5, 2, 4)])
    case("i,i->", [(6,), (6,)])
    case("i,j->ij", [(3,), (4,)])
    case("ij,ij->ij", [(3, 4), (3, 4)])
    case("ij,ij", [(3, 4), (3, 4)], label="implicit ij,ij (scalar)")
    case("ij->ji", [(3, 4)])
    case("ijk->kji", [(2, 3, 4)])
    case("ij->", [(3, 4)])
    case("ij->j", [(3, 4)])
    case("ii->i", [(4, 4)])
    case("ii", [(4, 4)], label="implicit ii (trace)")
    case("bii->bi", [(2, 3, 3)])
    case("iij,jk->ik", [(3, 3, 2), (2, 4)])
    case("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 4)])
    case("...ii->...i", [(2, 3, 3)])
    case("i...,i...->...", [(3, 2, 2), (3, 2, 2)])
    case("b...,b->b...", [(2, 3), (2,)])
    case(" i j , j k -> i k ", [(2, 3), (3, 2)], label="spaces")
    case(",ij->ij", [(), (2, 3)], label="scalar and matrix")
    case("->", [()], label="scalar to scalar")
    case("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)])
    case("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)])
    case("i,i,i->", [(5,), (5,), (5,)])
    case("ij,jk,kl,lm->im", [(8, 2), (2, 9), (9, 3), (3, 7)])
    case("bij,bjk->bik", [(1, 2, 3), (4, 3, 5)],
         label="bij,bjk->bik, b broadcast", bshapes=[(4, 2, 3), (4, 3, 5)])
    case("ij,jk->ik", [(2, 1), (3, 4)], label="ij,jk->ik, j broadcast",
         bshapes=[(2, 3), (3, 4)])
    case("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], F16,
         label="float16 bij,bjk->bik")
    case("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)], F16,
         label="float16 three inputs")
    w.write()


gen_softmax()
gen_topk()
gen_scatter()
gen_einsum()
