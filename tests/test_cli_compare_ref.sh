#!/bin/sh
# tests/test_cli_compare_ref.sh - `mica compare` against references
# (issue 26): A defaults to every layer on its CPU reference (so a CPU
# build compares oneDNN with the reference, not with itself);
# --all-layers on a CPU network whose formats need reorders; --b
# outputs=DIR (saved .npy files) and --save-outputs DIR; --b onnxruntime
# (ONNX Runtime loaded at run time: from ${MICA_PYTHON:-python3}'s
# onnxruntime wheel here, skipped without one) against the outputs
# tests/onnx/make_models.py saved from onnxruntime; the refusals, one
# line each.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
npy=$top_build/tests/npytool
cnn=$top_src/tests/manifests/cnn/small_cnn.yaml
m=$top_src/tests/onnx/models

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-compare-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

# ---- A: the reference --------------------------------------------------------
run "$mica" compare "$cnn" --atol 1e-4 --rtol 1e-3
is 0 "$rc" "compare of a CNN: exits 0"
has "$tmp/out" "^A: reference (engine on cpu)$" "  A is the reference"
if "$mica" inspect "$cnn" 2>/dev/null | grep -q ' onednn '; then
    has "$tmp/out" "^  layer '.*' (.*): A reference, B onednn$" \
        "  and B oneDNN: they differ (no longer oneDNN against itself)"
else
    skip "  and B oneDNN" "no oneDNN in this build"
fi
run "$mica" compare "$cnn" --a device=cpu --all-layers --atol 1e-4 --rtol 1e-3
is 0 "$rc" "--all-layers with A on oneDNN (channels-last reorders): exits 0"
hasnt "$tmp/err" "is not defined" "  no reorder tensor marked"
has "$tmp/out" "^  tensor 'c2' (layer 'conv2'): " "  the network's own tensors compared"
has "$tmp/out" "^PASS: 1 output matches, and 8 intermediate tensors$" "  all of them"

# ---- saved outputs ---------------------------------------------------------
run "$mica" compare "$cnn" --save-outputs "$tmp/s" --atol 1e-4 --rtol 1e-3
is 0 "$rc" "--save-outputs: exits 0"
has "$tmp/out" "^A: 1 output saved in $tmp/s/A$" "  says where A's went"
[ -f "$tmp/s/A/logits.npy" ] && [ -f "$tmp/s/B/logits.npy" ]
ok $? "  DIR/A/NAME.npy and DIR/B/NAME.npy"
run "$mica" run "$cnn" --output-dir "$tmp/r"
"$npy" cmp "$tmp/s/B/logits.npy" "$tmp/r/logits.npy" 0 >"$tmp/cmp" 2>&1
ok $? "  B's are what 'mica run' writes for the same seed"
run "$mica" compare "$cnn" --b "outputs=$tmp/s/A" --atol 0 --rtol 0
is 0 "$rc" "--b outputs=DIR: A against its own saved outputs, exactly"
has "$tmp/out" "^B: outputs=$tmp/s/A$" "  names B"
mkdir -p "$tmp/s/bad"
"$npy" make "$tmp/s/bad/logits.npy" float32 2x10x1x1 \
    1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10
run "$mica" compare "$cnn" --b "outputs=$tmp/s/bad"
is 1 "$rc" "--b outputs=DIR of other values: exits 1"
has "$tmp/out" "^FAIL: 1 of 1 outputs differ$" "  FAIL"
run "$mica" compare "$cnn" --b "outputs=$tmp/none"
is 1 "$rc" "--b outputs=DIR without the file: exits 1"
has "$tmp/err" "^mica: B: output 'logits' of $tmp/none: " "  one line naming the output and folder"

# ---- refusals -------------------------------------------------------------
run "$mica" compare "$cnn" --b onnxruntime,fp16
is 2 "$rc" "onnxruntime with another item: usage error"
has "$tmp/err" "onnxruntime takes no other item" "  says so"
run "$mica" compare "$cnn" --a "outputs=$tmp/s/A" --b onnxruntime
is 2 "$rc" "two reference runners: usage error"
run "$mica" compare "$cnn" --b "outputs=$tmp/s/A" --all-layers
is 2 "$rc" "--all-layers with a reference runner: usage error"
run "$mica" compare "$cnn" --b onnxruntime
is 1 "$rc" "onnxruntime on a manifest: exits 1"
has "$tmp/err" "^mica: B: onnxruntime runs ONNX models: .* is a manifest$" "  says why"

# ---- ONNX Runtime ------------------------------------------------------------
if ! "$mica" import --list-ops >/dev/null 2>&1; then
    skip "onnxruntime" "no ONNX importer in this build"
    echo "1..$n"
    [ "$failed" -eq 0 ]
    exit
fi
run "$mica" compare "$m/mlp.onnx" --shapes in:0:2x4 --all-layers --b fp16
if grep -q "^first layer that diverges: " "$tmp/out"; then
    is 1 "$rc" "--all-layers on an ONNX model, B in float16: exits 1"
    has "$tmp/out" "^first layer that diverges: 'dense/matmul' (MatrixMultiply, " \
        "  the first layer that diverges: the matrix product"
    has "$tmp/out" "^the ONNX node it comes from: MatMul 'dense/matmul', inputs 'in:0', 'w', output 'mm'$" \
        "  and its ONNX node, with its tensors"
else
    skip "--all-layers on an ONNX model names the ONNX node" "no layer runs in float16 on this build's CPU"
fi
run "$mica" compare "$m/mlp.onnx" --shapes in:0:2x4 --b "onnxruntime=$tmp/nothing.so"
is 1 "$rc" "onnxruntime=PATH that does not load: exits 1"
has "$tmp/err" "^mica: B: onnxruntime: cannot load $tmp/nothing.so: " "  one line naming it"
other=$(ls "$MICA_MODULE_DIR"/*.so | head -1)
run "$mica" compare "$m/mlp.onnx" --shapes in:0:2x4 --b "onnxruntime=$other"
is 1 "$rc" "onnxruntime=PATH of another library (a mica module): exits 1"
has "$tmp/err" "has no OrtGetApiBase: not ONNX Runtime" "  says it is not ONNX Runtime"

py=${MICA_PYTHON:-${MICA_REAL_PYTHON:-python3}}
lib=$("$py" -c 'import os, glob, onnxruntime; print(sorted(glob.glob(os.path.join(os.path.dirname(onnxruntime.__file__), "capi", "libonnxruntime.so*")))[-1])' 2>/dev/null)
if [ -z "$lib" ]; then
    skip "onnxruntime" "no onnxruntime wheel for $py (set MICA_PYTHON)"
    echo "1..$n"
    [ "$failed" -eq 0 ]
    exit
fi
# ONNX Runtime's own allocations at exit are not mica's leaks.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS
run "$mica" compare "$m/mlp.onnx" --input "in:0=$m/mlp.in_0.npy" \
    --b "onnxruntime=$lib" --save-outputs "$tmp/o"
is 0 "$rc" "--b onnxruntime=LIB: exits 0"
has "$tmp/out" "^B: onnxruntime [0-9][0-9.]* ($lib)$" "  names its version and library"
has "$tmp/out" "^PASS: 2 outputs match$" "  both outputs match"
"$npy" cmp "$tmp/o/B/out%2Frelu.npy" "$m/mlp.want.out_relu.npy" 1e-6 >"$tmp/cmp" 2>&1
ok $? "  ONNX Runtime's out/relu, saved, is what make_models.py saved from it"
"$npy" cmp "$tmp/o/B/out%3Asum.npy" "$m/mlp.want.out_sum.npy" 1e-6 >"$tmp/cmp" 2>&1
ok $? "  and out:sum"
run "$mica" compare "$m/mlp.onnx" --input "in:0=$m/mlp.in_0.npy" \
    --a "onnxruntime=$(dirname "$lib")" --b "outputs=$tmp/o/B" --atol 0 --rtol 0
is 2 "$rc" "onnxruntime as A and saved outputs as B: usage error (one must be mica)"
run env MICA_ONNXRUNTIME="$(dirname "$(dirname "$lib")")" "$mica" compare \
    "$m/mlp.onnx" --input "in:0=$m/mlp.in_0.npy" --a onnxruntime
is 0 "$rc" "--a onnxruntime, the wheel's folder in \$MICA_ONNXRUNTIME: exits 0"
has "$tmp/out" "^A: onnxruntime [0-9.]* ($lib)$" "  found there"
run "$mica" compare "$m/encoder17.onnx" --input "input_ids=$m/encoder.input_ids.npy" \
    --input "attention_mask=$m/encoder.attention_mask.npy" --b "onnxruntime=$lib" \
    --atol 1e-4 --rtol 1e-3
is 0 "$rc" "an encoder with int64 inputs (int32 in mica) against onnxruntime"

echo "1..$n"
[ "$failed" -eq 0 ]
