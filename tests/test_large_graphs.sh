#!/bin/sh
# tests/test_large_graphs.sh - small versions of issue 25's large graphs
# (bench/gen_dag.py; the full sizes and their times are in
# bench/README.md, "Large graphs"): a 3,000-layer DAG whose skip
# connections keep a thousand tensors alive at once is planned in
# execution order (the greedy placement gives up), and its plan holds
# (mica run loads the saved engine, whose plan the loader checks: every
# block in the arena, none overlapping another that lives at once); and
# 3,000 network inputs run.  No timing: the figures are benchmarks.
#
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_TOP_BUILDDIR, MICA_MODULE_DIR.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP no python3 (bench/gen_dag.py writes the manifests)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-large-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

python3 "$top_src/bench/gen_dag.py" dag 3000 "$tmp/dag.yaml" || exit 1
python3 "$top_src/bench/gen_dag.py" inputs 3000 "$tmp/inputs.yaml" || exit 1

MICA_LOG_LEVEL=info run "$mica" build "$tmp/dag.yaml" --device cpu \
    --no-passes all -o "$tmp/dag.mica"
is 0 "$rc" "a 3,000-layer DAG with skip connections builds"
has "$tmp/err" "blocks planned in execution order" \
    "  planned in execution order (thousands live at once)"
run "$mica" run "$tmp/dag.mica" --output-dir "$tmp/o1"
is 0 "$rc" "  the saved engine loads (its plan checked) and runs"
run "$mica" run "$tmp/dag.yaml" --output-dir "$tmp/o2"
is 0 "$rc" "  with the graph passes too"
"$top_build/tests/npytool" cmp "$tmp/o1/t2999.npy" "$tmp/o2/t2999.npy" \
    1e-3 >"$tmp/cmp" 2>&1
ok $? "  the same values either way"

run "$mica" run "$tmp/inputs.yaml" --output-dir "$tmp/o3"
is 0 "$rc" "3,000 network inputs, generated: runs"
has "$tmp/out" "^s2998: float32 \[1, 4\]" "  the sum is written"

echo "1..$n"
[ "$failed" -eq 0 ]
