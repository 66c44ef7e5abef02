#!/bin/sh
# bench/graphs_gpu.sh - CUDA graphs of an execution context on the GPU
# (issue 14, points 4 and 7), in one run: tests/test_cuda_graph (results
# with graphs against results without, fallbacks and their reasons), the
# executor's host time per layer with and without graphs (bench_overhead),
# a loop against its body replayed as a graph (bench_loop), then `mica
# bench` with graphs (the default on cuda) and with --no-cuda-graph on a
# chain of 100 layers, examples/hello.yaml and the transformer encoder of
# the tests.  Each command is printed before its output.
#
#   sh bench/graphs_gpu.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR: a mica tree configured with CUDA (it builds what it runs).
set -u
build=$1 out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 1
export MICA_MODULE_DIR="$build/modules/.libs" MICA_DEVICE_DIR="$build/core/.libs"
status=0
go() {
    echo "\$ $*"
    "$@" || { echo "(status $?)"; status=1; }
    echo
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
date -u '+%Y-%m-%d %H:%M UTC'
make -C "$build" -j8 tools/mica bench/bench_overhead bench/bench_loop \
    >"$out/make.log" 2>&1 || { echo "build failed: $out/make.log"; exit 1; }
go make -C "$build" -j8 check TESTS=tests/test_cuda_graph
grep -E '^(not ok|ok|# )' "$build/tests/test_cuda_graph.log"
echo
go "$build/bench/bench_overhead"
go "$build/bench/bench_loop"
sh "$src/bench/gen_chain.sh" 100 "$out/chain100.yaml" || exit 1
mica=$build/tools/mica
go "$mica" bench "$out/chain100.yaml" --device cuda --no-data-transfers
go "$mica" bench "$out/chain100.yaml" --device cuda --no-data-transfers \
    --no-cuda-graph
go "$mica" bench "$src/examples/hello.yaml" --device cuda
go "$mica" bench "$src/examples/hello.yaml" --device cuda --no-cuda-graph
go "$mica" bench "$src/tests/manifests/transformer/encoder.yaml" \
    --device cuda --cuda-graph
go "$mica" bench "$src/tests/manifests/transformer/encoder.yaml" \
    --device cuda --no-cuda-graph
go "$mica" bench "$src/tests/manifests/transformer/encoder.yaml" \
    --device cuda --profile-layers
exit $status
