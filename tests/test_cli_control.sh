#!/bin/sh
# tests/test_cli_control.sh - loops and conditionals through the `mica`
# command: `mica inspect` shows each loop and conditional with its boundary
# layers and what runs inside it, `mica run` runs the simple if both ways
# and the for loop (and on CUDA when a GPU is usable, compared with the
# CPU), and a badly nested network is refused with one line.
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
dir=$top_src/tests/manifests/control

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-control-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$top_src/tests/tap.sh"

run "$mica" inspect "$dir/sum_even.yaml" --device cpu --no-passes pointwise
ok "$rc" "inspect sum_even.yaml"
has "$tmp/out" '^loops and conditionals (2):' "inspect: two constructs"
has "$tmp/out" '^  loop L (top level): layers 2-12$' "inspect: loop L and its layers"
has "$tmp/out" '^    boundary: sum (Recurrence), item (Iterator), result (LoopOutput)$' \
    "inspect: the loop's boundary layers"
has "$tmp/out" '^    inside:   half, twice, is_even, conditional E$' \
    "inspect: what runs inside the loop, the conditional included"
has "$tmp/out" '^  conditional E (in loop L): layers 7-11$' "inspect: E is nested in L"
has "$tmp/out" '^    true:     add$' "inspect: the true branch"
has "$tmp/out" '^    false:    -$' "inspect: an empty false branch"
run "$mica" inspect "$top_src/tests/manifests/dynamic/batch.yaml" --device cpu
hasnt "$tmp/out" 'loops and conditionals' "inspect: nothing of the kind without them"

"$npy" make "$tmp/x.npy" float32 4 1,2,3,4
"$npy" make "$tmp/y.npy" float32 4 0.5,-1,8,2
"$npy" make "$tmp/t.npy" bool "" 1
"$npy" make "$tmp/f.npy" bool "" 0
# runif NAME COND DEVICE: the simple if into $tmp/NAME
runif() {
    run "$mica" run "$dir/simple_if.yaml" --device "$3" --input "cond=$tmp/$2.npy" \
        --input "x=$tmp/x.npy" --input "y=$tmp/y.npy" --output-dir "$tmp/$1"
}
runif true t cpu
ok "$rc" "run simple_if.yaml, cond true"
is "float32 [4] 1.5 1 11 6" "$("$npy" dump "$tmp/true/z.npy")" "simple if: x + y"
runif false f cpu
ok "$rc" "run simple_if.yaml, cond false"
is "float32 [4] 0.5 3 -5 2" "$("$npy" dump "$tmp/false/z.npy")" "simple if: x - y"

"$npy" make "$tmp/j.npy" float32 2 1,2
"$npy" make "$tmp/k.npy" float32 2 10,20
"$npy" make "$tmp/n.npy" int32 "" 3
run "$mica" run "$dir/for_loop.yaml" --device cpu --input "j=$tmp/j.npy" \
    --input "k=$tmp/k.npy" --input "n=$tmp/n.npy" --output-dir "$tmp/for"
ok "$rc" "run for_loop.yaml, 3 trips"
is "float32 [2] 31 62" "$("$npy" dump "$tmp/for/i_last.npy")" "for loop: the last value"
is "float32 [3, 2] 1 2 11 22 21 42" "$("$npy" dump "$tmp/for/i_seq.npy")" \
    "for loop: the values of every trip"

if "$mica" run "$dir/simple_if.yaml" --device cuda --input "cond=$tmp/t.npy" \
    --input "x=$tmp/x.npy" --input "y=$tmp/y.npy" --output-dir "$tmp/cuda" \
    >/dev/null 2>&1; then
    is "$("$npy" dump "$tmp/true/z.npy")" "$("$npy" dump "$tmp/cuda/z.npy")" \
        "simple if on cuda: as on the cpu"
    runif cudaf f cuda
    is "$("$npy" dump "$tmp/false/z.npy")" "$("$npy" dump "$tmp/cudaf/z.npy")" \
        "simple if on cuda, cond false: as on the cpu"
else
    skip "simple if on cuda" "no usable GPU"
    skip "simple if on cuda, cond false" "no usable GPU"
fi

run "$mica" run "$dir/bad/unclean.yaml" --device cpu --input "x=$tmp/x.npy" \
    --output-dir "$tmp/bad"
ok $((rc == 0)) "a badly nested network is refused"
is 1 "$(wc -l <"$tmp/err" | tr -d ' ')" "with one line"
has "$tmp/err" "unclean.yaml:[0-9]*:[0-9]*: loop 'B' and loop 'A' are not nested cleanly" \
    "that names the file, the position and both loops"
ok "$(empty_dir "$tmp/bad"; echo $?)" "and writes nothing"

echo "1..$n"
[ "$failed" -eq 0 ]
