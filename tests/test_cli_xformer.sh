#!/bin/sh
# tests/test_cli_xformer.sh - the transformer fusion rules through the
# `mica` command, on the ONNX files of tests/onnx/make_xformer.py
# (PyTorch's TorchScript exporter, opset 14):
#
#   - ln14.onnx (nn.LayerNorm): the nine layers of the decomposed layer
#     normalization become one Normalization (rule layer_norm_rank3);
#     gelu14.onnx (F.gelu): five layers become an Activation gelu_erf
#     (rule gelu_erf_div); fused and --no-fusion runs agree;
#   - tiny_bert14.onnx (a two-layer BERT): every LayerNorm (5), GELU
#     (2) and attention (2) of it fuses, and its output agrees with the
#     unfused run;
#   - tiny_bert_dyn.onnx (the dynamo exporter's) and tiny_bert_eager14.onnx
#     (eager attention): the attention rules (sdpa_qk_mask_guard,
#     attn_mul_mask) fire on both layers, and the outputs agree with the
#     network built without passes;
#   - on tiny_bert_dyn.onnx (random biases) the products by constant
#     weights with their bias, GELU and residual become FusedMatrixMultiply
#     layers (rules matmul_bias, matmul_bias_act, matmul_bias_residual),
#     which agree (oneDNN and the reference) with the network as written;
#   - a module built against mica/module.h before the rules grew links
#     and tensor tests (tests/fusion/v1/addrelu.so) loads and its rule
#     fires as before.
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
models=$top_src/tests/onnx/models
v1=$top_build/tests/fusion/v1/.libs

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-xformer-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" import --list-ops >/dev/null 2>&1; then
    echo "1..0 # SKIP mica is built without the ONNX importer"
    exit 0
fi
types=$("$mica" modules 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
for t in Normalization Activation Reduce ElementWise Unary Constant; do
    if ! echo "$types" | grep -qx "$t"; then
        echo "1..0 # SKIP the $t module is not built"
        exit 0
    fi
done

# agree A B OUT WHAT: output OUT of folders A and B within 1e-5
agree() {
    "$npy" cmp "$1/$3.npy" "$2/$3.npy" 1e-5 >"$tmp/cmp" 2>&1
    st=$?
    sed 's/^/#     /' "$tmp/cmp"
    ok "$st" "$4"
}

# ---- LayerNorm and GELU alone ----------------------------------------------
run "$mica" inspect "$models/ln14.onnx" --device cpu
ok "$rc" "inspect ln14.onnx"
has "$tmp/out" "/ln/Add_1 (Normalization) replaces, by rule layer_norm_rank3: /ln/ReduceMean (Reduce), /ln/Sub (ElementWise), /ln/Pow (ElementWise), /ln/ReduceMean_1 (Reduce), /ln/Add (ElementWise), /ln/Sqrt (Unary), /ln/Div (ElementWise), /ln/Mul (ElementWise), /ln/Add_1 (ElementWise)" \
    "ln14: the decomposed LayerNorm is one Normalization"
has "$tmp/out" "layers (3," "ln14: 3 layers left (the scale, the bias and the Normalization; the constants only the pattern read go)"
run "$mica" inspect "$models/ln14.onnx" --device cpu --no-fusion
hasnt "$tmp/out" "Normalization" "ln14 --no-fusion: no Normalization"
for f in "" --no-fusion; do
    run "$mica" run "$models/ln14.onnx" --device cpu $f \
        --input "input=$models/xformer.x.npy" --output-dir "$tmp/ln$f"
    ok "$rc" "run ln14.onnx $f"
done
agree "$tmp/ln" "$tmp/ln--no-fusion" 13 "ln14: fused and unfused agree"

run "$mica" inspect "$models/gelu14.onnx" --device cpu
has "$tmp/out" "/Mul_1 (Activation) replaces, by rule gelu_erf_div: /Div (ElementWise), /Erf (Unary), /Add (ElementWise), /Mul (ElementWise), /Mul_1 (ElementWise)" \
    "gelu14: the decomposed GELU is one Activation"
for f in "" --no-fusion; do
    run "$mica" run "$models/gelu14.onnx" --device cpu $f \
        --input "onnx::Div_0=$models/xformer.x.npy" --output-dir "$tmp/ge$f"
    ok "$rc" "run gelu14.onnx $f"
done
agree "$tmp/ge" "$tmp/ge--no-fusion" 8 "gelu14: fused and unfused agree"

# ---- a tiny BERT -------------------------------------------------------------
shapes="input_ids:2x16,attention_mask:2x16"
ins="--input input_ids=$models/tiny_bert14.input_ids.npy --input attention_mask=$models/tiny_bert14.attention_mask.npy"
# (the pointwise pass would take the GELUs into Pointwise layers with their
# neighbours: the rules' records are counted without it)
run "$mica" inspect "$models/tiny_bert14.onnx" --device cpu --shapes "$shapes" \
    --no-passes pointwise
ok "$rc" "inspect tiny_bert14.onnx"
cnt=$(grep -c "by rule layer_norm_rank3" "$tmp/out")
[ "$cnt" -eq 5 ]
ok $? "tiny_bert14: 5 LayerNorms fused (found $cnt)"
cnt=$(grep -c "by rule gelu_erf_div" "$tmp/out")
[ "$cnt" -eq 2 ]
ok $? "tiny_bert14: 2 GELUs fused (found $cnt)"
cnt=$(grep -c "(Attention) replaces, by rule sdpa_qk_mask_guard" "$tmp/out")
[ "$cnt" -eq 2 ]
ok $? "tiny_bert14: 2 attentions fused (found $cnt)"
for f in "" --no-fusion; do
    run "$mica" run "$models/tiny_bert14.onnx" --device cpu $f $ins \
        --output-dir "$tmp/bert$f"
    ok "$rc" "run tiny_bert14.onnx $f"
    [ "$rc" -eq 0 ] || sed 's/^/#     /' "$tmp/err"
done
agree "$tmp/bert" "$tmp/bert--no-fusion" out "tiny_bert14: fused and unfused agree"

# ---- attention as the exporters write it -------------------------------------
# tiny_bert_dyn.onnx (dynamo: q and k scaled, the mask added, the isnan
# guard) and tiny_bert_eager14.onnx (eager attention: the scores times the
# scale, the mask added): every attention becomes one Attention layer; the
# fused engine agrees with the one built as written, at two shapes (the
# mask pads the second sequence)
for m in tiny_bert_dyn:sdpa_qk_mask_guard tiny_bert_eager14:attn_mul_mask; do
    f=${m%%:*}
    rule=${m#*:}
    run "$mica" inspect "$models/$f.onnx" --device cpu --shapes "$shapes"
    ok "$rc" "inspect $f.onnx"
    [ "$rc" -eq 0 ] || sed 's/^/#     /' "$tmp/err"
    cnt=$(grep -c "(Attention) replaces, by rule $rule:" "$tmp/out")
    [ "$cnt" -eq 2 ]
    ok $? "$f: 2 attentions fused by $rule (found $cnt)"
    for p in "" none; do
        run "$mica" run "$models/$f.onnx" --device cpu ${p:+--passes $p} \
            $ins --output-dir "$tmp/$f$p"
        ok "$rc" "run $f.onnx ${p:+--passes $p}"
        [ "$rc" -eq 0 ] || sed 's/^/#     /' "$tmp/err"
    done
    agree "$tmp/$f" "$tmp/${f}none" out "$f: with the passes and without agree"
    run "$mica" compare "$models/$f.onnx" --shapes input_ids:1x5,attention_mask:1x5 \
        --a no-passes=fusion
    ok "$rc" "$f: mica compare --a no-passes=fusion at 1x5"
done

# ---- linear layers: products by constant weights with their epilogues -----
# tiny_bert_dyn (random biases): each layer's q, k, v (bias), output (bias,
# residual), intermediate (bias, GELU) and output (bias, residual) products
# become FusedMatrixMultiply layers, their weights and biases its params;
# the Constants they were go.  Both implementations (oneDNN where built,
# the reference) agree with the network built without passes.
run "$mica" inspect "$models/tiny_bert_dyn.onnx" --device cpu --shapes "$shapes"
ok "$rc" "inspect tiny_bert_dyn.onnx"
for m in matmul_bias:6 matmul_bias_act:2 matmul_bias_residual:4; do
    rule=${m%%:*}
    want=${m#*:}
    cnt=$(grep -c "(FusedMatrixMultiply) replaces, by rule $rule:" "$tmp/out")
    [ "$cnt" -eq "$want" ]
    ok $? "tiny_bert_dyn: $want products fused by $rule (found $cnt)"
done
cnt=$(grep -c " Constant  " "$tmp/out")
run "$mica" inspect "$models/tiny_bert_dyn.onnx" --device cpu --shapes "$shapes" \
    --no-passes fusion
was=$(grep -c " Constant  " "$tmp/out")
[ "$cnt" -le $((was - 24)) ]
ok $? "tiny_bert_dyn: the 12 weights and 12 biases are no Constant layers any more ($was -> $cnt)"
for impl in "" reference; do
    run "$mica" compare "$models/tiny_bert_dyn.onnx" --shapes "$shapes" \
        --input input_ids="$models/tiny_bert14.input_ids.npy" \
        --input attention_mask="$models/tiny_bert14.attention_mask.npy" \
        --a passes=none ${impl:+--b prefer=FusedMatrixMultiply=$impl}
    ok "$rc" "tiny_bert_dyn: FusedMatrixMultiply ${impl:-(default)} agrees with the network as written"
    [ "$rc" -eq 0 ] || sed 's/^/#     /' "$tmp/out"
done

# ---- a module built against the first layout of fusion rules --------------
net=$top_src/tests/manifests/fusion/fusion.yaml
run "$mica" inspect "$net" --device cpu --module-path "$v1"
ok "$rc" "inspect with the v1 addrelu.so"
has "$tmp/out" "relu3 (AddRelu) replaces, by rule add_relu: add3 (ElementWise), relu3 (Activation)" \
    "v1 addrelu.so: its rule loads and fuses add3 and relu3"
hasnt "$tmp/err" "fusion rule" "v1 addrelu.so: no load problem"

echo "1..$n"
[ "$failed" -eq 0 ]
