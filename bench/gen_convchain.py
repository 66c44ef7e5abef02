#!/usr/bin/env python3
"""bench/gen_convchain.py - write a chain of convolution blocks for
bench/fusion.sh: BLOCKS blocks over x [BATCH, CHANNELS, SIZE, SIZE], each
a Convolution (3x3, padding 1, CHANNELS maps) and what the fusion rules
fold into it (modules/convolution/fused_rules.c):

  --kind bias      Convolution -> ElementWise sum with a Constant bias
                   [1, C, 1, 1] -> Activation relu  (rule conv_add_relu)
  --kind residual  Convolution -> Scale (a batch norm, mode channel) ->
                   ElementWise sum with the block's input -> Activation
                   relu  (rule conv_scale_add_relu)

Weights uniform in [-1/sqrt(9 C), 1/sqrt(9 C)] (a fixed seed) in one raw
file beside the manifest.  The standard library only.

    python3 bench/gen_convchain.py OUT.yaml [--kind bias|residual]
        [--batch 32] [--channels 64] [--size 56] [--blocks 8]
"""
import argparse
import array
import os
import random
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--kind", choices=("bias", "residual"), default="bias")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--size", type=int, default=56)
    p.add_argument("--blocks", type=int, default=8)
    a = p.parse_args()
    if min(a.batch, a.channels, a.size, a.blocks) < 1:
        sys.exit("gen_convchain.py: every size must be >= 1")
    rng = random.Random(14)
    c = a.channels
    bound = (9 * c) ** -0.5
    base = os.path.splitext(a.out)[0]
    bin_path = base + ".bin"
    lines = [
        "# written by bench/gen_convchain.py: %d %s blocks" % (a.blocks,
                                                             a.kind),
        "mica: 1",
        "name: convchain-%s-%dx%dx%d-%d" % (a.kind, a.batch, c, a.size,
                                            a.blocks),
        "inputs:",
        "  x: {dtype: float32, shape: [%d, %d, %d, %d]}" % (a.batch, c,
                                                          a.size, a.size),
        "weights:",
    ]
    offset = 0
    with open(bin_path, "wb") as f:
        for i in range(a.blocks):
            blobs = [("w%d" % i, [c, c, 3, 3], bound, 0.0)]
            if a.kind == "bias":
                blobs.append(("b%d" % i, [1, c, 1, 1], 0.1, 0.0))
            else:
                blobs += [("s%d" % i, [c], 0.25, 1.0),
                          ("t%d" % i, [c], 0.1, 0.0)]
            for name, shape, spread, mid in blobs:
                n = 1
                for d in shape:
                    n *= d
                vals = array.array("f", (mid + rng.uniform(-spread, spread)
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
    conv = ("  - {name: conv%d, type: Convolution, inputs: [%s], outputs: "
            "[c%d], params: {num_output_maps: %d, kernel_size: [3, 3], "
            "padding: [1, 1], kernel: w%d}}")
    for i in range(a.blocks):
        lines.append(conv % (i, prev, i, c, i))
        if a.kind == "bias":
            lines += [
                "  - {name: cb%d, type: Constant, outputs: [B%d], params: "
                "{weights: b%d}}" % (i, i, i),
                "  - {name: add%d, type: ElementWise, inputs: [c%d, B%d], "
                "outputs: [a%d], params: {op: sum}}" % (i, i, i, i),
            ]
        else:
            lines += [
                "  - {name: bn%d, type: Scale, inputs: [c%d], outputs: "
                "[n%d], params: {mode: channel, scale: s%d, shift: t%d}}"
                % (i, i, i, i, i),
                "  - {name: add%d, type: ElementWise, inputs: [n%d, %s], "
                "outputs: [a%d], params: {op: sum}}" % (i, i, prev, i),
            ]
        lines.append("  - {name: relu%d, type: Activation, inputs: [a%d], "
                     "outputs: [h%d], params: {type: relu}}" % (i, i, i))
        prev = "h%d" % i
    lines.append("outputs: [%s]" % prev)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
