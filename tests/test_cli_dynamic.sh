#!/bin/sh
# tests/test_cli_dynamic.sh - dynamic shapes end to end through the `mica`
# command, on the manifests of tests/manifests/dynamic/: Shape + Shuffle
# reshaping one input to the shape of another, one profile run at several
# batch sizes, two profiles with disjoint ranges (automatic choice,
# --profile, shapes outside one or every profile refused before anything
# runs), shape-tensor inputs inside and outside the profile's values,
# empty tensors through Reduce, Slice, Concatenation and Shuffle, the
# E/S classification that `mica inspect` shows, and examples/dynamic.yaml.
#
# Every run that succeeds on the CPU runs on CUDA too when a GPU is usable,
# and its outputs are compared with the CPU's.  A case whose layer types
# are not built is skipped.
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
dir=$top_src/tests/manifests/dynamic

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-dynamic-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"
# dump FILE: what npytool prints of it
dump() {
    "$npy" dump "$1" 2>&1
}
# mk FILE DTYPE DIMS VALUES: write a .npy file
mk() {
    "$npy" make "$@" || echo "# npytool make $* failed"
}
# The layer types built; `needs TYPE...` is true when all of them are.
types=$("$mica" modules 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
missing=
needs() {
    missing=
    for t in "$@"; do
        echo "$types" | grep -qx "$t" || missing="$missing $t"
    done
    [ -z "$missing" ]
}
if ! needs ElementWise Reduce Constant; then
    echo "1..0 # SKIP the ElementWise, Reduce and Constant modules are not built"
    exit 0
fi

# CUDA when a GPU is usable: the first manifest runs there, or not.
mk "$tmp/probe.npy" float32 2x2 1,2,3,4
mk "$tmp/x6.npy" float32 6 1,2,3,4,5,6
cuda=0
if "$mica" run "$dir/two_profiles.yaml" --device cuda \
    --input "x=$tmp/probe.npy" --output-dir "$tmp/probe" >/dev/null 2>&1; then
    cuda=1
fi

# go NAME MANIFEST ARGS...: run MANIFEST on the CPU into $tmp/NAME (status
# in $rc, messages in $tmp/out and $tmp/err) and check that it succeeds;
# with CUDA, run it there too into $tmp/NAME.cuda and compare every output.
go() {
    name=$1
    manifest=$2
    shift 2
    rm -rf "$tmp/$name" "$tmp/$name.cuda"
    run "$mica" run "$dir/$manifest" --device cpu --output-dir "$tmp/$name" "$@"
    if [ "$rc" -ne 0 ]; then
        ok 1 "$name: runs"
        sed 's/^/#     | /' "$tmp/err"
        return
    fi
    ok 0 "$name: runs"
    [ "$cuda" -eq 1 ] || return
    cp "$tmp/out" "$tmp/out.cpu"
    "$mica" run "$dir/$manifest" --device cuda --output-dir "$tmp/$name.cuda" \
        "$@" >"$tmp/out.cuda" 2>"$tmp/err.cuda"
    st=$?
    for f in "$tmp/$name"/*.npy; do
        [ "$st" -eq 0 ] || break
        b=$(basename "$f")
        if ! "$npy" cmp "$tmp/$name.cuda/$b" "$f" 1e-5 >"$tmp/cmp" 2>&1; then
            st=1
            sed "s/^/#     $b: /" "$tmp/cmp"
        fi
    done
    [ "$st" -eq 0 ] || sed 's/^/#     | /' "$tmp/err.cuda"
    ok "$st" "$name: CUDA gives the CPU's outputs"
    cp "$tmp/out.cpu" "$tmp/out"
}
# refused NAME MANIFEST ARGS...: the run fails with one line on stderr
# before anything is written; the message is in $tmp/err.
refused() {
    name=$1
    manifest=$2
    shift 2
    rm -rf "$tmp/$name"
    run "$mica" run "$dir/$manifest" --device cpu --output-dir "$tmp/$name" "$@"
    is 1 "$rc" "$name: refused (exit 1)"
    is 1 "$(wc -l <"$tmp/err" | tr -d ' ')" "$name: with one line"
    empty_dir "$tmp/$name"
    ok $? "$name: nothing written"
}

# ---- Shape + Shuffle: y reshaped to the shape of x -------------------------
if needs Shape Shuffle; then
    mk "$tmp/x23.npy" float32 2x3 0,0,0,0,0,0
    mk "$tmp/y6.npy" float32 6 1,2,3,4,5,6
    go like reshape_like.yaml --input "x=$tmp/x23.npy" --input "y=$tmp/y6.npy"
    is "float32 [2, 3] 1 2 3 4 5 6" "$(dump "$tmp/like/z.npy")" \
        "like: z is y in the shape of x"
    is "int32 [2] 2 3" "$(dump "$tmp/like/s.npy")" \
        "like: the output for shapes s is written too"
    mk "$tmp/x43.npy" float32 4x3 0,0,0,0,0,0,0,0,0,0,0,0
    mk "$tmp/y12.npy" float32 12 1,2,3,4,5,6,7,8,9,10,11,12
    go like4 reshape_like.yaml --input "x=$tmp/x43.npy" --input "y=$tmp/y12.npy"
    is "float32 [4, 3] 1 2 3 4 5 6 7 8 9 10 11 12" "$(dump "$tmp/like4/z.npy")" \
        "like: another shape of x"
    is "int32 [2] 4 3" "$(dump "$tmp/like4/s.npy")" "like: and its shape"
    mk "$tmp/y5.npy" float32 5 1,2,3,4,5
    refused like-bad reshape_like.yaml --input "x=$tmp/x23.npy" \
        --input "y=$tmp/y5.npy"
    has "$tmp/err" "reshape_like.yaml:14:5: layer 'reshape'.*\[2, 3\].*volume 5" \
        "like-bad: 5 values cannot take [2, 3]: file:line:col, layer, volumes"
    run "$mica" inspect "$dir/reshape_like.yaml" --device cpu
    is 0 "$rc" "like: inspect exits 0"
    has "$tmp/out" '^  s  *int32  *\[2\]  *S  .*shape output' \
        "like: inspect shows s as a shape tensor and an output for shapes"
    has "$tmp/out" '^  z  *float32  *\[[A-Za-z_][A-Za-z0-9_]*, 3\]  *E  *output' \
        "like: z has the symbolic shape of x"
else
    skip "Shape + Shuffle" "no module for$missing"
fi

# ---- one profile, several batch sizes -------------------------------------
mk "$tmp/b1.npy" float32 1x4 1,1,1,1
go batch1 batch.yaml --input "x=$tmp/b1.npy"
is "float32 [1, 4] 1 2 3 4" "$(dump "$tmp/batch1/p.npy")" "batch 1: p"
is "float32 [1] 10" "$(dump "$tmp/batch1/y.npy")" "batch 1: y"
mk "$tmp/b3.npy" float32 3x4 1,1,1,1,2,2,2,2,3,3,3,3
go batch3 batch.yaml --input "x=$tmp/b3.npy"
is "float32 [3] 10 20 30" "$(dump "$tmp/batch3/y.npy")" "batch 3: y"
has "$tmp/out" '^y: float32 \[3\] ' "batch 3: says the shape it ran with"
mk "$tmp/b8.npy" float32 8x4 1,1,1,1,2,2,2,2,3,3,3,3,4,4,4,4,5,5,5,5,6,6,6,6,7,7,7,7,8,8,8,8
go batch8 batch.yaml --input "x=$tmp/b8.npy"
is "float32 [8] 10 20 30 40 50 60 70 80" "$(dump "$tmp/batch8/y.npy")" \
    "batch 8 (the profile's max): y"
mk "$tmp/b9.npy" float32 9x4 1,1,1,1,2,2,2,2,3,3,3,3,4,4,4,4,5,5,5,5,6,6,6,6,7,7,7,7,8,8,8,8,9,9,9,9
refused batch9 batch.yaml --input "x=$tmp/b9.npy"
has "$tmp/err" "'x'" "batch 9: the message names the input"
has "$tmp/err" "\[9, 4\]" "batch 9: and its shape"
has "$tmp/err" "profile 0's \[1\.\.8, 4\]" "batch 9: and the profile's range"
mk "$tmp/b0.npy" float32 0x4 ""
refused batch0 batch.yaml --input "x=$tmp/b0.npy"
has "$tmp/err" "\[0, 4\]" "batch 0 (below the min): names the shape"
run "$mica" inspect "$dir/batch.yaml" --device cpu
is 0 "$rc" "batch: inspect exits 0"
sym=$(sed -n 's/^  \([A-Za-z_][A-Za-z0-9_]*\) = x\[0\]$/\1/p' "$tmp/out" | head -n 1)
ok $([ -n "$sym" ]; echo $?) "batch: inspect has a symbol for x[0] ($sym)"
has "$tmp/out" "^  x  *float32  *\[$sym, 4\]  *E  *input" \
    "batch: x has the shape [$sym, 4]"
has "$tmp/out" "^  y  *float32  *\[$sym\]  *E  *output" \
    "batch: y has the shape [$sym]"
has "$tmp/out" '^profiles (1):' "batch: inspect shows the profile"
has "$tmp/out" '^  profile 0: arena [1-9][0-9]* bytes' "batch: with its arena"
has "$tmp/out" '^    x  *\[1, 4\]  *\[4, 4\]  *\[8, 4\]$' \
    "batch: and the range of x"

# ---- two profiles with disjoint ranges ------------------------------------
mk "$tmp/t3.npy" float32 3x2 1,2,3,4,5,6
go auto0 two_profiles.yaml --input "x=$tmp/t3.npy"
has "$tmp/out" '^profile: 0$' "3 rows: the first profile is chosen"
is "float32 [3, 2] 2 4 6 8 10 12" "$(dump "$tmp/auto0/y.npy")" "3 rows: y"
mk "$tmp/t10.npy" float32 10x2 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20
go auto1 two_profiles.yaml --input "x=$tmp/t10.npy"
has "$tmp/out" '^profile: 1$' "10 rows: the second profile is chosen"
is "float32 [10, 2] 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 32 34 36 38 40" \
    "$(dump "$tmp/auto1/y.npy")" "10 rows: y"
go forced1 two_profiles.yaml --profile 1 --input "x=$tmp/t10.npy"
has "$tmp/out" '^profile: 1$' "--profile 1 with 10 rows: runs in profile 1"
refused forced0 two_profiles.yaml --profile 0 --input "x=$tmp/t10.npy"
has "$tmp/err" "'x'.*\[10, 2\]" "--profile 0 with 10 rows: names the input and shape"
has "$tmp/err" "profile 0's \[1\.\.4, 2\]" "  and profile 0's range"
refused forced1-small two_profiles.yaml --profile=1 --input "x=$tmp/t3.npy"
has "$tmp/err" "'x'.*\[3, 2\].*profile 1's \[5\.\.64, 2\]" \
    "--profile 1 with 3 rows: names profile 1's range"
mk "$tmp/t65.npy" float32 65x2 "$(seq -s, 1 130)"
refused outside two_profiles.yaml --input "x=$tmp/t65.npy"
has "$tmp/err" "'x'.*\[65, 2\]" "65 rows, outside every profile: names the input and shape"
has "$tmp/err" "profile 0's \[1\.\.4, 2\].*profile 1's \[5\.\.64, 2\]" \
    "  and every profile's range"
refused noprofile two_profiles.yaml --profile 2 --input "x=$tmp/t3.npy"
has "$tmp/err" "^mica: --profile 2: the network has 2 profiles (0 to 1)" \
    "--profile 2: there is no such profile"
run "$mica" run "$dir/two_profiles.yaml" --profile x --output-dir "$tmp/px"
is 2 "$rc" "--profile x: usage error (2)"
run "$mica" inspect "$dir/two_profiles.yaml" --device cpu
has "$tmp/out" '^profiles (2):' "inspect: two profiles"
a0=$(sed -n 's/^  profile 0: arena \([0-9]*\) bytes$/\1/p' "$tmp/out")
a1=$(sed -n 's/^  profile 1: arena \([0-9]*\) bytes$/\1/p' "$tmp/out")
ok $([ -n "$a0" ] && [ -n "$a1" ] && [ "$a1" -gt "$a0" ]; echo $?) \
    "inspect: profile 1 plans a larger arena than profile 0 ($a1 > $a0)"
has "$tmp/out" '^    x  *\[5, 2\]  *\[8, 2\]  *\[64, 2\]$' "inspect: profile 1's range"

# ---- shape-tensor inputs ---------------------------------------------------
if needs Shuffle; then
    mk "$tmp/n23.npy" int32 2 2,3
    go shape23 shape_input.yaml --input "x=$tmp/x6.npy" --input "n=$tmp/n23.npy"
    is "float32 [2, 3] 1 2 3 4 5 6" "$(dump "$tmp/shape23/y.npy")" \
        "shape input [2, 3]: y"
    mk "$tmp/n32.npy" int32 2 3,2
    go shape32 shape_input.yaml --input "x=$tmp/x6.npy" --input "n=$tmp/n32.npy"
    is "float32 [3, 2] 1 2 3 4 5 6" "$(dump "$tmp/shape32/y.npy")" \
        "shape input [3, 2]: y"
    mk "$tmp/n121.npy" int32 2 12,1
    refused shape-out shape_input.yaml --input "x=$tmp/x6.npy" \
        --input "n=$tmp/n121.npy"
    has "$tmp/err" "'n'.*\[12, 1\]" "shape input outside the profile: names the input and values"
    has "$tmp/err" "profile 0's values \[1\.\.6, 1\.\.6\]" "  and the profile's values"
    mk "$tmp/n22.npy" int32 2 2,2
    refused shape-volume shape_input.yaml --input "x=$tmp/x6.npy" \
        --input "n=$tmp/n22.npy"
    has "$tmp/err" "shape_input.yaml:11:5: layer 'reshape'.*\[2, 2\]" \
        "shape input [2, 2] for 6 values: file:line:col and layer"
    mk "$tmp/nf.npy" float32 2 2,3
    refused shape-dtype shape_input.yaml --input "x=$tmp/x6.npy" \
        --input "n=$tmp/nf.npy"
    has "$tmp/err" "^mica: input 'n': .*float32.*int32" \
        "shape input as float32: names the dtypes"
    run "$mica" inspect "$dir/shape_input.yaml" --device cpu
    has "$tmp/out" '^  n  *int32  *\[2\]  *S  *input' "inspect: n is a shape tensor"
    has "$tmp/out" '^    n  *values \[1, 1\]  *values \[2, 3\]  *values \[6, 6\]$' \
        "inspect: the profile's values of n"
else
    skip "shape-tensor input" "no module for$missing"
fi
if needs Fill; then
    mk "$tmp/n5.npy" int32 1 5
    go fill5 fill.yaml --input "n=$tmp/n5.npy"
    is "float32 [5] 1 1.5 2 2.5 3" "$(dump "$tmp/fill5/y.npy")" "Fill of n = [5]"
    mk "$tmp/n9.npy" int32 1 9
    refused fill9 fill.yaml --input "n=$tmp/n9.npy"
    has "$tmp/err" "'n' has values \[9\], outside profile 0's values \[1\.\.8\]" \
        "Fill of n = [9], above the max: names the input, value and range"
else
    skip "Fill with a shape-tensor input" "no module for$missing"
fi

# ---- empty tensors ---------------------------------------------------------
mk "$tmp/e03.npy" float32 0x3 ""
mk "$tmp/x23v.npy" float32 2x3 1,2,3,4,5,6
go empty-reduce empty_reduce.yaml --input "x=$tmp/e03.npy"
is "float32 [3] 0 0 0" "$(dump "$tmp/empty-reduce/s.npy")" "empty Reduce: sum is 0"
is "float32 [3] 1 1 1" "$(dump "$tmp/empty-reduce/p.npy")" "empty Reduce: prod is 1"
is "float32 [3] -inf -inf -inf" "$(dump "$tmp/empty-reduce/mx.npy")" \
    "empty Reduce: max is -inf"
is "float32 [3] inf inf inf" "$(dump "$tmp/empty-reduce/mn.npy")" \
    "empty Reduce: min is +inf"
is "float32 [0, 1]" "$(dump "$tmp/empty-reduce/r.npy")" \
    "empty Reduce: keeping the empty axis gives an empty tensor"
go full-reduce empty_reduce.yaml --input "x=$tmp/x23v.npy"
is "float32 [3] 5 7 9|float32 [3] 4 10 18|float32 [3] 4 5 6|float32 [3] 1 2 3|float32 [2, 1] 6 15|" \
    "$(for o in s p mx mn r; do dump "$tmp/full-reduce/$o.npy"; done | tr '\n' '|')" \
    "the same network with 2 rows"

if needs Slice; then
    go empty-slice empty_slice.yaml --input "x=$tmp/x23v.npy" --input "v=$tmp/e03.npy"
    is "float32 [2, 0]" "$(dump "$tmp/empty-slice/a.npy")" \
        "Slice of size 0 starting past the end: no bounds check"
    is "float32 [0, 2]" "$(dump "$tmp/empty-slice/c.npy")" \
        "Slice of size 0 on a runtime dimension of 0"
    go empty-slice2 empty_slice.yaml --input "x=$tmp/x23v.npy" --input "v=$tmp/x23v.npy"
    is "float32 [0, 2]" "$(dump "$tmp/empty-slice2/c.npy")" \
        "  and on a runtime dimension of 2"
    refused slice-bad empty_slice_bad.yaml --input "x=$tmp/e03.npy"
    has "$tmp/err" "empty_slice_bad.yaml:[0-9]*:[0-9]*: .*'one'" \
        "Slice of size 1 on an axis of 0: an error naming the layer"
else
    skip "empty Slice" "no module for$missing"
fi
if needs Slice Shape; then
    go slice-shape0 slice_shape.yaml --input "v=$tmp/e03.npy"
    is "float32 [0, 3]" "$(dump "$tmp/slice-shape0/b.npy")" \
        "Slice sized by Shape, of a runtime dimension of 0"
    go slice-shape2 slice_shape.yaml --input "v=$tmp/x23v.npy"
    is "float32 [2, 3] 1 2 3 4 5 6" "$(dump "$tmp/slice-shape2/b.npy")" \
        "Slice sized by Shape, 2 rows"
else
    skip "Slice sized by Shape" "no module for$missing"
fi

if needs Concatenation; then
    go empty-concat empty_concat.yaml --input "a=$tmp/e03.npy" --input "b=$tmp/x23v.npy"
    is "float32 [2, 3] 1 2 3 4 5 6" "$(dump "$tmp/empty-concat/c.npy")" \
        "Concatenation with an empty operand"
    mk "$tmp/a13.npy" float32 1x3 7,8,9
    go concat empty_concat.yaml --input "a=$tmp/a13.npy" --input "b=$tmp/x23v.npy"
    is "float32 [3, 3] 7 8 9 1 2 3 4 5 6" "$(dump "$tmp/concat/c.npy")" \
        "the same with one row"
else
    skip "empty Concatenation" "no module for$missing"
fi

if needs Shuffle; then
    mk "$tmp/e04.npy" float32 0x4 ""
    go empty-shuffle empty_shuffle.yaml --input "x=$tmp/e03.npy" --input "e=$tmp/e04.npy"
    is "float32 [0]" "$(dump "$tmp/empty-shuffle/f.npy")" \
        "Shuffle flattening a runtime dimension of 0"
    is "float32 [2, 2, 0]" "$(dump "$tmp/empty-shuffle/t.npy")" \
        "Shuffle of [0, 4]: transposed, reshaped with a literal 0"
    go full-shuffle empty_shuffle.yaml --input "x=$tmp/x23v.npy" --input "e=$tmp/e04.npy"
    is "float32 [6] 1 2 3 4 5 6" "$(dump "$tmp/full-shuffle/f.npy")" \
        "the same flattening 2 rows"
else
    skip "empty Shuffle" "no module for$missing"
fi

# ---- E/S classification ----------------------------------------------------
if needs Shuffle Unary; then
    run "$mica" inspect "$dir/classify.yaml" --device cpu --no-passes all
    is 0 "$rc" "classify: inspect exits 0"
    [ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
    has "$tmp/out" '^  c  *int32  *\[2\]  *E+S  ' \
        "a Constant read by ElementWise and by Shuffle's reshape input is E+S"
    has "$tmp/out" '^  k  *int32  *\[2\]  *E  ' "a Constant read by ElementWise only is E"
    has "$tmp/out" '^  e  *int32  *\[2\]  *E  *output' "the ElementWise output is E"
    has "$tmp/out" '^  y  *float32  *\[2, 3\]  *E  *output' "the Shuffle output is E"
    has "$tmp/out" '^  u  *float32  *\[6\]  *unused  ' "a tensor nothing reads is unused"
    go classify classify.yaml --input "x=$tmp/x6.npy"
    is "float32 [2, 3] 1 2 3 4 5 6" "$(dump "$tmp/classify/y.npy")" "classify: y"
    is "int32 [2] 12 23" "$(dump "$tmp/classify/e.npy")" "classify: e"
else
    skip "E/S classification" "no module for$missing"
fi

# ---- examples/dynamic.yaml -------------------------------------------------
if needs Activation; then
    ex=$top_src/examples/dynamic.yaml
    run "$mica" inspect "$ex" --device cpu
    has "$tmp/out" '^  N = x\[0\]$' "examples/dynamic.yaml: inspect shows N = x[0]"
    has "$tmp/out" '^profiles (2):' "examples/dynamic.yaml: and its two profiles"
    mk "$tmp/ex10.npy" float32 10x3 "$(seq -s, 1 30)"
    run "$mica" run "$ex" --device cpu --input "x=$tmp/ex10.npy" --output-dir "$tmp/ex"
    has "$tmp/out" '^profile: 1$' "examples/dynamic.yaml: 10 rows run in profile 1"
    is "float32 [10] 8 17 26 35 44 53 62 71 80 89" "$(dump "$tmp/ex/y.npy")" \
        "examples/dynamic.yaml: y"
else
    skip "examples/dynamic.yaml" "no module for$missing"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
