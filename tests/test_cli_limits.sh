#!/bin/sh
# tests/test_cli_limits.sh - beyond the limits of docs/limits.md the
# command prints one line, exits with status 1 and writes nothing
# (issue 15): weights of shape [2^32, 2^32, 4], an input of shape
# [INT64_MAX, 2], a .npy input whose header claims [2^40, 2^40], a
# self-referencing alias, billion laughs, 100,000 nested lists, a
# manifest over 64 MiB; and a manifest that loads modules without
# --allow-manifest-modules.
#
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_TOP_BUILDDIR, MICA_MODULE_DIR.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-limits-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" modules 2>/dev/null | grep -q '^Activation '; then
    echo "1..0 # SKIP the Activation module is not built"
    exit 0
fi

# refused NAME FILE PATTERN: mica build FILE refuses with one line
# matching PATTERN, status 1, and writes no engine
refused() {
    run "$mica" build "$2" -o "$tmp/out.mica"
    is 1 "$rc" "$1: status 1"
    is 1 "$(lines "$tmp/err")" "$1: one line"
    has "$tmp/err" "$3" "$1: says why"
    ok "$([ ! -e "$tmp/out.mica" ]; echo $?)" "$1: no engine written"
}

cat > "$tmp/bigw.yaml" <<'YAML'
mica: 1
weights:
  w: {dtype: float32, shape: [4294967296, 4294967296, 4], data: []}
layers:
  - {name: c, type: Constant, outputs: [k], params: {weights: w, shape: [4294967296, 4294967296, 4]}}
  - {name: s, type: Slice, inputs: [k], outputs: [y], params: {start: [0, 0, 0], size: [1, 1, 2], stride: [1, 1, 1]}}
outputs: [y]
YAML
refused "weights [2^32, 2^32, 4]" "$tmp/bigw.yaml" \
    "^mica: .*bigw.yaml:3:30: weights 'w': shape \[4294967296, 4294967296, 4\] has more than 2^63 elements\$"

cat > "$tmp/bigin.yaml" <<'YAML'
mica: 1
inputs:
  x: {dtype: float32, shape: [9223372036854775807, 2]}
layers:
  - {name: r, type: Activation, inputs: [x], outputs: [y], params: {type: relu}}
outputs: [y]
YAML
refused "input [INT64_MAX, 2]" "$tmp/bigin.yaml" \
    "input 'x': shape \[9223372036854775807, 2\] has more than 2^63 elements\$"

printf 'mica: 1\nweights:\n  w: {dtype: float32, shape: [2], data: &a [1, *a]}\noutputs: []\n' \
    > "$tmp/alias.yaml"
refused "self-referencing alias" "$tmp/alias.yaml" \
    "alias.yaml:3:48: YAML alias '\*a': a manifest may not use aliases"

{
    echo 'mica: 1'
    echo 'a: &a [x, x, x, x, x, x, x, x, x, x]'
    prev=a
    for k in b c d e f g h i; do
        echo "$k: &$k [*$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev]"
        prev=$k
    done
} > "$tmp/laughs.yaml"
refused "billion laughs" "$tmp/laughs.yaml" "laughs.yaml:3:8: YAML alias '\*a'"

awk 'BEGIN { printf "mica: 1\nx: "; for (i = 0; i < 100000; i++) printf "[";
             for (i = 0; i < 100000; i++) printf "]"; print "" }' > "$tmp/deep.yaml"
refused "100,000 nested lists" "$tmp/deep.yaml" \
    "deep.yaml:2:67: YAML nested deeper than 64 levels, the most a manifest may have\$"

printf 'mica: 1\n' > "$tmp/huge.yaml"
dd if=/dev/zero bs=1 count=0 seek=67108865 of="$tmp/huge.yaml" 2>/dev/null
refused "a manifest of 64 MiB + 1 byte" "$tmp/huge.yaml" \
    "huge.yaml: 67108865 bytes, more than the 64 MiB a manifest may have\$"

printf 'mica: 1\nmodules:\n  load: [./evil.so]\noutputs: []\n' > "$tmp/mods.yaml"
refused "modules.load without permission" "$tmp/mods.yaml" \
    "mods.yaml:3:9: modules.load: this manifest loads modules (native code), which is off unless its caller allows it: run mica with --allow-manifest-modules"
run "$mica" --allow-manifest-modules build "$tmp/mods.yaml" -o "$tmp/out.mica"
has "$tmp/err" "mods.yaml:3:10: modules.load: .*evil.so: cannot load" \
    "modules.load with --allow-manifest-modules: loaded (here: missing)"

# A .npy input whose header claims [2^40, 2^40] float32, with no data.
cat > "$tmp/relu.yaml" <<'YAML'
mica: 1
inputs:
  x: {dtype: float32, shape: [-1, -1]}
profiles:
  - x: {min: [1, 1], opt: [2, 2], max: [4, 4]}
layers:
  - {name: r, type: Activation, inputs: [x], outputs: [y], params: {type: relu}}
outputs: [y]
YAML
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }"
printf '\223NUMPY\001\000\166\000%-117s\n' "$hdr" > "$tmp/big.npy"
run "$mica" run "$tmp/relu.yaml" --input "x=$tmp/big.npy" --output-dir "$tmp/outs"
is 1 "$rc" "npy input of [2^40, 2^40]: status 1"
is 1 "$(lines "$tmp/err")" "npy input of [2^40, 2^40]: one line"
has "$tmp/err" "shape \[1099511627776, 1099511627776\] is larger than the largest tensor mica accepts" \
    "npy input of [2^40, 2^40]: says why"
ok "$(empty_dir "$tmp/outs"; echo $?)" "npy input of [2^40, 2^40]: nothing written"

echo "1..$n"
[ "$failed" -eq 0 ]
