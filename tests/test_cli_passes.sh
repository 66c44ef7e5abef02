#!/bin/sh
# tests/test_cli_passes.sh - choosing graph passes through the `mica`
# command (docs/passes.md), on tests/manifests/fusion/fusion.yaml:
#
#   - inspect prints the passes that ran, in the builder's order, each
#     with what it changed; --no-passes all (and --passes none) runs
#     none; --passes NAME runs that one; --no-passes NAME all but it;
#   - a name no pass has is refused in one line naming the passes;
#   - an engine file keeps the record, and inspect of it shows it;
#   - at info level the builder says what each pass did;
#   - compare takes passes=none and no-passes=NAME as items, and the
#     network as written agrees with what the passes made of it;
#   - folding, elimination, affine-scale and transpose-folding on their
#     manifests
#     (tests/manifests/passes/): each case they name is removed,
#     collapsed or rewritten, or stays.
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
net=$top_src/tests/manifests/fusion/fusion.yaml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-passes-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

echo "1..54"

# The passes this library has, in order (mica inspect lists every one
# that ran; none is turned off by default).
run "$mica" inspect "$net" --device cpu
is 0 "$rc" "inspect builds fusion.yaml"
has "$tmp/out" "^passes ([0-9]*, in the order they ran):" \
    "  a passes section"
has "$tmp/out" "^  fusion  *7 layers fused into 2" \
    "  fusion: what it changed"
names=$(sed -n '/^passes (/,/^$/p' "$tmp/out" | awk 'NR > 1 && NF { print $1 }')
ok $([ -n "$names" ] && echo 0 || echo 1) "  every pass named ($(echo $names))"

run "$mica" inspect "$net" --device cpu --no-passes all
is 0 "$rc" "--no-passes all builds"
has "$tmp/out" "^passes:   none" "  and no pass ran"
hasnt "$tmp/out" "FusedConvolution" "  the network as written"
run "$mica" inspect "$net" --device cpu --passes none
has "$tmp/out" "^passes:   none" "--passes none: no pass ran"

run "$mica" inspect "$net" --device cpu --passes fusion
has "$tmp/out" "^passes (1, in the order they ran):" \
    "--passes fusion: one pass ran"
has "$tmp/out" "FusedConvolution" "  and it fused"
run "$mica" inspect "$net" --device cpu --no-passes fusion
hasnt "$tmp/out" "^  fusion " "--no-passes fusion: every pass but fusion"
hasnt "$tmp/out" "FusedConvolution" "  nothing fused"
run "$mica" inspect "$net" --device cpu --no-fusion
hasnt "$tmp/out" "^  fusion " "--no-fusion is --no-passes fusion"

run "$mica" inspect "$net" --device cpu --passes fusion,constant-fold
is 1 "$rc" "an unknown pass name is refused"
has "$tmp/err" "^mica: passes: no pass is named 'constant-fold'; the passes are .*fusion" \
    "  in one line naming the passes"
is 1 "$(wc -l <"$tmp/err")" "  one line"

run "$mica" build "$net" --device cpu -o "$tmp/net.engine"
is 0 "$rc" "build"
run "$mica" inspect "$tmp/net.engine"
has "$tmp/out" "^  fusion  *7 layers fused into 2" \
    "  the engine file keeps what the passes did"

MICA_LOG_LEVEL=info run "$mica" inspect "$net" --device cpu
has "$tmp/err" "fusion rules: 7 layers fused into 2" \
    "info level: what each pass did"

run "$mica" compare "$net" --a passes=none --b ""
is 0 "$rc" "compare --a passes=none: the passes change no result"
has "$tmp/out" "^A: passes=none" "  A is the network as written"
run "$mica" compare "$net" --a no-passes=fusion,no-passes=all --b passes=all
is 0 "$rc" "compare takes no-passes=NAME (repeatable) and passes=all"

# ---- constant-folding (tests/manifests/passes/fold.yaml says what folds) ---
fo=$top_src/tests/manifests/passes/fold.yaml
run "$mica" inspect "$fo" --device cpu --passes constant-folding
has "$tmp/out" "^  constant-folding  *7 layers folded into 3 constants (80 bytes)$" \
    "constant-folding: Q/DQ, slices, concatenations, transposes, fills, shapes"
has "$tmp/out" " tr  *Constant .* -> wt " "  weights cut, joined and moved: a Constant"
has "$tmp/out" " wf  *Constant .* -> wfv " "  weights made by arithmetic: a Constant"
has "$tmp/out" " shp  *Constant .* -> xs " "  a shape every profile fixes: a Constant"
has "$tmp/out" " noise  *Fill " "  random values: not folded"
has "$tmp/out" " dshp  *Shape .*d -> ds " "  a shape a profile leaves free: stays"
run "$mica" compare "$fo" --a passes=none --b ""
is 0 "$rc" "  the outputs are those of the network as written"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"

# ---- elimination (tests/manifests/passes/eliminate.yaml says what goes) ----
# (the passes under test only: later passes rewrite what these leave)
el=$top_src/tests/manifests/passes/eliminate.yaml
run "$mica" inspect "$el" --device cpu --no-passes all
has "$tmp/out" "^layers (20," "eliminate.yaml as written: 20 layers"
run "$mica" inspect "$el" --device cpu --passes elimination
has "$tmp/out" "^  elimination  *10 layers removed (2 no-ops, 3 duplicates, 5 dead), 4 chains collapsed$" \
    "elimination: no-ops, duplicates, dead layers, chains"
has "$tmp/out" "^layers (10," "  10 layers left"
has "$tmp/out" " back  .*x, x -> y1 " \
    "  an Identity and two transposes that cancel: gone"
has "$tmp/out" " r2  *Shuffle .*x -> y2 " "  a reshape of a reshape: one"
has "$tmp/out" " p2  *Shuffle .*x -> y3 " "  a transpose then a reshape: one"
has "$tmp/out" " f32  *Identity .*q -> y4 " \
    "  int8 -> int32 -> float32: one cast"
has "$tmp/out" " h32  *Identity .*xh -> y5 " \
    "  float32 -> float16 -> float32 rounds: both stay"
has "$tmp/out" " y6  *ElementWise .*sa, sa -> y6 " \
    "  duplicate layers and Constants: merged"
hasnt "$tmp/out" " spare  " "  a layer nothing reads: gone"
run "$mica" compare "$el" --a passes=none --b ""
is 0 "$rc" "  the outputs are those of the network as written"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"

# ---- affine-scale (tests/manifests/passes/affine.yaml says what changes) ----
af=$top_src/tests/manifests/passes/affine.yaml
run "$mica" inspect "$af" --device cpu --passes affine-scale,fusion
has "$tmp/out" "^  affine-scale  *5 ElementWise layers made 4 Scales, 5 Constants unread$" \
    "affine-scale: per-channel and uniform affines made Scales"
has "$tmp/out" "relu (FusedConvolution) replaces, by rule conv_scale_relu: conv (Convolution), add (Scale), relu (Activation)" \
    "  a batch norm as arithmetic: one Scale, fused with its convolution"
has "$tmp/out" " sub  *Scale .*x -> y2 " "  x - k: a Scale"
has "$tmp/out" " div  *Scale .*x -> y3 " "  x / d: a Scale"
has "$tmp/out" "neg (FusedConvolution) replaces, by rule conv_scale: conv2 (Convolution), neg (Scale)" \
    "  u - c2, u one value after a convolution: a Scale, fused with it"
has "$tmp/out" " grid  *ElementWise " "  a Constant over two axes: stays"
run "$mica" compare "$af" --a passes=none --b ""
is 0 "$rc" "  the outputs are those of the network as written"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"

# ---- transpose-folding (tests/manifests/passes/transpose.yaml) -------------
tr=$top_src/tests/manifests/passes/transpose.yaml
run "$mica" inspect "$tr" --device cpu --passes transpose-folding
has "$tmp/out" "^  transpose-folding  *4 transposes folded into MatrixMultiply options (3 of operands, 1 of outputs)$" \
    "transpose-folding: operands and an output"
has "$tmp/out" " mm1  *MatrixMultiply .*a, b -> y1 " "  a times b's transpose"
has "$tmp/out" " sa  *ElementWise .*a, h -> ats/t " \
    "  through a product by one value"
has "$tmp/out" " mm3  *MatrixMultiply .*bt2, a -> y3 " \
    "  the transpose of a product: the swapped product"
has "$tmp/out" " k4  *Shuffle .*k -> kt/t " \
    "  a K path: its Shuffle moves rows only"
has "$tmp/out" " tb2  *Shuffle " "  a transpose read twice: stays"
run "$mica" compare "$tr" --a passes=none --b ""
is 0 "$rc" "  the outputs are those of the network as written"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"

exit $((failed > 0))
