#!/bin/sh
# tests/test_cli_transformer.sh - a transformer encoder block
# (tests/manifests/transformer/, written by tests/gen/transformer.py:
# layer norm from Reduce, ElementWise and Unary, two-head attention from
# MatrixMultiply, Shuffle and SoftMax, a GELU from Unary erf, residual
# adds) through `mica run` on the CPU and, where a GPU is usable, on
# CUDA, each against NumPy's output y.npy.
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
npy=$top_build/tests/npytool
dir=$top_src/tests/manifests/transformer

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-transformer-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$top_src/tests/tap.sh"

run "$mica" run "$dir/encoder.yaml" --device cpu --input "x=$dir/x.npy" \
    --output-dir "$tmp/cpu"
ok "$rc" "encoder block on the cpu runs"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
run "$npy" cmp "$tmp/cpu/y.npy" "$dir/y.npy" 1e-5
ok "$rc" "encoder block on the cpu: NumPy's output within 1e-5"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"

run "$mica" run "$dir/encoder.yaml" --device cuda --input "x=$dir/x.npy" \
    --output-dir "$tmp/cuda"
if [ "$rc" -ne 0 ] && grep -q -e "no usable CUDA GPU" \
    -e "has no CUDA support" "$tmp/err"; then
    skip "encoder block on cuda runs" "no usable GPU"
    skip "encoder block on cuda: NumPy's output" "no usable GPU"
else
    ok "$rc" "encoder block on cuda runs"
    [ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
    run "$npy" cmp "$tmp/cuda/y.npy" "$dir/y.npy" 1e-4
    ok "$rc" "encoder block on cuda: NumPy's output within 1e-4"
    [ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
