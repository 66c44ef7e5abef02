#!/bin/sh
# tests/test_cli_onnx.sh - ONNX models through the `mica` command: import
# (manifest and weights file), run, build and inspect of an .onnx file
# told apart by its contents, the profile from the inputs or the shape
# options, names percent-encoded in output files, external data (64 bytes
# in, and 4.5 GB into a sparse file), loops and conditionals, a
# third-party operator, and the refusals (a damaged file at several
# offsets, a file that is not ONNX, an unsupported operator, a bad
# attribute, a type mica lacks), each one line, nothing written.
#
# The models are tests/onnx/models/ (tests/onnx/make_models.py writes them
# and the outputs onnxruntime gives).  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
npy=$top_build/tests/npytool
m=$top_src/tests/onnx/models

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-onnx-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" import --list-ops >/dev/null 2>&1; then
    echo "1..0 # SKIP $("$mica" import --list-ops 2>&1 | head -1)"
    exit 0
fi

# ---- the list of operators -------------------------------------------------
run "$mica" import --list-ops
is 0 "$rc" "import --list-ops exits 0"
has "$tmp/out" '^Conv  *Convolution$' "  Conv maps onto Convolution"
has "$tmp/out" '^Loop  *TripLimit, Recurrence, LoopOutput$' "  and Loop onto loops"
has "$tmp/out" '^NonZero  *NonZero$' "  and NonZero onto NonZero (a data-dependent size)"
run "$mica" import
is 2 "$rc" "import without a model: usage error"

# ---- import, then run the manifest and the model ---------------------------
run "$mica" import "$m/mlp.onnx" -o "$tmp/mlp.yaml"
is 1 "$rc" "a runtime batch without shapes is refused"
has "$tmp/err" "^mica: .*mlp.onnx: input 'in:0' has runtime dimensions (-1x4, -1 unknown): give its shapes with --shapes in:0:AxBx" "  saying which input and how"
[ ! -e "$tmp/mlp.yaml" ] && [ ! -e "$tmp/mlp.weights" ]
ok $? "  and writes nothing"
run "$mica" import "$m/mlp.onnx" -o "$tmp/mlp.yaml" --min-shapes in:0:1x4 \
    --opt-shapes in:0:2x4 --max-shapes in:0:8x4
is 0 "$rc" "import with a profile"
has "$tmp/out" "^imported .*mlp.onnx: $tmp/mlp.yaml and its weights (76 bytes)" "  says what it wrote"
has "$tmp/mlp.yaml" '^  "in:0": {dtype: float32, shape: \[-1, 4\]}' "  the input keeps its name, batch -1"
has "$tmp/mlp.yaml" '^  - "in:0": {min: \[1, 4\], opt: \[2, 4\], max: \[8, 4\]}' "  the profile"
has "$tmp/mlp.yaml" '^  w: {dtype: float32, shape: \[4, 3\], file: mlp.weights, offset: 0}' "  weights in mlp.weights"
has "$tmp/mlp.yaml" '^  b: {dtype: float32, shape: \[1, 3\], file: mlp.weights, offset: 64}' "  at 64-byte aligned offsets"
has "$tmp/mlp.yaml" '^  # ONNX MatMul .dense/matmul.$' "  a comment names the node and its op"
has "$tmp/mlp.yaml" '^  - {name: dense/matmul, type: MatrixMultiply' "  the layer has the node's name"
has "$tmp/mlp.yaml" '^outputs: \[out/relu, "out:sum"\]$' "  the outputs keep their names"
[ -f "$tmp/mlp.weights" ] && [ "$(wc -c <"$tmp/mlp.weights")" -eq 76 ]
ok $? "  mlp.weights is beside it"
run "$mica" run "$tmp/mlp.yaml" --input "in:0=$m/mlp.in_0.npy" --output-dir "$tmp/o1"
is 0 "$rc" "run of the imported manifest"
[ -f "$tmp/o1/out%2Frelu.npy" ] && [ -f "$tmp/o1/out%3Asum.npy" ]
ok $? "  output names percent-encoded in file names"
"$npy" cmp "$tmp/o1/out%2Frelu.npy" "$m/mlp.want.out_relu.npy" 1e-5 >"$tmp/cmp" 2>&1
ok $? "  out/relu as onnxruntime gives it"
"$npy" cmp "$tmp/o1/out%3Asum.npy" "$m/mlp.want.out_sum.npy" 1e-5 >"$tmp/cmp" 2>&1
ok $? "  out:sum as onnxruntime gives it"
run "$mica" run "$m/mlp.onnx" --input "in:0=$m/mlp.in_0.npy" --output-dir "$tmp/o2"
is 0 "$rc" "run of the .onnx file, profile from the input's shape"
"$npy" cmp "$tmp/o2/out%2Frelu.npy" "$m/mlp.want.out_relu.npy" 1e-5 >"$tmp/cmp" 2>&1
ok $? "  the same outputs"
cp "$m/mlp.onnx" "$tmp/model.bin"
run "$mica" run "$tmp/model.bin" --input "in:0=$m/mlp.in_0.npy" --output-dir "$tmp/o3"
is 0 "$rc" "an ONNX model is told apart by its contents, not its name"
run "$mica" inspect "$m/mlp.onnx" --shapes in:0:3x4
is 0 "$rc" "inspect of the .onnx file with --shapes"
has "$tmp/out" 'dense/matmul' "  lists its layers"
run "$mica" build "$m/mlp.onnx" --shapes in:0:2x4 -o "$tmp/mlp.engine"
is 0 "$rc" "build of the .onnx file"
run "$mica" run "$tmp/mlp.engine" --input "in:0=$m/mlp.in_0.npy" --output-dir "$tmp/o4"
"$npy" cmp "$tmp/o4/out%3Asum.npy" "$m/mlp.want.out_sum.npy" 1e-5 >"$tmp/cmp" 2>&1
ok $? "  its engine runs the same"

# ---- external data -----------------------------------------------------------
"$npy" make "$tmp/x4.npy" float32 4 1,1,1,1
run "$mica" run "$m/ext.onnx" --input "x=$tmp/x4.npy" --output-dir "$tmp/o5"
is 0 "$rc" "weights 64 bytes into an external data file"
has "$tmp/out" '^  \[1, 2, 3, 4\]$' "  are read"
cp "$m/big.onnx" "$tmp/big.onnx"
if truncate -s 4600000000 "$tmp/big.data" 2>/dev/null &&
   printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100' |
   dd of="$tmp/big.data" bs=1 seek=4500000000 conv=notrunc 2>/dev/null; then
    run "$mica" run "$tmp/big.onnx" --input "x=$tmp/x4.npy" --output-dir "$tmp/o6"
    is 0 "$rc" "weights 4.5 GB into a (sparse) external data file"
    has "$tmp/out" '^  \[1, 2, 3, 4\]$' "  are read"
    rm -f "$tmp/big.data"
else
    skip "weights 4.5 GB into an external data file" "no sparse file here"
    skip "  are read" "no sparse file here"
fi
cp "$m/ext.onnx" "$tmp/ext.onnx"
printf 'short' >"$tmp/ext.data"
run "$mica" import "$tmp/ext.onnx" -o "$tmp/ext.yaml"
is 1 "$rc" "an external data file too short is refused"
has "$tmp/err" "^mica: .*ext.onnx: initializer 'w': external data file 'ext.data' has 5 bytes, the tensor needs 16 from offset 64$" "  in one line"
[ ! -e "$tmp/ext.yaml" ]
ok $? "  nothing written"

# ---- constants made by ConstantOfShape (the light_* models' kernels) -------
run "$mica" import "$m/splat.onnx" -o "$tmp/splat.yaml"
is 0 "$rc" "ConstantOfShape as a kernel, a large one as a tensor, a mask"
has "$tmp/splat.yaml" '^  k: {dtype: float32, shape: \[4, 3, 3, 3\], file: splat.weights, offset: 0}' "  the kernel is weights"
has "$tmp/splat.yaml" '^  mask: {dtype: bool, shape: \[2, 4, 32, 32\], file: splat.weights, offset: 448}' "  the mask too (a bool constant)"
[ "$(wc -c <"$tmp/splat.weights")" -eq 8640 ]
ok $? "  both written whole (432 bytes, 8192 at 448)"
has "$tmp/splat.yaml" '^  - {name: b, type: Fill, inputs: \[\], outputs: \[b\], params: {shape: \[2, 4, 32, 32\], op: linspace, alpha: 0.5' "  8192 elements of 0.5 are a Fill layer"
run "$mica" run "$tmp/splat.yaml" --input "x=$m/splat.x.npy" --output-dir "$tmp/o10"
is 0 "$rc" "  the imported manifest runs"
"$npy" cmp "$tmp/o10/z.npy" "$m/splat.want.z.npy" 1e-5 >"$tmp/cmp" 2>&1
ok $? "  as onnxruntime runs it"
"$npy" cmp "$tmp/o10/mask.npy" "$m/splat.want.mask.npy" >"$tmp/cmp" 2>&1
ok $? "  Dropout's mask all true"
run "$mica" run "$m/splat.onnx" --input "x=$m/splat.x.npy" --output-dir "$tmp/o11"
is 0 "$rc" "  and so does the model imported in memory"
"$npy" cmp "$tmp/o11/z.npy" "$m/splat.want.z.npy" 1e-5 >"$tmp/cmp" 2>&1
ok $? "  with the same outputs"

# ---- BERT-style encoders (tests/onnx/make_encoder.py) ----------------------
for e in encoder17 encoder20; do
    run "$mica" run "$m/$e.onnx" --input "input_ids=$m/encoder.input_ids.npy" \
        --input "attention_mask=$m/encoder.attention_mask.npy" \
        --output-dir "$tmp/$e"
    is 0 "$rc" "$e: runtime batch and sequence, int64 ids, a padding mask"
    "$npy" cmp "$tmp/$e/last_hidden_state.npy" \
        "$m/$e.want.last_hidden_state.npy" 1e-4 >"$tmp/cmp" 2>&1
    ok $? "  last_hidden_state as onnxruntime gives it"
    "$npy" cmp "$tmp/$e/pooler_output.npy" "$m/$e.want.pooler_output.npy" \
        1e-4 >"$tmp/cmp" 2>&1
    ok $? "  pooler_output too"
    run "$mica" build "$m/$e.onnx" --fp16 --device cpu \
        --min-shapes input_ids:1x1,attention_mask:1x1 \
        --opt-shapes input_ids:2x7,attention_mask:2x7 \
        --max-shapes input_ids:4x16,attention_mask:4x16 -o "$tmp/$e.engine"
    is 0 "$rc" "  built in float16 for batch 1-4, sequence 1-16"
    run "$mica" run "$tmp/$e.engine" \
        --input "input_ids=$m/encoder.input_ids.npy" \
        --input "attention_mask=$m/encoder.attention_mask.npy" \
        --output-dir "$tmp/$e.16"
    "$npy" cmp "$tmp/$e.16/last_hidden_state.npy" \
        "$m/$e.want.last_hidden_state.npy" 1e-2 >"$tmp/cmp" 2>&1
    ok $? "  float16 within 1e-2 (1 + |y|) of onnxruntime's float32 (no NaN from the mask)"
done

# ---- loops, conditionals, third-party operators -----------------------------
run "$mica" run "$m/control.onnx" --input "x=$m/control.x.npy" \
    --input "c=$m/control.c.npy" --output-dir "$tmp/o7"
is 0 "$rc" "a Loop and an If run"
"$npy" cmp "$tmp/o7/y.npy" "$m/control.want.y.npy" 1e-6 >"$tmp/cmp" 2>&1
ok $? "  as onnxruntime runs them"
"$npy" make "$tmp/false.npy" bool "" 0
run "$mica" run "$m/control.onnx" --input "x=$m/control.x.npy" \
    --input "c=$tmp/false.npy" --output-dir "$tmp/o8"
has "$tmp/out" '^  \[-6, 8\]$' "  the else branch"
"$npy" make "$tmp/a3.npy" float32 3 1,2,3
run "$mica" run "$m/thirdparty.onnx" --input "a=$tmp/a3.npy" \
    --input "b=$tmp/a3.npy" --output-dir "$tmp/o9"
is 0 "$rc" "an operator named after a registered layer type maps onto it"
has "$tmp/out" '^  \[1, 4, 9\]$' "  with its attribute as the field"

# ---- refusals: one line each, nothing written --------------------------------
refused() { # MODEL PATTERN DESCRIPTION
    run "$mica" import "$1" -o "$tmp/r.yaml"
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
       grep -q -e "$2" "$tmp/err" && [ ! -e "$tmp/r.yaml" ] &&
       [ ! -e "$tmp/r.weights" ]; then
        ok 0 "$3"
    else
        ok 1 "$3"
        echo "#     status $rc, want one line matching: $2"
        sed 's/^/#     | /' "$tmp/err"
    fi
}
refused "$m/unsupported.onnx" "^mica: .*unsupported.onnx: node 'det' (Det, opset 13): the operator is not supported ('mica import --list-ops' lists those that are) and no layer type 'Det' is registered$" "an unsupported operator"
refused "$m/custom_ns.onnx" "node 'foo' (com.example.Foo, opset 0): .*no layer type 'Foo' in namespace 'com.example' is registered$" "an operator of a domain nothing registers"
refused "$m/badattr.onnx" "^mica: .*badattr.onnx: node 'tr' (Transpose, opset 13): perm is not a permutation of 0..1$" "a bad attribute"
refused "$m/complex.onnx" "^mica: .*complex.onnx: input 'a' is of type complex64, which mica does not support$" "a type mica lacks"
refused "$m/mlp.in_0.npy" "^mica: .*mlp.in_0.npy: not an ONNX model (its first bytes are not those of a ModelProto)$" "a file that is not ONNX"
refused "$tmp/absent.onnx" "^mica: ONNX model: cannot open '.*absent.onnx': No such file or directory$" "a missing file"
size=$(wc -c <"$m/mlp.onnx")
for cut in 1 2 17 60 150 300 $((size - 1)); do
    head -c "$cut" "$m/mlp.onnx" >"$tmp/cut.onnx"
    refused "$tmp/cut.onnx" "^mica: .*cut.onnx: \(not a valid ONNX model: its protobuf does not decode (damaged or truncated file?)\|not an ONNX model\)" "the model cut at byte $cut"
done
for at in 3 40 100 200; do
    cp "$m/mlp.onnx" "$tmp/bad.onnx"
    printf '\377\377\377\377\377' | dd of="$tmp/bad.onnx" bs=1 seek="$at" conv=notrunc 2>/dev/null
    run "$mica" import "$tmp/bad.onnx" -o "$tmp/r.yaml"
    if [ "$rc" -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
       [ ! -e "$tmp/r.yaml" ]; then
        ok 0 "damaged at byte $at: one line, nothing written"
    elif [ "$rc" -eq 0 ]; then
        ok 0 "damaged at byte $at: still a valid model (a value changed)"
        rm -f "$tmp/r.yaml" "$tmp/r.weights"
    else
        ok 1 "damaged at byte $at"
        sed 's/^/#     | /' "$tmp/err"
    fi
done

# ---- a manifest mica would not read is not written (its 64 MiB cap) --------
if command -v python3 >/dev/null 2>&1; then
    python3 "$top_src/tests/onnx/gen_long_names.py" "$tmp/long.onnx" 40 1048576
    run "$mica" import "$tmp/long.onnx" -o "$tmp/long.yaml"
    is 1 "$rc" "import of a model whose manifest would be 83 MiB exits 1"
    has "$tmp/err" "^mica: .*long.yaml: the manifest would be 83 MiB, more than the 64 MiB mica reads; nothing written" \
        "  and says why, with the size"
    [ ! -e "$tmp/long.yaml" ] && [ ! -e "$tmp/long.weights" ] &&
        [ -z "$(ls -A "$tmp" | grep '^\.long')" ]
    ok $? "  nothing written"
    rm -f "$tmp/long.onnx"
else
    skip "import refuses a manifest over 64 MiB" "no python3"
    skip "  and says why, with the size" "no python3"
    skip "  nothing written" "no python3"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
