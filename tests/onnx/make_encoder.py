#!/usr/bin/env python3
# tests/onnx/make_encoder.py - writes two small BERT-style encoders into
# tests/onnx/models/, with the op patterns torch.onnx.export gives a
# Hugging Face BertModel, and the outputs onnxruntime computes for their
# inputs (.npy) beside them:
#
#   encoder17  opset 17, as the TorchScript exporter (dynamo=False) writes
#              it: position and token-type ids sliced from buffers by the
#              sequence length (Shape, Gather, Unsqueeze, Slice, Expand),
#              the additive mask (1 - mask) * finfo.min (Unsqueeze, Cast,
#              Sub, Mul), heads split and merged by reshapes whose shapes
#              are computed from Shape (Concat), LayerNormalization, GELU
#              as Div/Erf/Add/Mul, the pooler's Gather and Gemm + Tanh;
#   encoder20  opset 20, as the dynamo exporter (torchlib) writes it: a
#              boolean mask (Cast to bool, Expand, Where), attention
#              scaled by Sqrt(Sqrt(scale)) on both sides, a 4-D by 2-D
#              MatMul (batch broadcasting), Gelu the operator (erf and
#              tanh forms).
#
# Batch and sequence are runtime dimensions.  The real export (torch,
# transformers) is bench/onnx_torch_models.py on the GPU machine.  Needs
# numpy, onnx and onnxruntime; the files are checked in.  Run from the top
# of the tree: python3 tests/onnx/make_encoder.py
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
HID, HEADS, FFN, VOCAB, MAXPOS = 32, 4, 64, 50, 16
DH = HID // HEADS
FMIN = float(np.finfo(np.float32).min)


class G:
    """Nodes and initializers of one graph, with fresh names."""

    def __init__(self, rng):
        self.nodes, self.inits, self.k, self.rng = [], [], 0, rng

    def name(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def op(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(h.make_node(op, inputs, outs, name=outs[0] + "/n",
                                      **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, base="c"):
        n = self.name(base)
        self.inits.append(nh.from_array(np.asarray(value), n))
        return n

    def weight(self, *shape, scale=0.2):
        return self.const((self.rng.standard_normal(shape) * scale)
                          .astype(np.float32), "w")


def linear(g, x, n_in, n_out):
    return g.op("Add", [g.op("MatMul", [x, g.weight(n_in, n_out)]),
                        g.weight(n_out)])


def layer_norm(g, x):
    return g.op("LayerNormalization", [x, g.const(np.ones(HID, np.float32)),
                                       g.const(np.zeros(HID, np.float32))],
                axis=-1, epsilon=1e-12)


def dims01(g, x):
    """Shape(x)[0:2]: batch and sequence, as int64 [2]."""
    return g.op("Slice", [g.op("Shape", [x]), g.const(np.array([0])),
                          g.const(np.array([2])), g.const(np.array([0]))])


def heads(g, x, dynamo):
    """[B, S, HID] -> [B, HEADS, S, DH]."""
    shape = g.op("Concat", [dims01(g, x), g.const(np.array([HEADS, DH]))],
                 axis=0)
    return g.op("Transpose", [g.op("Reshape", [x, shape])], perm=[0, 2, 1, 3])


def encoder(dynamo, rng):
    g = G(rng)
    ids, mask = "input_ids", "attention_mask"
    # Embeddings: word + position + token type, from the sequence length.
    seq = g.op("Unsqueeze", [g.op("Gather", [g.op("Shape", [ids]),
                                             g.const(np.array(1))], axis=0),
                             g.const(np.array([0]))])
    pos_ids = g.op("Slice", [g.const(np.arange(MAXPOS)[None, :]),
                             g.const(np.array([0])), seq,
                             g.const(np.array([1]))])
    tt_ids = g.op("Expand", [g.op("Slice", [g.const(np.zeros((1, MAXPOS),
                                                             np.int64)),
                                            g.const(np.array([0])), seq,
                                            g.const(np.array([1]))]),
                             g.op("Shape", [ids])])
    e = g.op("Add", [g.op("Gather", [g.weight(VOCAB, HID), ids]),
                     g.op("Gather", [g.weight(2, HID), tt_ids])])
    e = g.op("Add", [e, g.op("Gather", [g.weight(MAXPOS, HID), pos_ids])])
    x = layer_norm(g, e)
    # The mask, added to the scores.
    m4 = g.op("Unsqueeze", [mask, g.const(np.array([1, 2]))])
    if dynamo:
        mb = g.op("Cast", [m4], to=T.BOOL)
        s = dims01(g, ids)
        full = g.op("Concat", [g.op("Slice", [s, g.const(np.array([0])),
                                              g.const(np.array([1]))]),
                               g.const(np.array([1])),
                               g.op("Slice", [s, g.const(np.array([1])),
                                              g.const(np.array([2]))]),
                               g.op("Slice", [s, g.const(np.array([1])),
                                              g.const(np.array([2]))])],
                     axis=0)
        add_mask = g.op("Where", [g.op("Expand", [mb, full]),
                                  g.const(np.array(0, np.float32)),
                                  g.const(np.array(-np.inf, np.float32))])
    else:
        mf = g.op("Cast", [m4], to=T.FLOAT)
        add_mask = g.op("Mul", [g.op("Sub", [g.const(np.array(1, np.float32)),
                                             mf]),
                                g.const(np.array(FMIN, np.float32))])
    # Self-attention.
    q = heads(g, linear(g, x, HID, HID), dynamo)
    k = heads(g, linear(g, x, HID, HID), dynamo)
    v = heads(g, linear(g, x, HID, HID), dynamo)
    kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    if dynamo:
        sc = g.op("Sqrt", [g.op("Sqrt", [g.const(np.array(1 / DH, np.float32))])])
        scores = g.op("MatMul", [g.op("Mul", [q, sc]), g.op("Mul", [kt, sc])])
    else:
        scores = g.op("Div", [g.op("MatMul", [q, kt]),
                              g.const(np.array(np.sqrt(DH), np.float32))])
    p = g.op("Softmax", [g.op("Add", [scores, add_mask])], axis=-1)
    ctx = g.op("Transpose", [g.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    if dynamo:
        # Per-head output projection: [B, S, HEADS, DH] x [DH, HID] summed
        # over the heads (a 4-D by 2-D MatMul).
        o = g.op("ReduceSum", [g.op("MatMul", [ctx, g.weight(DH, HID)]),
                               g.const(np.array([2]))], keepdims=0)
        o = g.op("Add", [o, g.weight(HID)])
    else:
        merged = g.op("Reshape", [ctx, g.op("Concat", [dims01(g, ctx),
                                                       g.const(np.array([HID]))],
                                            axis=0)])
        o = linear(g, merged, HID, HID)
    x = layer_norm(g, g.op("Add", [o, x]))
    # Feed-forward with GELU.
    f = linear(g, x, HID, FFN)
    if dynamo:
        f = g.op("Add", [g.op("Gelu", [f]),
                         g.op("Gelu", [f], approximate="tanh")])
    else:
        erf = g.op("Erf", [g.op("Div", [f, g.const(np.array(np.sqrt(2),
                                                             np.float32))])])
        f = g.op("Mul", [g.op("Mul", [f, g.op("Add", [erf, g.const(
            np.array(1, np.float32))])]), g.const(np.array(0.5, np.float32))])
    x = layer_norm(g, g.op("Add", [linear(g, f, FFN, HID), x]))
    g.nodes.append(h.make_node("Identity", [x], ["last_hidden_state"],
                               name="out"))
    # Pooler: the first token, dense, tanh.
    first = g.op("Gather", [x, g.const(np.array(0))], axis=1)
    pooled = g.op("Gemm", [first, g.weight(HID, HID), g.weight(HID)],
                  transB=1)
    g.nodes.append(h.make_node("Tanh", [pooled], ["pooler_output"],
                               name="pool"))
    graph = h.make_graph(
        g.nodes, "encoder",
        [h.make_tensor_value_info(ids, T.INT64, ["batch", "seq"]),
         h.make_tensor_value_info(mask, T.INT64, ["batch", "seq"])],
        [h.make_tensor_value_info("last_hidden_state", T.FLOAT,
                                  ["batch", "seq", HID]),
         h.make_tensor_value_info("pooler_output", T.FLOAT,
                                  ["batch", HID])], g.inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid(
        "", 20 if dynamo else 17)], producer_name="mica tests")
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def main():
    rng = np.random.default_rng(20)
    ids = rng.integers(0, VOCAB, (2, 7)).astype(np.int64)
    mask = np.ones((2, 7), np.int64)
    mask[1, 5:] = 0
    np.save(os.path.join(OUT, "encoder.input_ids.npy"), ids)
    np.save(os.path.join(OUT, "encoder.attention_mask.npy"), mask)
    for name, dynamo in (("encoder17", False), ("encoder20", True)):
        m = encoder(dynamo, rng)
        path = os.path.join(OUT, name + ".onnx")
        onnx.save(m, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        res = sess.run(None, {"input_ids": ids, "attention_mask": mask})
        for o, r in zip(sess.get_outputs(), res):
            np.save(os.path.join(OUT, "%s.want.%s.npy" % (name, o.name)), r)


main()
