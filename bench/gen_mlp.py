#!/usr/bin/env python3
"""bench/gen_mlp.py - write an MLP manifest for `mica bench` and `mica
compare` on the GPU: LAYERS blocks of MatrixMultiply (x [BATCH, HIDDEN]
times W [HIDDEN, HIDDEN]), ElementWise sum with a bias [1, HIDDEN] and
Activation relu; weights uniform in [-1/sqrt(HIDDEN), 1/sqrt(HIDDEN)]
(a fixed seed) in one raw file beside the manifest.  The standard
library only (no NumPy on the device machine).

    python3 bench/gen_mlp.py OUT.yaml [--batch 64] [--hidden 1024] [--layers 8]
"""
import argparse
import array
import os
import random
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    a = p.parse_args()
    if a.batch < 1 or a.hidden < 1 or a.layers < 1:
        sys.exit("gen_mlp.py: --batch, --hidden and --layers must be >= 1")
    rng = random.Random(14)
    bound = a.hidden ** -0.5
    base = os.path.splitext(a.out)[0]
    bin_path = base + ".bin"
    lines = [
        "# written by bench/gen_mlp.py: %d blocks of MatrixMultiply, bias, relu"
        % a.layers,
        "mica: 1",
        "name: mlp-%dx%d-%d" % (a.batch, a.hidden, a.layers),
        "inputs:",
        "  x: {dtype: float32, shape: [%d, %d]}" % (a.batch, a.hidden),
        "weights:",
    ]
    offset = 0
    with open(bin_path, "wb") as f:
        for i in range(a.layers):
            for name, shape in (("w%d" % i, [a.hidden, a.hidden]),
                                ("b%d" % i, [1, a.hidden])):
                n = shape[0] * shape[1]
                vals = array.array("f", (rng.uniform(-bound, bound)
                                         for _ in range(n)))
                if sys.byteorder != "little":
                    vals.byteswap()
                vals.tofile(f)
                lines.append("  %s: {dtype: float32, shape: %s, file: %s, "
                             "offset: %d}" % (name, shape,
                                              os.path.basename(bin_path),
                                              offset))
                offset += 4 * n
    lines.append("layers:")
    prev = "x"
    for i in range(a.layers):
        lines += [
            "  - {name: cw%d, type: Constant, outputs: [W%d], params: "
            "{weights: w%d, shape: [%d, %d]}}" % (i, i, i, a.hidden, a.hidden),
            "  - {name: cb%d, type: Constant, outputs: [B%d], params: "
            "{weights: b%d, shape: [1, %d]}}" % (i, i, i, a.hidden),
            "  - {name: mm%d, type: MatrixMultiply, inputs: [%s, W%d], "
            "outputs: [m%d]}" % (i, prev, i, i),
            "  - {name: bias%d, type: ElementWise, inputs: [m%d, B%d], "
            "outputs: [s%d], params: {op: sum}}" % (i, i, i, i),
            "  - {name: relu%d, type: Activation, inputs: [s%d], "
            "outputs: [h%d], params: {type: relu}}" % (i, i, i),
        ]
        prev = "h%d" % i
    lines.append("outputs: [%s]" % prev)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
