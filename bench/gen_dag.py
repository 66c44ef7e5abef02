#!/usr/bin/env python3
"""bench/gen_dag.py - write large manifests for the planner and lookup
figures of issue 25 (bench/README.md, "Large graphs"); tests/
test_large_graphs.sh runs small ones in make check.

    python3 bench/gen_dag.py dag N OUT.yaml [--seed S]
        N ElementWise sum layers, layer i adding the previous tensor and
        one drawn uniformly from all earlier ones (skip connections of
        any length: thousands of tensors live at once), x [1, 4] in.
    python3 bench/gen_dag.py inputs N OUT.yaml
        N network inputs [1, 4], summed pairwise in a tree (N - 1 layers).

The standard library only.
"""
import argparse
import random


def dag(n, seed, f):
    rng = random.Random(seed)
    f.write("mica: 1\nname: dag%d\ninputs:\n  x: {dtype: float32, "
            "shape: [1, 4]}\nlayers:\n" % n)
    prev = "x"
    for i in range(n):
        skip = "x" if i == 0 else "t%d" % rng.randrange(i)
        f.write("  - {name: l%d, type: ElementWise, inputs: [%s, %s], "
                "outputs: [t%d], params: {op: sum}}\n" % (i, prev, skip, i))
        prev = "t%d" % i
    f.write("outputs: [%s]\n" % prev)


def inputs(n, f):
    f.write("mica: 1\nname: inputs%d\ninputs:\n" % n)
    for i in range(n):
        f.write("  x%d: {dtype: float32, shape: [1, 4]}\n" % i)
    f.write("layers:\n")
    level = ["x%d" % i for i in range(n)]
    k = 0
    while len(level) > 1:
        nxt = []
        for j in range(0, len(level) - 1, 2):
            f.write("  - {name: s%d, type: ElementWise, inputs: [%s, %s], "
                    "outputs: [s%d], params: {op: sum}}\n"
                    % (k, level[j], level[j + 1], k))
            nxt.append("s%d" % k)
            k += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    f.write("outputs: [%s]\n" % level[0])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["dag", "inputs"])
    p.add_argument("n", type=int)
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=25)
    a = p.parse_args()
    with open(a.out, "w") as f:
        if a.kind == "dag":
            dag(a.n, a.seed, f)
        else:
            inputs(a.n, f)


if __name__ == "__main__":
    main()
