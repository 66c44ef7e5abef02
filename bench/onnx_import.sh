#!/bin/sh
# bench/onnx_import.sh - the time of `mica import` of a 100 MB ONNX model
# (issue 13: under one second beyond reading the file, on the CPU
# machine).  Writes the model with Python's onnx package (a chain of 25
# MatMul + Add + Relu over 1024x1024 float32 weights: 105 MB), then times,
# 5 times each, a read of the file (cat to /dev/null, after a first read
# that warms the page cache) and `mica import` of it; prints the medians.
#
#   bench/onnx_import.sh [MICA] [PYTHON] [DIR]
# MICA defaults to tools/mica of the build folder you run it from, PYTHON
# to python3, DIR (where the model goes) to a fresh folder under /tmp.
set -e
mica=${1:-./tools/mica}
python=${2:-python3}
dir=${3:-$(mktemp -d "${TMPDIR:-/tmp}/mica-onnx-bench-XXXXXX")}
export MICA_MODULE_DIR=${MICA_MODULE_DIR:-$(dirname "$mica")/../modules/.libs}

"$python" - "$dir/model.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
rng = np.random.default_rng(0)
nodes, inits, x = [], [], "x"
for i in range(25):
    w = rng.standard_normal((1024, 1024)).astype(np.float32) * 0.03
    b = rng.standard_normal((1024,)).astype(np.float32)
    inits += [nh.from_array(w, f"w{i}"), nh.from_array(b, f"b{i}")]
    nodes += [h.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"fc{i}"),
              h.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"bias{i}"),
              h.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}")]
    x = f"r{i}"
g = h.make_graph(nodes, "bench", [h.make_tensor_value_info("x", T.FLOAT, [8, 1024])],
                 [h.make_tensor_value_info(x, T.FLOAT, [8, 1024])], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), sys.argv[1])
PY

now() { date +%s.%N; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
cat "$dir/model.onnx" >/dev/null
read_t=$(for i in 1 2 3 4 5; do
    t0=$(now); cat "$dir/model.onnx" >/dev/null; t1=$(now)
    echo "$t1 - $t0" | bc; done | median)
import_t=$(for i in 1 2 3 4 5; do
    t0=$(now); "$mica" import "$dir/model.onnx" -o "$dir/out.yaml" >/dev/null
    t1=$(now); echo "$t1 - $t0" | bc; done | median)
size=$(wc -c <"$dir/model.onnx")
echo "model: $size bytes, 75 nodes"
echo "read (cat, page cache warm): $read_t s"
echo "mica import (read, decode, map, write manifest and $(wc -c <"$dir/out.weights") bytes of weights): $import_t s"
[ -n "$3" ] || rm -rf "$dir"
