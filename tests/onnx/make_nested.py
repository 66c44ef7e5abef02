#!/usr/bin/env python3
# tests/onnx/make_nested.py - issue 25's ONNX reproducers, written as raw
# protobuf wire format (no onnx package needed): messages nested thousands
# deep (protobuf-c's unpack recursed until the stack overflowed, before
# the importer's checks) and a name made twice, into fuzz/regress/onnx/;
# ext-data.onnx (external data) into tests/onnx/models/; shallow nests as
# fuzzer seeds into fuzz/corpus/onnx/.  tests/test_files_untrusted.c
# imports them.
#   python3 tests/onnx/make_nested.py [REGRESS [MODELS [CORPUS]]]
import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "fuzz/regress/onnx"


def varint(v):
    b = bytearray()
    while True:
        if v < 0x80:
            b.append(v)
            return bytes(b)
        b.append(v & 0x7f | 0x80)
        v >>= 7


def ld(field, payload):            # a length-delimited field
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def model(graph):
    # ir_version 8, graph, opset_import {version 13}
    return (varint(1 << 3) + varint(8) + ld(7, graph)
            + ld(8, varint(2 << 3) + varint(13)))


def typeproto_nest(depth):
    # TypeProto.sequence_type(4) -> Sequence.elem_type(1) -> TypeProto ...
    t = ld(1, varint(1 << 3) + varint(1))      # tensor_type{elem_type 1}
    for _ in range(depth):
        t = ld(4, ld(1, t))
    return t


def graph_nest(depth):
    # If(then_branch = graph with an If(then_branch = ...)) ...
    g = ld(2, b"inner")                         # GraphProto.name
    for _ in range(depth):
        attr = ld(1, b"then_branch") + ld(6, g) + varint(20 << 3) + varint(5)
        node = ld(1, b"c") + ld(2, b"y") + ld(4, b"If") + ld(5, attr)
        g = ld(1, node) + ld(2, b"g")
    return g


def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


vi = ld(1, b"x") + ld(2, typeproto_nest(5000))
save("nest-typeproto-5000.onnx", model(ld(11, vi) + ld(2, b"g")))
save("nest-if-3000.onnx", model(graph_nest(3000)))


# tests/onnx/models/ext-data.onnx: y = x + w, w of 2 floats in external
# data "w.bin" (tests/test_files_untrusted.c puts w.bin, or a link, next
# to a copy of it).
def vi_float2(name):
    dim = ld(1, varint(1 << 3) + varint(2))
    tensor = varint(1 << 3) + varint(1) + ld(2, dim)
    return ld(1, name) + ld(2, ld(1, tensor))


ext = ld(1, b"location") + ld(2, b"w.bin")
w = (varint(1 << 3) + varint(2) + varint(2 << 3) + varint(1) + ld(8, b"w")
     + ld(13, ext) + varint(14 << 3) + varint(1))
node = ld(1, b"x") + ld(1, b"w") + ld(2, b"y") + ld(4, b"Add")
graph = (ld(1, node) + ld(2, b"ext") + ld(5, w) + ld(11, vi_float2(b"x"))
         + ld(12, vi_float2(b"y")))
models = sys.argv[2] if len(sys.argv) > 2 else "tests/onnx/models"
with open(os.path.join(models, "ext-data.onnx"), "wb") as f:
    f.write(model(graph))

# fuzz/regress/onnx/dup-output.onnx: two nodes make 'y' (it was imported
# and the second renamed y_1).
n1 = ld(1, b"x") + ld(2, b"y") + ld(3, b"a") + ld(4, b"Identity")
n2 = ld(1, b"x") + ld(2, b"y") + ld(3, b"b") + ld(4, b"Identity")
save("dup-output.onnx", model(ld(1, n1) + ld(1, n2) + ld(2, b"g")
                              + ld(11, vi_float2(b"x"))
                              + ld(12, vi_float2(b"y"))))

# Seeds of the ONNX fuzzer (fuzz/corpus/onnx/): the same shapes, shallow.
corpus = sys.argv[3] if len(sys.argv) > 3 else "fuzz/corpus/onnx"
with open(os.path.join(corpus, "nest-if-3.onnx"), "wb") as f:
    f.write(model(graph_nest(3)))
vi = ld(1, b"x") + ld(2, typeproto_nest(3))
with open(os.path.join(corpus, "nest-typeproto-3.onnx"), "wb") as f:
    f.write(model(ld(11, vi) + ld(2, b"g")))
