#!/bin/sh
# bench/gen_chain.sh N [FILE] - write a manifest of N layers: a chain of
# Activation relu layers over x (float32 [4]), each reading the previous
# one's output, with N tensors and N names to resolve.  For the scale
# figures of bench/README.md (`mica build` of 10,000 to 100,000 layers):
#
#   bench/gen_chain.sh 100000 /tmp/chain100k.yaml
#   time mica build /tmp/chain100k.yaml -o /tmp/chain100k.mica
set -eu
n=${1:?usage: gen_chain.sh N [FILE]}
out=${2:-/dev/stdout}
awk -v n="$n" 'BEGIN {
    print "mica: 1"
    print "name: chain" n
    print "inputs:"
    print "  x: {dtype: float32, shape: [4]}"
    print "layers:"
    prev = "x"
    for (i = 1; i <= n; i++) {
        t = (i == n) ? "y" : "t" i
        printf "  - {name: relu%d, type: Activation, inputs: [%s], outputs: [%s], params: {type: relu}}\n", i, prev, t
        prev = t
    }
    print "outputs: [y]"
}' > "$out"
