#!/usr/bin/env python3
"""tests/onnx/gen_long_names.py OUT NODES NAMELEN - an ONNX chain of NODES
Relu nodes whose tensor names are NAMELEN bytes long (Python's standard
library only: the protobuf written by hand).  tests/test_cli_onnx.sh
makes a model whose manifest would pass mica's 64 MiB cap with it."""
import sys
def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f; n >>= 7
        if n: out.append(b | 0x80)
        else: out.append(b); return bytes(out)
def field(num, payload):          # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload
def vfield(num, v):
    return varint(num << 3) + varint(v)
nodes, namelen = int(sys.argv[2]), int(sys.argv[3])
name = lambda i: ("t%d_" % i).encode() + b"x" * namelen
vi = lambda n: field(1, n) + field(2, field(1, vfield(1, 1) + field(2, field(1, vfield(1, 4)))))
g = b"".join(field(1, field(1, name(i)) + field(2, name(i + 1)) + field(4, b"Relu"))
             for i in range(nodes))
g += field(2, b"g") + field(11, vi(name(0))) + field(12, vi(name(nodes)))
m = vfield(1, 7) + field(8, vfield(2, 13)) + field(7, g)
open(sys.argv[1], "wb").write(m)
