#!/usr/bin/env python3
"""tests/onnx/make_dynshape.py - small models of shape arithmetic over
runtime dimensions (issue 23 item 4) and of values that arrive at run time
where mica wants constants (item 5), written into tests/onnx/models/ as
dyn_*.onnx.  tests/onnx/dynshape.txt runs each at several shapes of one
profile against onnxruntime (tests/test_onnx_dynshape.sh).

usage: make_dynshape.py [OUT_DIR]   (default tests/onnx/models)
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/onnx/models"
F, I64 = T.FLOAT, T.INT64


def vi(name, t, dims):
    return h.make_tensor_value_info(name, t, dims)


def save(name, nodes, ins, outs, inits=(), opset=17):
    g = h.make_graph(nodes, name, ins, outs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, "dyn_" + name + ".onnx"))


def c64(name, v):
    return nh.from_array(np.array(v, dtype=np.int64), name)


def cf(name, v):
    return nh.from_array(np.array(v, dtype=np.float32), name)


# A float Range over a runtime length: positions 0, 0.5, ... of the
# sequence axis, added to x.
save("range_float", [
    h.make_node("Shape", ["x"], ["s"]),
    h.make_node("Gather", ["s", "one"], ["n"], axis=0),
    h.make_node("Cast", ["n"], ["nf"], to=F),
    h.make_node("Mul", ["nf", "half"], ["lim"]),
    h.make_node("Range", ["zero", "lim", "half"], ["r"]),
    h.make_node("Add", ["x", "r"], ["y"]),
], [vi("x", F, ["b", "n"])], [vi("y", F, ["b", "n"])],
    [c64("one", 1), cf("half", 0.5), cf("zero", 0.0)])

# SAME_UPPER and SAME_LOWER pooling and convolution over runtime axes,
# strides 2 and 3 (odd padding: the two differ).
w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
save("same_pool_conv", [
    h.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 3],
                auto_pad="SAME_UPPER"),
    h.make_node("AveragePool", ["x"], ["q"], kernel_shape=[3, 3],
                strides=[3, 2], auto_pad="SAME_LOWER"),
    h.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3],
                strides=[2, 2], auto_pad="SAME_UPPER"),
    h.make_node("Conv", ["x", "w"], ["d"], kernel_shape=[3, 3],
                strides=[3, 2], auto_pad="SAME_LOWER"),
], [vi("x", F, [1, 3, "h", "w"])],
    [vi("p", F, None), vi("q", F, None), vi("c", F, None), vi("d", F, None)],
    [nh.from_array(w, "w")])

# Squeeze without axes: x is [b, 1, n, 1] whose b and n are runtime
# dimensions (the profile keeps them above 1).
save("squeeze_noaxes", [
    h.make_node("Squeeze", ["x"], ["y"]),
    h.make_node("Relu", ["y"], ["z"]),
], [vi("x", F, ["b", 1, "n", 1])], [vi("z", F, None)])

# PyTorch's F.pad export (TorchScript, opset 11+): the pads of the last
# two axes, [l, r, t, b] as a constant, padded with zeros to 2 * rank by
# the rank taken from Shape(Shape(x)), reshaped to [-1, 2], flipped by a
# Slice with step -1, transposed, flattened, then Pad.
save("torch_pad", [
    h.make_node("Shape", ["x"], ["s"]),
    h.make_node("Shape", ["s"], ["r"]),
    h.make_node("Mul", ["r", "two"], ["r2"]),
    h.make_node("Sub", ["r2", "four"], ["nz"]),
    h.make_node("ConstantOfShape", ["nz"], ["zeros"],
                value=nh.from_array(np.array([0], np.int64))),
    h.make_node("Concat", ["p", "zeros"], ["pz"], axis=0),
    h.make_node("Reshape", ["pz", "m12"], ["pr"]),
    h.make_node("Slice", ["pr", "sm1", "send", "s0", "sm1"], ["pf"]),
    h.make_node("Transpose", ["pf"], ["pt"], perm=[1, 0]),
    h.make_node("Reshape", ["pt", "m1"], ["pads"]),
    h.make_node("Pad", ["x", "pads", "cv"], ["y"], mode="constant"),
], [vi("x", F, ["b", 3, "h", "w"])], [vi("y", F, None)],
    [c64("p", [1, 2, 0, 3]), c64("two", 2), c64("four", 4),
     c64("m12", [-1, 2]), c64("sm1", [-1]), c64("send", [-(2 ** 63) + 1]),
     c64("s0", [0]), c64("m1", [-1]), cf("cv", 0.5)], opset=13)

# A Shape inside an If read as a shape: each branch reshapes x to
# [b, -1] by its own Shape (one after a transpose), on a condition
# computed from a runtime dimension.
then_g = h.make_graph([
    h.make_node("Shape", ["x"], ["ts"]),
    h.make_node("Slice", ["ts", "s0", "s1"], ["tb"]),
    h.make_node("Concat", ["tb", "m1"], ["tshape"], axis=0),
    h.make_node("Reshape", ["x", "tshape"], ["ty"]),
    h.make_node("Neg", ["ty"], ["tz"]),
], "then", [], [vi("tz", F, ["b", "k"])])
else_g = h.make_graph([
    h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
    h.make_node("Shape", ["xt"], ["es"]),
    h.make_node("Slice", ["es", "s0", "s1"], ["eb"]),
    h.make_node("Concat", ["eb", "m1"], ["eshape"], axis=0),
    h.make_node("Reshape", ["xt", "eshape"], ["ez"]),
], "else", [], [vi("ez", F, ["b", "k"])])
save("if_shape", [
    h.make_node("Shape", ["x"], ["s"]),
    h.make_node("Gather", ["s", "zero"], ["b"], axis=0),
    h.make_node("Greater", ["b", "two"], ["big"]),
    h.make_node("If", ["big"], ["y"], then_branch=then_g,
                else_branch=else_g),
], [vi("x", F, ["b", 4, "n"])], [vi("y", F, None)],
    [c64("zero", 0), c64("two", 2), c64("s0", [0]), c64("s1", [1]),
     c64("m1", [-1])], opset=13)

# ---- item 5: runtime values where mica wants constants ---------------
# Conv and ConvTranspose whose kernels are graph inputs.
save("conv_wt_input", [
    h.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
    h.make_node("ConvTranspose", ["x", "wt"], ["z"], strides=[2, 2]),
], [vi("x", F, ["n", 3, 8, 8]), vi("w", F, [4, 3, 3, 3]),
    vi("b", F, [4]), vi("wt", F, [3, 2, 3, 3])],
    [vi("y", F, None), vi("z", F, None)])
# A Conv whose kernel is computed: the weights dequantized from int8 by
# arithmetic, and another sliced and concatenated.
wq = np.random.default_rng(2).integers(-100, 100, (4, 3, 3, 3)).astype(
    np.int8)
save("conv_wt_computed", [
    h.make_node("Cast", ["wq"], ["wf"], to=F),
    h.make_node("Mul", ["wf", "scale"], ["w"]),
    h.make_node("Slice", ["w", "a0", "a2", "ax0"], ["w0"]),
    h.make_node("Slice", ["w", "a2", "a4", "ax0"], ["w1"]),
    h.make_node("Concat", ["w1", "w0"], ["w2"], axis=0),
    h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["x", "w2"], ["z"]),
], [vi("x", F, ["n", 3, "h", "w"])], [vi("y", F, None), vi("z", F, None)],
    [nh.from_array(wq, "wq"), cf("scale", 0.01), c64("a0", [0]),
     c64("a2", [2]), c64("a4", [4]), c64("ax0", [0])])
# Reduce axes (opset 18), TopK's K, Split's sizes and Pad's pads as
# inputs.
save("runtime_params", [
    h.make_node("ReduceSum", ["x", "axes"], ["r"], keepdims=1),
    h.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=-1),
    h.make_node("Split", ["x", "sizes"], ["s0", "s1"], axis=2),
    h.make_node("Pad", ["x", "pads"], ["p"]),
], [vi("x", F, [2, 3, 10]), vi("axes", I64, [1]), vi("k", I64, [1]),
    vi("sizes", I64, [2]), vi("pads", I64, [6])],
    [vi("r", F, None), vi("tv", F, None), vi("ti", I64, None),
     vi("s0", F, None), vi("s1", F, None), vi("p", F, None)], opset=18)
# OneHot (a constant depth, negative indices counting from it), CumSum
# (exclusive over the one-hot axis, reversed over the runtime length) and
# Compress (a condition computed from the data: a length known only at
# run time), over a runtime batch and length.
save("onehot_cumsum_compress", [
    h.make_node("Mul", ["x", "three"], ["x3"]),
    h.make_node("Cast", ["x3"], ["idx"], to=I64),
    h.make_node("OneHot", ["idx", "depth", "vals"], ["oh"], axis=1),
    h.make_node("CumSum", ["oh", "ax1"], ["y"], exclusive=1),
    h.make_node("CumSum", ["x", "ax1"], ["cs"], reverse=1),
    h.make_node("Gather", ["x", "zero"], ["row"], axis=0),
    h.make_node("Greater", ["row", "fzero"], ["cond"]),
    h.make_node("Compress", ["x", "cond"], ["z"], axis=1),
    h.make_node("Compress", ["cs", "cond"], ["flat"]),
], [vi("x", F, ["b", "n"])],
    [vi("y", F, None), vi("cs", F, None), vi("z", F, None),
     vi("flat", F, None)],
    [cf("three", 3.0), cf("depth", 5.0), cf("vals", [0.25, 2.0]),
     nh.from_array(np.array(1, dtype=np.int32), "ax1"), c64("zero", 0),
     cf("fzero", 0.0)], opset=14)
