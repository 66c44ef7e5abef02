#!/usr/bin/env python3
# tests/onnx/make_folds.py - the reproducers in fuzz/regress/onnx/ of issue 25's importer
# folds (a constant re-dimmed by a folded Reshape to dimensions of another
# size, then folded again): each a small model whose import must be
# refused with one line, not read or write past a buffer.
# tests/test_onnx_folds.c imports each and checks the line.
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh


out_dir = sys.argv[1] if len(sys.argv) > 1 else "fuzz/regress/onnx"
ok_dir = sys.argv[2] if len(sys.argv) > 2 else "tests/onnx/models"


def model(nodes, inits, out, name):
    g = h.make_graph(nodes, name, [],
                     [h.make_tensor_value_info(out, T.INT64, None)],
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out_dir if name.startswith("fold-") else
                            ok_dir, name + ".onnx"))


six = nh.from_array(np.arange(6, dtype=np.int64), "six")
three = nh.from_array(np.arange(3, dtype=np.int64), "three")
shape = lambda n, v: nh.from_array(np.array(v, dtype=np.int64), n)

# Reshape 6 values to [1000] (a 1-D shape: the Concat fold then copies
# 2 x 6 values into room for 2000, or, the other way round, 2000 into 12).
model([h.make_node("Reshape", ["six", "s"], ["r"]),
       h.make_node("Concat", ["r", "r"], ["out"], axis=0)],
      [six, shape("s", [1000])], "out", "fold-reshape-concat")
# Reshape 6 values to [1000, 1000] and [4, -1]: imported silently before.
model([h.make_node("Reshape", ["six", "s"], ["out"])],
      [six, shape("s", [1000, 1000])], "out", "fold-reshape-1000x1000")
model([h.make_node("Reshape", ["six", "s"], ["out"])],
      [six, shape("s", [4, -1])], "out", "fold-reshape-4x-1")
# A reshaped constant as the data of a folded Gather: indices past the
# 6 values it holds.
model([h.make_node("Reshape", ["six", "s"], ["r"]),
       h.make_node("Gather", ["r", "i"], ["out"])],
      [six, shape("s", [64]), shape("i", [63])], "out",
      "fold-reshape-gather")
# Constants of lengths 6 and 3 added: they do not broadcast (the fold
# read the shorter one past its end).
model([h.make_node("Add", ["six", "three"], ["out"])], [six, three], "out",
      "fold-add-no-broadcast")
# The same through a reshape to [64]: an over-read of the ElementWise fold.
model([h.make_node("Reshape", ["three", "s"], ["r"]),
       h.make_node("Add", ["r", "r"], ["out"])],
      [three, shape("s", [64])], "out", "fold-reshape-add")

# What the folds must still compute: 6 values re-dimmed to [2, -1] and
# back to [-1], concatenated with 3 more, plus one (broadcast), gathered.
model([h.make_node("Reshape", ["six", "s"], ["r"]),
       h.make_node("Reshape", ["r", "flat"], ["f"]),
       h.make_node("Concat", ["f", "three"], ["c"], axis=0),
       h.make_node("Add", ["c", "one"], ["a"]),
       h.make_node("Gather", ["a", "i"], ["out"])],
      [six, three, shape("s", [2, -1]), shape("flat", [-1]),
       shape("one", [1]), shape("i", [8, 0, -1])], "out", "folds-ok")
