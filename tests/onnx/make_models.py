#!/usr/bin/env python3
# tests/onnx/make_models.py - writes the small ONNX models of
# tests/test_cli_onnx.sh into tests/onnx/models/, with the outputs
# onnxruntime gives for the inputs beside them (.npy).  Needs numpy, onnx
# and onnxruntime; the files are checked in, so the tests need none of
# them.  Run from the top of the tree: python3 tests/onnx/make_models.py
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(13)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                     producer_name="mica tests")
    m.ir_version = 8
    return m


def save(m, name, feeds=None):
    path = os.path.join(OUT, name + ".onnx")
    onnx.save(m, path)
    if feeds is None:
        return
    for k, v in feeds.items():
        np.save(os.path.join(OUT, name + "." + k.replace("/", "_")
                             .replace(":", "_") + ".npy"), v)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    res = sess.run(None, feeds)
    for o, r in zip(sess.get_outputs(), res):
        np.save(os.path.join(OUT, name + ".want." + o.name.replace("/", "_")
                             .replace(":", "_") + ".npy"), r)


# A small net with a runtime batch and names that are no file names.
w = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal((3,)).astype(np.float32)
save(model(
    [h.make_node("MatMul", ["in:0", "w"], ["mm"], name="dense/matmul"),
     h.make_node("Add", ["mm", "b"], ["lin"], name="dense/bias"),
     h.make_node("Relu", ["lin"], ["out/relu"], name="act"),
     h.make_node("Transpose", ["out/relu"], ["t"], name="t", perm=[1, 0]),
     h.make_node("ReduceSum", ["t", "ax"], ["out:sum"], name="sum",
                 keepdims=0)],
    [h.make_tensor_value_info("in:0", T.FLOAT, ["batch", 4])],
    [h.make_tensor_value_info("out/relu", T.FLOAT, ["batch", 3]),
     h.make_tensor_value_info("out:sum", T.FLOAT, [3])],
    [nh.from_array(w, "w"), nh.from_array(b, "b"),
     nh.from_array(np.array([1], np.int64), "ax")]),
    "mlp", {"in:0": rng.standard_normal((2, 4)).astype(np.float32)})

# Weights in an external data file, 64 bytes in.
m = model([h.make_node("Mul", ["x", "w"], ["y"], name="scale")],
          [h.make_tensor_value_info("x", T.FLOAT, [4])],
          [h.make_tensor_value_info("y", T.FLOAT, [4])],
          [nh.from_array(np.array([1, 2, 3, 4], np.float32), "w")])
with open(os.path.join(OUT, "ext.data"), "wb") as f:
    f.write(b"\0" * 64 + np.array([1, 2, 3, 4], np.float32).tobytes())
t = m.graph.initializer[0]
t.ClearField("raw_data")
t.data_location = T.EXTERNAL
for k, v in (("location", "ext.data"), ("offset", "64"), ("length", "16")):
    e = t.external_data.add()
    e.key, e.value = k, v
onnx.save(m, os.path.join(OUT, "ext.onnx"))

# The same with the data 4.5 GB into a file the test makes (sparse).
t.external_data[0].value = "big.data"
t.external_data[1].value = "4500000000"
onnx.save(m, os.path.join(OUT, "big.onnx"))

# An operator with no mapping, one in a domain nothing registers, a bad
# attribute, an input of a type mica lacks.
save(model([h.make_node("Det", ["a"], ["c"], name="det")],
           [h.make_tensor_value_info("a", T.FLOAT, [2, 2])],
           [h.make_tensor_value_info("c", T.FLOAT, [])]), "unsupported")
save(model([h.make_node("Foo", ["a"], ["c"], name="foo",
                        domain="com.example")],
           [h.make_tensor_value_info("a", T.FLOAT, [2])],
           [h.make_tensor_value_info("c", T.FLOAT, [2])]), "custom_ns")
m = model([h.make_node("Transpose", ["a"], ["c"], name="tr", perm=[0, 0])],
          [h.make_tensor_value_info("a", T.FLOAT, [2, 3])],
          [h.make_tensor_value_info("c", T.FLOAT, [3, 2])])
save(m, "badattr")
save(model([h.make_node("Relu", ["a"], ["c"], name="r")],
           [h.make_tensor_value_info("a", T.COMPLEX64, [2])],
           [h.make_tensor_value_info("c", T.COMPLEX64, [2])]), "complex")

# A registered layer type as a third-party operator: ElementWise, its
# attribute `op` as the field.
save(model([h.make_node("ElementWise", ["a", "b"], ["c"], name="ew",
                        op="prod")],
           [h.make_tensor_value_info("a", T.FLOAT, [3]),
            h.make_tensor_value_info("b", T.FLOAT, [3])],
           [h.make_tensor_value_info("c", T.FLOAT, [3])]), "thirdparty")

# A Loop (3 trips adding x) and an If on a runtime condition.
body = h.make_graph(
    [h.make_node("Add", ["v_in", "x"], ["v_out"], name="acc"),
     h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
    "body",
    [h.make_tensor_value_info("i", T.INT64, []),
     h.make_tensor_value_info("cond_in", T.BOOL, []),
     h.make_tensor_value_info("v_in", T.FLOAT, [2])],
    [h.make_tensor_value_info("cond_out", T.BOOL, []),
     h.make_tensor_value_info("v_out", T.FLOAT, [2])])
then_g = h.make_graph([h.make_node("Mul", ["v", "two"], ["r1"], name="dbl")],
                      "then", [],
                      [h.make_tensor_value_info("r1", T.FLOAT, [2])],
                      [nh.from_array(np.array(2, np.float32), "two")])
else_g = h.make_graph([h.make_node("Neg", ["v"], ["r2"], name="neg")],
                      "else", [],
                      [h.make_tensor_value_info("r2", T.FLOAT, [2])])
save(model(
    [h.make_node("Loop", ["n", "t", "x"], ["v"], name="loop", body=body),
     h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                 else_branch=else_g)],
    [h.make_tensor_value_info("x", T.FLOAT, [2]),
     h.make_tensor_value_info("c", T.BOOL, [])],
    [h.make_tensor_value_info("y", T.FLOAT, [2])],
    [nh.from_array(np.array(3, np.int64), "n"),
     nh.from_array(np.array(True), "t")]),
    "control", {"x": np.array([1.5, -2], np.float32),
                "c": np.array(True)})

# The light_* models' pattern: kernels made by ConstantOfShape (one value
# stored, written whole into the weights file), a large ConstantOfShape
# read as a tensor (a Fill layer), and Dropout's mask (all true).
save(model(
    [h.make_node("ConstantOfShape", ["kshape"], ["k"], name="kernel",
                 value=nh.from_array(np.array([0.05], np.float32))),
     h.make_node("Conv", ["x", "k"], ["c"], name="conv", pads=[1, 1, 1, 1]),
     h.make_node("ConstantOfShape", ["bshape"], ["b"], name="bias",
                 value=nh.from_array(np.array([0.5], np.float32))),
     h.make_node("Add", ["c", "b"], ["y"], name="add"),
     h.make_node("Dropout", ["y"], ["z", "mask"], name="drop")],
    [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 32, 32])],
    [h.make_tensor_value_info("z", T.FLOAT, [2, 4, 32, 32]),
     h.make_tensor_value_info("mask", T.BOOL, [2, 4, 32, 32])],
    [nh.from_array(np.array([4, 3, 3, 3], np.int64), "kshape"),
     nh.from_array(np.array([2, 4, 32, 32], np.int64), "bshape")]),
    "splat", {"x": rng.standard_normal((2, 3, 32, 32)).astype(np.float32)})
