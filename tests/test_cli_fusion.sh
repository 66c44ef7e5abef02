#!/bin/sh
# tests/test_cli_fusion.sh - fusion rules through the `mica` command, on
# tests/manifests/fusion/fusion.yaml (its comment says what fuses):
#
#   - inspect shows each fused layer and what it replaced; --no-fusion
#     builds every layer as written; a chain whose middle tensor is a
#     network output is not fused;
#   - run gives the same outputs fused and not (within float rounding),
#     and compare says so (its no-fusion item);
#   - an engine keeps the record: inspect of the engine file shows it,
#     and the engine runs as the manifest does; an engine built with
#     --no-fusion has none;
#   - a third party's rule (tests/fusion/addrelu.so) fuses where its
#     module is loaded, and only there; its type runs on the CPU only,
#     so with --device cuda the rule does not fire (where a GPU is usable);
#   - rules that are wrong (tests/fusion/bad/badrules.so) are skipped at
#     load with one line each naming the module and the rule, and the
#     module's good rule still fires.
#
# The other graph passes are off (--passes fusion): they would write the
# manifest's bias sum as a Scale, which other rules fuse (test_cli_passes).
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
net=$top_src/tests/manifests/fusion/fusion.yaml
addrelu=$top_build/tests/fusion/.libs
bad=$top_build/tests/fusion/bad/.libs

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-fusion-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

types=$("$mica" modules 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
for t in Convolution FusedConvolution Scale ElementWise Activation Constant; do
    if ! echo "$types" | grep -qx "$t"; then
        echo "1..0 # SKIP the $t module is not built"
        exit 0
    fi
done

# same A B WHAT: every output of folder A equals B's within 1e-5
same() {
    st=0
    for o in y3 c4 y4; do
        "$npy" cmp "$1/$o.npy" "$2/$o.npy" 1e-5 >"$tmp/cmp" 2>&1 || st=1
        sed 's/^/#     /' "$tmp/cmp"
    done
    ok "$st" "$3"
}

# ---- inspect: fused, not fused ---------------------------------------------
run "$mica" inspect "$net" --passes fusion --device cpu
ok "$rc" "inspect builds the manifest"
has "$tmp/out" "relu1 (FusedConvolution) replaces, by rule conv_scale_add_relu: conv1 (Convolution), bn1 (Scale), add1 (ElementWise), relu1 (Activation)" \
    "inspect: conv1, bn1, add1, relu1 fused (batch norm and residual)"
has "$tmp/out" "relu2 (FusedConvolution) replaces, by rule conv_add_relu: conv2 (Convolution), add2 (ElementWise), relu2 (Activation)" \
    "inspect: conv2, add2, relu2 fused (a bias tensor at the sum's input 0)"
has "$tmp/out" "^ *[0-9][0-9]* *conv4 *Convolution " \
    "inspect: conv4 stays (its output is a network output)"
has "$tmp/out" "^ *[0-9][0-9]* *relu4 *Activation " "inspect: relu4 stays"
has "$tmp/out" "^ *[0-9][0-9]* *relu3 *Activation " \
    "inspect: without addrelu.so, relu3 stays an Activation"

run "$mica" inspect "$net" --passes fusion --device cpu --no-fusion
ok "$rc" "inspect --no-fusion builds the manifest"
hasnt "$tmp/out" "FusedConvolution\|fused layers" \
    "inspect --no-fusion: nothing fused"
has "$tmp/out" "^ *[0-9][0-9]* *bn1 *Scale " "inspect --no-fusion: bn1 is there"

run "$mica" inspect "$net" --passes fusion --device cpu --prefer Convolution=reference
hasnt "$tmp/out" "FusedConvolution" \
    "inspect --prefer Convolution=reference: convolutions are not fused"
has "$tmp/out" "^ *[0-9][0-9]* *conv1 *Convolution *1 *reference " \
    "inspect --prefer Convolution=reference: conv1 runs the reference"

# ---- run: the same outputs -------------------------------------------------
run "$mica" run "$net" --passes fusion --device cpu --output-dir "$tmp/fused"
ok "$rc" "run fused"
run "$mica" run "$net" --passes fusion --device cpu --no-fusion --output-dir "$tmp/plain"
ok "$rc" "run --no-fusion"
same "$tmp/fused" "$tmp/plain" "fused and unfused outputs agree within 1e-5"
"$npy" cmp "$tmp/fused/y4.npy" "$tmp/fused/c4.npy" 1e-5 >/dev/null 2>&1
[ $? -ne 0 ]
ok $? "the comparison sees a difference (relu4 changes c4)"

run "$mica" compare "$net" --passes fusion --a device=cpu,no-fusion --b device=cpu
ok "$rc" "compare: no-fusion against fusion passes"
run "$mica" compare "$net" --passes fusion --b fusion
[ "$rc" -eq 2 ]
ok $? "compare: an unknown item is a usage error"
has "$tmp/err" "no-fusion" "compare: the usage error lists no-fusion"

# ---- engines ---------------------------------------------------------------
run "$mica" build "$net" --passes fusion --device cpu -o "$tmp/fused.mica"
ok "$rc" "build an engine with fusion"
run "$mica" inspect "$tmp/fused.mica"
has "$tmp/out" "relu1 (FusedConvolution) replaces, by rule conv_scale_add_relu: conv1 (Convolution), bn1 (Scale), add1 (ElementWise), relu1 (Activation)" \
    "inspect of the engine file shows the record"
run "$mica" run "$tmp/fused.mica" --output-dir "$tmp/engine"
ok "$rc" "the engine runs"
same "$tmp/engine" "$tmp/plain" "the engine's outputs agree with the unfused run"
run "$mica" build "$net" --passes fusion --device cpu --no-fusion -o "$tmp/plain.mica"
ok "$rc" "build --no-fusion"
run "$mica" inspect "$tmp/plain.mica"
hasnt "$tmp/out" "FusedConvolution\|fused layers" \
    "inspect of the --no-fusion engine: nothing fused"
run "$mica" run "$tmp/plain.mica" --output-dir "$tmp/plain_engine"
ok "$rc" "the --no-fusion engine runs"

# ---- a third party's rule --------------------------------------------------
run "$mica" inspect "$net" --passes fusion --device cpu --module-path "$addrelu"
has "$tmp/out" "relu3 (AddRelu) replaces, by rule add_relu: add3 (ElementWise), relu3 (Activation)" \
    "addrelu.so: its rule fuses add3 and relu3"
run "$mica" inspect "$net" --passes fusion --device cpu --module-path "$addrelu" --no-fusion
hasnt "$tmp/out" "AddRelu" "addrelu.so with --no-fusion: nothing fused"
run "$mica" run "$net" --passes fusion --device cpu --module-path "$addrelu" \
    --output-dir "$tmp/addrelu"
ok "$rc" "run with addrelu.so"
same "$tmp/addrelu" "$tmp/plain" "AddRelu gives the unfused outputs"
run "$mica" build "$net" --passes fusion --device cpu --module-path "$addrelu" \
    -o "$tmp/addrelu.mica"
ok "$rc" "build with addrelu.so"
run "$mica" inspect "$tmp/addrelu.mica" --module-path "$addrelu"
has "$tmp/out" "relu3 (AddRelu) replaces, by rule add_relu" \
    "the engine keeps the third party's record"

# AddRelu takes float32 only: on int32 tensors the fused network does not
# build, and the network is built as written, saying so.
cat >"$tmp/int.yaml" <<'EOF'
mica: 1
name: int-add-relu
inputs:
  a: {dtype: int32, shape: [4]}
  b: {dtype: int32, shape: [4]}
layers:
  - {name: add, type: ElementWise, inputs: [a, b], outputs: [s], params: {op: sum}}
  - {name: relu, type: Activation, inputs: [s], outputs: [y], params: {type: relu}}
outputs: [y]
EOF
run "$mica" inspect "$tmp/int.yaml" --device cpu --module-path "$addrelu"
ok "$rc" "addrelu.so on int32: the network still builds"
hasnt "$tmp/out" "AddRelu" "addrelu.so on int32: nothing fused"
has "$tmp/err" "passes: the rewritten network does not build (.*AddRelu.*); built without passes" \
    "addrelu.so on int32: a warning says why"

run "$mica" modules --module-path "$addrelu"
has "$tmp/out" "^  add_relu  *AddRelu  *ElementWise\[op=sum\] -> Activation\[type=relu\]  .*addrelu.so" \
    "mica modules lists the third party's rule"
has "$tmp/out" "^  conv_scale_add_relu  *FusedConvolution  *Convolution -> Scale\[mode=channel|uniform, channel_axis=1, !power\] -> ElementWise\[op=sum\] -> Activation\[type=relu\] " \
    "mica modules lists the in-tree rules with their conditions"

# ---- refused rules ---------------------------------------------------------
run "$mica" modules --module-path "$bad"
ok "$rc" "a module with bad rules loads"
for r in "'empty': 0 steps" "'foreign': its type 'Convolution' is not a type this module registered" \
    "'no_type': step 0 has no type" "'far_input': input 0 names step 3" \
    "'cond_null': step 0 (Activation): condition 0 has no field or values" \
    "'relu_twice' is declared twice"; do
    has "$tmp/out" "badrules.so: fusion rule $r.*; skipped" \
        "refused: fusion rule $r"
done
run "$mica" run "$net" --passes fusion --device cpu --module-path "$bad" \
    --output-dir "$tmp/bad"
ok "$rc" "run with badrules.so"
"$npy" cmp "$tmp/bad/y4.npy" "$tmp/plain/y4.npy" 1e-5 >/dev/null 2>&1
[ $? -ne 0 ]
ok $? "its good rule fires (relu4 became Twice: y4 differs)"

# ---- CUDA: a rule without a CUDA implementation does not fire -------------
if "$mica" run "$net" --passes fusion --device cuda --output-dir "$tmp/probe" \
    >/dev/null 2>&1; then
    run "$mica" inspect "$net" --passes fusion --device cuda --module-path "$addrelu"
    has "$tmp/out" "relu1 (FusedConvolution) replaces" \
        "cuda: FusedConvolution fuses"
    hasnt "$tmp/out" "AddRelu" "cuda: AddRelu (CPU only) does not fire"
    run "$mica" run "$net" --passes fusion --device cuda --output-dir "$tmp/cuda"
    ok "$rc" "cuda: run fused"
    run "$mica" run "$net" --passes fusion --device cuda --no-fusion \
        --output-dir "$tmp/cuda_plain"
    ok "$rc" "cuda: run --no-fusion"
    st=0
    for o in y3 c4 y4; do
        "$npy" cmp "$tmp/cuda/$o.npy" "$tmp/plain/$o.npy" 1e-3 \
            >"$tmp/cmp" 2>&1 || st=1
        "$npy" cmp "$tmp/cuda_plain/$o.npy" "$tmp/plain/$o.npy" 1e-3 \
            >>"$tmp/cmp" 2>&1 || st=1
        sed 's/^/#     /' "$tmp/cmp"
    done
    ok "$st" "cuda: fused and unfused agree with the CPU within 1e-3"
    run "$mica" compare "$net" --passes fusion --a device=cuda,no-fusion --b device=cuda \
        --atol 1e-4 --rtol 1e-4
    ok "$rc" "cuda: compare no-fusion against fusion"
    run "$mica" run "$net" --passes fusion --device cuda --prefer FusedConvolution=cuda \
        --output-dir "$tmp/cuda_direct"
    st=$rc
    for o in y3 c4 y4; do
        "$npy" cmp "$tmp/cuda_direct/$o.npy" "$tmp/plain/$o.npy" 1e-3 \
            >/dev/null 2>&1 || st=1
    done
    ok "$st" "cuda: FusedConvolution=cuda agrees with the CPU"
else
    for s in "cuda: FusedConvolution fuses" "cuda: AddRelu does not fire" \
        "cuda: run fused" "cuda: run --no-fusion" "cuda: outputs agree" \
        "cuda: compare" "cuda: FusedConvolution=cuda"; do
        skip "$s" "no usable GPU"
    done
fi

echo "1..$n"
[ "$failed" -eq 0 ]
