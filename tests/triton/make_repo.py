#!/usr/bin/env python3
"""tests/triton/make_repo.py - a Triton model repository of mica models.

Used by tests/test_triton.sh (through test_triton.py) and by
bench/triton_bench.py.  Writes, under OUT:

  mlp/          a manifest (an MLP: IN -> HIDDEN, relu -> OUT, and the row
                sums of the output) with a runtime batch and two profiles
                (1-8 and 9-32); config.pbtxt names only the backend, the
                dynamic batcher and two KIND_CPU instances: the backend
                completes the inputs, outputs and max_batch_size
  mlp_engine/   the same network as an engine file (mica build), with the
                inputs and outputs spelled out and parameter file
  mlp_full/     the manifest without Triton's batching (max_batch_size 0):
                requests carry the whole [N, IN] tensor
  wide/         one large matrix product, two instances, no batcher: slow
                enough that concurrent requests keep both instances busy
  mlp_onnx/     the same MLP (its y) as an ONNX file, with a dynamic
                batch: parameters give its profile (written only where the
                Python package onnx is installed)
  bad_config/   the manifest with a config.pbtxt whose input type is wrong
  bad_param/    the manifest with a misspelt parameter (both must fail to
                load with the backend's message)

Weights are random (seeded) .npy files next to the manifests.
"""
import argparse
import os
import subprocess

import numpy as np

MANIFEST = """\
mica: 1
name: mlp
inputs:
  x: {{dtype: float32, shape: [-1, {i}]}}
profiles:
  - x: {{min: [1, {i}], opt: [4, {i}], max: [8, {i}]}}
  - x: {{min: [9, {i}], opt: [16, {i}], max: [32, {i}]}}
weights:
  w1: {{npy: w1.npy}}
  b1: {{npy: b1.npy}}
  w2: {{npy: w2.npy}}
  b2: {{npy: b2.npy}}
layers:
  - {{name: w1, type: Constant, outputs: [w1], params: {{weights: w1}}}}
  - {{name: b1, type: Constant, outputs: [b1], params: {{weights: b1}}}}
  - {{name: w2, type: Constant, outputs: [w2], params: {{weights: w2}}}}
  - {{name: b2, type: Constant, outputs: [b2], params: {{weights: b2}}}}
  - {{name: mm1, type: MatrixMultiply, inputs: [x, w1], outputs: [h]}}
  - {{name: add1, type: ElementWise, inputs: [h, b1], outputs: [hb], params: {{op: sum}}}}
  - {{name: relu, type: Activation, inputs: [hb], outputs: [r], params: {{type: relu}}}}
  - {{name: mm2, type: MatrixMultiply, inputs: [r, w2], outputs: [o]}}
  - {{name: add2, type: ElementWise, inputs: [o, b2], outputs: [y], params: {{op: sum}}}}
  - {{name: sum, type: Reduce, inputs: [y], outputs: [s], params: {{op: sum, axes: [1], keep_dims: true}}}}
outputs: [y, s]
"""

WIDE = """\
mica: 1
name: wide
inputs:
  x: {{dtype: float32, shape: [-1, {i}]}}
profiles:
  - x: {{min: [1, {i}], opt: [64, {i}], max: [256, {i}]}}
weights:
  w: {{npy: w.npy}}
layers:
  - {{name: w, type: Constant, outputs: [w], params: {{weights: w}}}}
  - {{name: mm, type: MatrixMultiply, inputs: [x, w], outputs: [y]}}
outputs: [y]
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def mlp_files(folder, sizes, rng):
    i, h, o = sizes
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "w1.npy"),
            rng.standard_normal((i, h)).astype(np.float32) / np.sqrt(i))
    np.save(os.path.join(folder, "b1.npy"),
            rng.standard_normal((1, h)).astype(np.float32) * 0.1)
    np.save(os.path.join(folder, "w2.npy"),
            rng.standard_normal((h, o)).astype(np.float32) / np.sqrt(h))
    np.save(os.path.join(folder, "b2.npy"),
            rng.standard_normal((1, o)).astype(np.float32) * 0.1)
    write(os.path.join(folder, "model.yaml"), MANIFEST.format(i=i))


def mlp_onnx(folder, sizes, rng):
    """The MLP of mlp_files() (same seed, same weights) as model.onnx."""
    from onnx import TensorProto, helper, numpy_helper, save
    i, h, o = sizes
    w1 = rng.standard_normal((i, h)).astype(np.float32) / np.sqrt(i)
    b1 = rng.standard_normal((1, h)).astype(np.float32) * 0.1
    w2 = rng.standard_normal((h, o)).astype(np.float32) / np.sqrt(h)
    b2 = rng.standard_normal((1, o)).astype(np.float32) * 0.1
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["y"])]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", i])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", o])],
        [numpy_helper.from_array(a, n) for a, n in
         ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13)])
    model.ir_version = 8
    os.makedirs(folder, exist_ok=True)
    save(model, os.path.join(folder, "model.onnx"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mica", help="the mica command (builds mlp_engine)")
    ap.add_argument("--sizes", default="16,32,8",
                    help="IN,HIDDEN,OUT of the MLP (default 16,32,8)")
    ap.add_argument("--wide", default="1024,512",
                    help="IN,OUT of the wide model (default 1024,512)")
    ap.add_argument("--delay-us", type=int, default=200000,
                    help="the batcher's max_queue_delay_microseconds")
    ap.add_argument("--instances", type=int, default=2)
    args = ap.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")]
    i, _, o = sizes
    rng = np.random.default_rng(1234)
    out = args.out

    mlp_files(os.path.join(out, "mlp", "1"), sizes, rng)
    write(os.path.join(out, "mlp", "config.pbtxt"), f"""\
backend: "mica"
dynamic_batching {{
  max_queue_delay_microseconds: {args.delay_us}
}}
instance_group [ {{ count: {args.instances}, kind: KIND_CPU }} ]
""")

    folder = os.path.join(out, "mlp_engine", "1")
    mlp_files(folder, sizes, np.random.default_rng(1234))
    if args.mica:
        subprocess.run([args.mica, "build", os.path.join(folder, "model.yaml"),
                        "-o", os.path.join(folder, "model.mica"),
                        "--device", "cpu"], check=True)
        for f in ("model.yaml", "w1.npy", "b1.npy", "w2.npy", "b2.npy"):
            os.remove(os.path.join(folder, f))
    write(os.path.join(out, "mlp_engine", "config.pbtxt"), f"""\
backend: "mica"
max_batch_size: 8
input [ {{ name: "x", data_type: TYPE_FP32, dims: [ {i} ] }} ]
output [
  {{ name: "y", data_type: TYPE_FP32, dims: [ {o} ] }},
  {{ name: "s", data_type: TYPE_FP32, dims: [ 1 ] }}
]
parameters {{ key: "file", value: {{ string_value: "model.mica" }} }}
parameters {{ key: "device", value: {{ string_value: "cpu" }} }}
instance_group [ {{ count: 1, kind: KIND_CPU }} ]
""")

    mlp_files(os.path.join(out, "mlp_full", "1"), sizes,
              np.random.default_rng(1234))
    write(os.path.join(out, "mlp_full", "config.pbtxt"), f"""\
backend: "mica"
max_batch_size: 0
input [ {{ name: "x", data_type: TYPE_FP32, dims: [ -1, {i} ] }} ]
parameters {{ key: "precision", value: {{ string_value: "float32" }} }}
instance_group [ {{ count: 1, kind: KIND_CPU }} ]
""")

    wi, wo = [int(v) for v in args.wide.split(",")]
    folder = os.path.join(out, "wide", "1")
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "w.npy"),
            rng.standard_normal((wi, wo)).astype(np.float32) / np.sqrt(wi))
    write(os.path.join(folder, "model.yaml"), WIDE.format(i=wi))
    write(os.path.join(out, "wide", "config.pbtxt"), """\
backend: "mica"
max_batch_size: 256
instance_group [ { count: 2, kind: KIND_CPU } ]
""")

    try:
        import onnx  # noqa: F401
        mlp_onnx(os.path.join(out, "mlp_onnx", "1"), sizes,
                 np.random.default_rng(1234))
        write(os.path.join(out, "mlp_onnx", "config.pbtxt"), f"""\
backend: "mica"
dynamic_batching {{ max_queue_delay_microseconds: 1000 }}
parameters {{ key: "min_shapes", value: {{ string_value: "x:1x{i}" }} }}
parameters {{ key: "opt_shapes", value: {{ string_value: "x:4x{i}" }} }}
parameters {{ key: "max_shapes", value: {{ string_value: "x:16x{i}" }} }}
instance_group [ {{ count: 1, kind: KIND_CPU }} ]
""")
    except ImportError:
        pass

    mlp_files(os.path.join(out, "bad_config", "1"), sizes,
              np.random.default_rng(1234))
    write(os.path.join(out, "bad_config", "config.pbtxt"), f"""\
backend: "mica"
max_batch_size: 8
input [ {{ name: "x", data_type: TYPE_INT32, dims: [ {i} ] }} ]
""")

    mlp_files(os.path.join(out, "bad_param", "1"), sizes,
              np.random.default_rng(1234))
    write(os.path.join(out, "bad_param", "config.pbtxt"), """\
backend: "mica"
parameters { key: "precison", value: { string_value: "float16" } }
""")


if __name__ == "__main__":
    main()
