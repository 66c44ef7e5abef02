#!/bin/sh
# bench/scale.sh [MICA] [SIZES] - the time `mica build` takes for chains
# of N Activation layers (bench/gen_chain.sh), and `mica inspect` of the
# engine it wrote (reading it back), for each N of SIZES (default
# "10000 20000 100000").  CPU only; prints one line per size:
#
#   layers  build_s  load_s  engine_bytes
#
# MICA defaults to tools/mica of the current build folder.
set -eu
mica=${1:-./tools/mica}
sizes=${2:-"10000 20000 100000"}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
printf '%-8s %-8s %-8s %s\n' layers build_s load_s engine_bytes
for n in $sizes; do
    "$here/gen_chain.sh" "$n" "$tmp/chain.yaml"
    t0=$(now)
    "$mica" build "$tmp/chain.yaml" -o "$tmp/chain.mica" >/dev/null
    t1=$(now)
    "$mica" inspect "$tmp/chain.mica" >/dev/null
    t2=$(now)
    awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" \
        -v sz="$(wc -c < "$tmp/chain.mica")" \
        'BEGIN { printf "%-8s %-8.2f %-8.2f %s\n", n, b - a, c - b, sz }'
    rm -f "$tmp/chain.mica"
done
