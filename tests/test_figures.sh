#!/bin/sh
# tests/test_figures.sh - the figures that README.md and docs/ quote are
# the code's (issue 26): the line `mica build` prints for
# examples/hello.yaml, and the ONNX backend suite's counts (the folders
# tests/onnx/expected.txt lists as not supported; passed + not supported
# = all, and all = the folders of libonnx-testdata where it is
# installed).  A figure that goes stale fails here, with the one to
# write.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-figures-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

# ---- mica build of the example -------------------------------------------
(cd "$tmp" && "$mica" build "$top_src/examples/hello.yaml" -o hello.engine \
    --device cpu) >"$tmp/built" 2>&1
built=$(cat "$tmp/built")
for f in README.md docs/mica.md; do
    quoted=$(grep -o 'built hello.engine: [^`]*bytes' "$top_src/$f" | head -1)
    is "$built" "$quoted" "$f quotes what 'mica build examples/hello.yaml' prints"
done

# ---- the ONNX backend suite's counts -------------------------------------
listed=$(grep -vc '^#\|^$' "$top_src/tests/onnx/expected.txt")
readme=$(sed -n 's/.*pass \([0-9]*\) of \([0-9]*\) today.*/\1 \2/p' "$top_src/README.md" | head -1)
readme_ns=$(sed -n 's/.*(\([0-9]*\) not supported.*/\1/p' "$top_src/README.md" | head -1)
doc=$(sed -n 's/^Counts ([^)]*): \([0-9]*\) passed, \([0-9]*\) not supported, \([0-9]*\) in$/\1 \2 \3/p' "$top_src/docs/onnx.md" | head -1)
set -- $readme
r_pass=${1:-}; r_all=${2:-}
set -- $doc
d_pass=${1:-}; d_ns=${2:-}; d_all=${3:-}
is "$listed" "$readme_ns" "README.md: not supported = the folders tests/onnx/expected.txt lists"
is "$listed" "$d_ns" "docs/onnx.md: the same"
is "$d_pass $d_all" "$r_pass $r_all" "  README.md's passed and all are docs/onnx.md's"
is "$r_all" "$((${r_pass:-0} + listed))" "  passed + not supported = all"
data=${MICA_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
if [ -d "$data/node" ]; then
    all=0
    for s in node pytorch-converted pytorch-operator simple; do
        [ -d "$data/$s" ] || continue
        all=$((all + $(find "$data/$s" -mindepth 1 -maxdepth 1 -type d | wc -l)))
    done
    is "$all" "${r_all:-0}" "  all = the folders of $data"
else
    skip "  all = the folders of libonnx-testdata" "no libonnx-testdata in $data"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
