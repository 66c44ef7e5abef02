#!/usr/bin/env python3
"""tests/gen/cnn_gen.py - expected values of Convolution, Deconvolution,
Pooling, LRN and FullyConnected, computed with NumPy from the definitions
(TensorRT's semantics), independently of mica's C code.

Writes tests/gen/{conv,pool,lrn,fc}_cases.h (the form is tests/gen/cases.h),
read by tests/test_mod_*.c.  Run it from the top of the source tree after
changing a case:  python3 tests/gen/cnn_gen.py

Values are multiples of 1/8 (inputs in [-2, 2], weights in [-1, 1]), exact
in float16 too, so the tests can run the same cases in float16.  Sums are
taken in float64 and the results stored as float32.
"""
import itertools
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def vals(rng, shape, lim):
    """Multiples of 1/8 in [-lim, lim]."""
    return rng.randint(-8 * lim, 8 * lim + 1, size=shape).astype(np.float64) / 8


def three(v, nd, fill):
    return [fill] * (3 - nd) + list(v)


# ---- the definitions --------------------------------------------------------

def conv(x, w, b, nd, stride, pre, post, dil, groups):
    """x [..., C, *S], w [M, C/g, *K]: y [..., M, *S']."""
    lead = x.shape[:-nd - 1]
    c = x.shape[-nd - 1]
    x = x.reshape((int(np.prod(lead)), c) + x.shape[-nd:])
    n = x.shape[0]
    m = w.shape[0]
    k = w.shape[2:]
    ext = [dil[i] * (k[i] - 1) + 1 for i in range(nd)]
    size = [(x.shape[2 + i] + pre[i] + post[i] - ext[i]) // stride[i] + 1
            for i in range(nd)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pre[i], post[i]) for i in range(nd)])
    y = np.zeros((n, m) + tuple(size))
    cpg, mpg = c // groups, m // groups
    for z in itertools.product(*[range(s) for s in size]):
        sl = tuple(slice(z[i] * stride[i], z[i] * stride[i] + ext[i], dil[i])
                   for i in range(nd))
        win = xp[(slice(None), slice(None)) + sl]       # [n, c, *k]
        for g in range(groups):
            xs = win[:, g * cpg:(g + 1) * cpg].reshape(n, cpg * int(np.prod(k)))
            ws = w[g * mpg:(g + 1) * mpg].reshape(mpg, cpg * int(np.prod(k)))
            y[(slice(None), slice(g * mpg, (g + 1) * mpg)) + z] = xs @ ws.T
    if b is not None:
        y += b.reshape((1, m) + (1,) * nd)
    return y.reshape(lead + (m,) + tuple(size))


def deconv(x, w, b, nd, stride, pre, post, dil, groups):
    """x [..., C, *S], w [C, M/g, *K]: scatter every input element, then
    crop pre and post."""
    lead = x.shape[:-nd - 1]
    c = x.shape[-nd - 1]
    x = x.reshape((int(np.prod(lead)), c) + x.shape[-nd:])
    n = x.shape[0]
    mpg = w.shape[1]
    m = mpg * groups
    k = w.shape[2:]
    cpg = c // groups
    full = [(x.shape[2 + i] - 1) * stride[i] + dil[i] * (k[i] - 1) + 1
            for i in range(nd)]
    y = np.zeros((n, m) + tuple(full))
    for i in itertools.product(*[range(s) for s in x.shape[2:]]):
        for a in itertools.product(*[range(s) for s in k]):
            o = tuple(i[d] * stride[d] + a[d] * dil[d] for d in range(nd))
            for ch in range(c):
                g = ch // cpg
                y[(slice(None), slice(g * mpg, (g + 1) * mpg)) + o] += \
                    np.outer(x[(slice(None), ch) + i], w[(ch, slice(None)) + a])
    crop = tuple(slice(pre[d], full[d] - post[d]) for d in range(nd))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape((1, m) + (1,) * nd)
    return y.reshape(lead + (m,) + y.shape[2:])


def pool(x, nd, ptype, window, stride, pre, post, blend, exclude):
    lead = x.shape[:-nd]
    x = x.reshape((int(np.prod(lead)),) + x.shape[-nd:])
    size = [(x.shape[1 + i] + pre[i] + post[i] - window[i]) // stride[i] + 1
            for i in range(nd)]
    y = np.zeros((x.shape[0],) + tuple(size))
    for z in itertools.product(*[range(s) for s in size]):
        lo = [z[i] * stride[i] - pre[i] for i in range(nd)]
        hi = [lo[i] + window[i] for i in range(nd)]
        vlo = [max(lo[i], 0) for i in range(nd)]
        vhi = [min(hi[i], x.shape[1 + i]) for i in range(nd)]
        # the window's part inside the padded input (never beyond it)
        inside = np.prod([min(hi[i], x.shape[1 + i] + post[i]) - lo[i]
                          for i in range(nd)])
        valid = int(np.prod([max(vhi[i] - vlo[i], 0) for i in range(nd)]))
        sl = (slice(None),) + tuple(slice(vlo[i], max(vhi[i], vlo[i]))
                                    for i in range(nd))
        win = x[sl].reshape(x.shape[0], valid)
        mx = win.max(axis=1) if valid else np.full(x.shape[0], -np.inf)
        total = win.sum(axis=1)
        if exclude:
            avg = total / valid if valid else np.zeros(x.shape[0])
        else:
            avg = total / inside
        if ptype == "max":
            r = mx
        elif ptype == "average":
            r = avg
        else:
            r = (0 if blend == 1 else (1 - blend) * mx) + blend * avg
        y[(slice(None),) + z] = r
    return y.reshape(lead + tuple(size))


def lrn(x, window, alpha, beta, k):
    c = x.shape[-3]
    sq = x * x
    y = np.zeros_like(x)
    half = (window - 1) // 2
    for ch in range(c):
        lo, hi = max(0, ch - half), min(c, ch + half + 1)
        s = sq[..., lo:hi, :, :].sum(axis=-3)
        y[..., ch, :, :] = x[..., ch, :, :] / (k + alpha / window * s) ** beta
    return y


def fc(x, w, b):
    lead = x.shape[:-3]
    y = x.reshape(int(np.prod(lead)), int(np.prod(x.shape[-3:]))) @ w.T
    if b is not None:
        y = y + b
    return y.reshape(lead + (w.shape[0], 1, 1))


# ---- writing ----------------------------------------------------------------

class Writer:
    def __init__(self, name):
        self.name = name
        self.lines = []
        self.cases = []
        self.n = 0

    def arr(self, a, ctype="float"):
        self.n += 1
        name = "g_%d" % self.n
        a = np.asarray(a).reshape(-1)
        if ctype == "float":
            items = ["%.9g" % v if np.isfinite(v) else
                     ("-INFINITY" if v < 0 else "INFINITY") for v in a]
        else:
            items = ["%d" % v for v in a]
        if not items:
            items = ["0"]
        body = ""
        line = "   "
        for it in items:
            if len(line) + len(it) + 2 > 78:
                body += line + "\n"
                line = "   "
            line += " " + it + ","
        body += line
        t = "float" if ctype == "float" else "int64_t"
        self.lines.append("static const %s %s[] = {\n%s\n};" % (t, name, body))
        return name

    def case(self, label, type_, fields, x, y):
        fl = []
        for (fname, kind, v) in fields:
            if kind == "ints":
                fl.append('{"%s", GEN_INTS, %d, %s, 0, NULL, NULL}'
                          % (fname, len(v), self.arr(v, "int")))
            elif kind == "int":
                fl.append('{"%s", GEN_INT, 1, NULL, %d, NULL, NULL}' % (fname, v))
            elif kind == "float":
                fl.append('{"%s", GEN_FLOAT, 1, NULL, %.17g, NULL, NULL}'
                          % (fname, v))
            elif kind == "bool":
                fl.append('{"%s", GEN_BOOL, 1, NULL, %d, NULL, NULL}'
                          % (fname, 1 if v else 0))
            elif kind == "str":
                fl.append('{"%s", GEN_STR, 0, NULL, 0, "%s", NULL}' % (fname, v))
            elif kind == "weights":
                fl.append('{"%s", GEN_WEIGHTS, %d, %s, 0, NULL, %s}'
                          % (fname, v.ndim, self.arr(v.shape, "int"),
                             self.arr(v)))
        self.n += 1
        fname = "g_%d" % self.n
        self.lines.append("static const gen_field_t %s[] = {\n    %s,\n};"
                          % (fname, ",\n    ".join(fl)))
        xa, ya = self.arr(x), self.arr(y)
        dims = lambda s: "{" + ", ".join(str(d) for d in s) + "}" if s else "{0}"
        self.cases.append('    {"%s", "%s", %d, %s, %d, %s, %s, %d, %s, %s},'
                          % (label, type_, len(fl), fname, x.ndim,
                             dims(x.shape), xa, y.ndim, dims(y.shape), ya))

    def write(self):
        path = os.path.join(HERE, self.name + "_cases.h")
        with open(path, "w") as f:
            f.write("/* Generated by tests/gen/cnn_gen.py: do not edit. */\n")
            f.write("#include <math.h>\n#include <stddef.h>\n\n")
            f.write('#include "cases.h"\n\n')
            f.write("\n".join(self.lines) + "\n\n")
            f.write("static const gen_case_t %s_cases[] = {\n" % self.name)
            f.write("\n".join(self.cases) + "\n};\n")


def conv_case(wr, rng, label, deconv_, xshape, m, k, stride=None, pad=None,
              pre=None, post=None, dil=None, groups=1, bias=True):
    nd = len(k)
    c = xshape[-nd - 1]
    x = vals(rng, xshape, 2)
    wshape = (c, m // groups) + tuple(k) if deconv_ else \
        (m, c // groups) + tuple(k)
    w = vals(rng, wshape, 1)
    b = vals(rng, (m,), 1) if bias else None
    s = stride or [1] * nd
    d = dil or [1] * nd
    if pad is not None:
        p0, p1 = pad, pad
    else:
        p0, p1 = pre or [0] * nd, post or [0] * nd
    f = deconv if deconv_ else conv
    y = f(x, w, b, nd, s, p0, p1, d, groups)
    fields = [("num_output_maps", "int", m), ("kernel_size", "ints", k),
              ("kernel", "weights", w)]
    if bias:
        fields.append(("bias", "weights", b))
    if stride:
        fields.append(("stride", "ints", stride))
    if pad is not None:
        fields.append(("padding", "ints", pad))
    if pre:
        fields.append(("pre_padding", "ints", pre))
    if post:
        fields.append(("post_padding", "ints", post))
    if dil:
        fields.append(("dilation", "ints", dil))
    if groups != 1:
        fields.append(("groups", "int", groups))
    wr.case(label, "Deconvolution" if deconv_ else "Convolution", fields, x, y)


def gen_conv(rng):
    wr = Writer("conv")
    C = lambda lb, *a, **kw: conv_case(wr, rng, lb, False, *a, **kw)
    D = lambda lb, *a, **kw: conv_case(wr, rng, lb, True, *a, **kw)
    C("2D 3x3, no padding, no bias", (1, 1, 4, 5), 2, [3, 3], bias=False)
    C("2D stride 2, padding 1, bias", (2, 3, 5, 5), 4, [3, 3], stride=[2, 2],
      pad=[1, 1])
    C("2D pointwise 1x1", (1, 5, 3, 2), 3, [1, 1])
    C("2D groups 2, dilation, asymmetric padding, strides", (1, 4, 6, 7), 6,
      [3, 2], stride=[1, 2], pre=[1, 0], post=[0, 2], dil=[2, 1], groups=2)
    C("2D depthwise (groups = channels)", (2, 3, 5, 4), 3, [3, 3], pad=[1, 1],
      groups=3)
    C("2D depthwise multiplier 2, stride 2", (1, 2, 6, 6), 4, [3, 3],
      stride=[2, 2], pre=[1, 1], post=[0, 0], groups=2)
    C("2D rank 5: leading batch dims", (2, 2, 2, 4, 4), 3, [2, 2],
      stride=[2, 1])
    C("2D zero input channels: the bias", (2, 0, 3, 3), 2, [2, 2])
    C("2D zero input channels, no bias: zeros", (1, 0, 3, 3), 2, [3, 3],
      pad=[1, 1], bias=False)
    C("2D empty batch", (0, 2, 4, 4), 2, [3, 3])
    C("2D padding larger than the kernel", (1, 1, 2, 2), 1, [2, 2],
      pad=[2, 2])
    C("3D 2x3x3 stride/padding/dilation", (2, 2, 3, 4, 4), 2, [2, 3, 3],
      stride=[1, 2, 1], pad=[0, 1, 1], dil=[1, 1, 2])
    C("3D groups 2, asymmetric padding", (1, 4, 3, 3, 4), 2, [2, 2, 2],
      pre=[1, 0, 1], post=[0, 1, 0], groups=2)
    C("3D depthwise", (1, 2, 3, 3, 3), 2, [3, 3, 3], pad=[1, 1, 1], groups=2)
    C("3D rank 6: leading batch dims", (2, 1, 1, 2, 3, 3), 1, [1, 2, 2])
    D("deconv 2D stride 2, bias", (1, 2, 3, 3), 3, [3, 3], stride=[2, 2])
    D("deconv 2D no bias, padding 1", (2, 1, 4, 3), 2, [3, 3], pad=[1, 1],
      bias=False)
    D("deconv 2D groups 2, strides, asymmetric padding, dilation",
      (1, 4, 3, 4), 6, [3, 2], stride=[2, 1], pre=[1, 0], post=[0, 1],
      dil=[1, 2], groups=2)
    D("deconv 2D depthwise", (1, 3, 3, 3), 3, [2, 2], stride=[2, 2], groups=3)
    D("deconv 2D rank 5: leading batch dims", (2, 2, 1, 2, 2), 2, [2, 2])
    D("deconv 2D zero input channels: the bias", (1, 0, 2, 2), 2, [2, 2],
      stride=[2, 2])
    D("deconv 2D stride larger than the kernel", (1, 1, 2, 2), 1, [2, 2],
      stride=[3, 3])
    D("deconv 3D 2x2x2 stride 2", (1, 2, 2, 2, 2), 2, [2, 2, 2],
      stride=[2, 2, 2])
    D("deconv 3D groups 2, padding", (1, 2, 2, 3, 2), 4, [3, 2, 2],
      stride=[1, 2, 1], pre=[1, 0, 0], post=[1, 1, 0], groups=2)
    wr.write()


def pool_case(wr, rng, label, xshape, ptype, window, stride=None, pad=None,
              pre=None, post=None, blend=None, exclude=None):
    nd = len(window)
    x = vals(rng, xshape, 2)
    s = stride or [1] * nd
    if pad is not None:
        p0, p1 = pad, pad
    else:
        p0, p1 = pre or [0] * nd, post or [0] * nd
    y = pool(x, nd, ptype, window, s, p0, p1,
             0.0 if blend is None else blend,
             True if exclude is None else exclude)
    fields = [("type", "str", ptype), ("window_size", "ints", window)]
    if stride:
        fields.append(("stride", "ints", stride))
    if pad is not None:
        fields.append(("padding", "ints", pad))
    if pre:
        fields.append(("pre_padding", "ints", pre))
    if post:
        fields.append(("post_padding", "ints", post))
    if blend is not None:
        fields.append(("blend_factor", "float", blend))
    if exclude is not None:
        fields.append(("average_count_excludes_padding", "bool", exclude))
    wr.case(label, "Pooling", fields, x, y)


def gen_pool(rng):
    wr = Writer("pool")
    P = lambda *a, **kw: pool_case(wr, rng, *a, **kw)
    P("max 2x2 stride 2", (1, 2, 4, 6), "max", [2, 2], stride=[2, 2])
    P("max 3x3 stride 1 (default), padding 1", (2, 1, 4, 4), "max", [3, 3],
      pad=[1, 1])
    P("average 3x3 stride 2 padding 1, excluding padding (default)",
      (1, 2, 5, 5), "average", [3, 3], stride=[2, 2], pad=[1, 1])
    P("average 3x3 stride 2 padding 1, counting padding", (1, 2, 5, 5),
      "average", [3, 3], stride=[2, 2], pad=[1, 1], exclude=False)
    P("average asymmetric padding, counting padding", (1, 1, 4, 5), "average",
      [2, 3], stride=[2, 2], pre=[1, 0], post=[1, 2], exclude=False)
    P("max_average_blend 0.25, asymmetric padding", (1, 2, 4, 5),
      "max_average_blend", [2, 2], stride=[1, 2], pre=[0, 1], post=[1, 1],
      blend=0.25)
    P("max_average_blend default factor (0: max)", (1, 1, 3, 3),
      "max_average_blend", [2, 2])
    P("max_average_blend 1 (average)", (1, 1, 3, 4), "max_average_blend",
      [2, 2], pad=[1, 1], blend=1.0)
    P("max, windows wholly in padding give -inf", (1, 1, 2, 2), "max", [2, 2],
      pre=[2, 2], post=[0, 0])
    P("average excluding padding, a window wholly in padding gives 0",
      (1, 1, 2, 2), "average", [2, 2], pre=[2, 0], post=[0, 0])
    P("global average 4x5", (2, 3, 4, 5), "average", [4, 5])
    P("rank 5: leading batch dims", (2, 2, 1, 4, 4), "max", [2, 2],
      stride=[2, 2])
    P("rank 3 ([C, H, W])", (2, 3, 3), "average", [2, 2])
    P("3D max 2x2x2 stride 2", (1, 2, 4, 4, 4), "max", [2, 2, 2],
      stride=[2, 2, 2])
    P("3D average padding, counting padding", (1, 1, 3, 3, 4), "average",
      [2, 2, 3], stride=[1, 2, 1], pad=[1, 1, 1], exclude=False)
    P("3D max_average_blend asymmetric padding", (1, 2, 3, 4, 3),
      "max_average_blend", [2, 3, 2], pre=[1, 0, 1], post=[0, 1, 1],
      blend=0.5)
    P("empty batch", (0, 2, 4, 4), "max", [2, 2])
    wr.write()


def gen_lrn(rng):
    wr = Writer("lrn")

    def L(label, xshape, window, alpha, beta, k):
        x = vals(rng, xshape, 2)
        y = lrn(x, window, alpha, beta, k)
        wr.case(label, "LRN", [("window", "int", window),
                               ("alpha", "float", alpha),
                               ("beta", "float", beta), ("k", "float", k)],
                x, y)
    L("window 3", (1, 5, 2, 3), 3, 0.5, 0.75, 2.0)
    L("window 1", (2, 3, 2, 2), 1, 1.0, 0.5, 1.0)
    L("window 5 over 3 channels", (1, 3, 3, 2), 5, 2.0, 1.5, 1.0)
    L("window 15, beta 0.01", (1, 16, 1, 2), 15, 0.25, 0.01, 1e-5 + 0.5)
    L("rank 5: leading batch dims", (2, 1, 4, 2, 2), 3, 0.1, 0.75, 1.0)
    L("rank 3 ([C, H, W])", (4, 2, 2), 3, 1e-4, 0.75, 1.0)
    L("negative alpha", (1, 4, 2, 2), 3, -0.5, 0.75, 4.0)
    wr.write()


def gen_fc(rng):
    wr = Writer("fc")

    def F(label, xshape, k, bias=True):
        x = vals(rng, xshape, 2)
        w = vals(rng, (k, int(np.prod(xshape[-3:]))), 1)
        b = vals(rng, (k,), 1) if bias else None
        y = fc(x, w, b)
        fields = [("num_outputs", "int", k), ("kernel", "weights", w)]
        if bias:
            fields.append(("bias", "weights", b))
        wr.case(label, "FullyConnected", fields, x, y)
    F("[1, 3, 2, 2] to 4, bias", (1, 3, 2, 2), 4)
    F("[2, 2, 3, 1] to 3, no bias", (2, 2, 3, 1), 3, bias=False)
    F("rank 5: leading dims", (2, 3, 2, 1, 3), 2)
    F("rank 3 ([C, H, W])", (3, 2, 2), 5)
    F("one output", (4, 1, 1, 6), 1)
    F("empty batch", (0, 2, 2, 2), 3)
    wr.write()


def main():
    rng = np.random.RandomState(2024)
    gen_conv(rng)
    gen_pool(rng)
    gen_lrn(rng)
    gen_fc(rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
