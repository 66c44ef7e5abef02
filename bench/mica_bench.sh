#!/bin/sh
# bench/mica_bench.sh - `mica bench` and `mica compare` on the GPU (issue
# 14): examples/hello.yaml, the transformer encoder block of the tests, and
# an MLP that bench/gen_mlp.py writes (8 blocks of 1024x1024 MatrixMultiply,
# bias and relu, batch 64), each timed with transfers, without them, and
# with the per-layer table; then the MLP compared on CUDA (float32 and
# float16) against the CPU reference.  `make bench-mica` runs it from a
# CUDA build; by hand:
#
#   sh bench/mica_bench.sh MICA_BINARY TOP_SRCDIR OUT_DIR
#
# Each command is printed before its output, so one log holds everything;
# OUT_DIR gets the JSON files of --export-times and --export-profile.
set -u
mica=$1 src=$2 out=$3
mkdir -p "$out" || exit 1
status=0
go() {
    echo "\$ mica $*"
    "$mica" "$@" || { echo "(status $?)"; status=1; }
    echo
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
date -u '+%Y-%m-%d %H:%M UTC'
python3 "$src/bench/gen_mlp.py" "$out/mlp.yaml" || exit 1

go bench "$src/examples/hello.yaml" --device cuda
go bench "$src/examples/hello.yaml" --device cuda --no-data-transfers
go bench "$src/tests/manifests/transformer/encoder.yaml" --device cuda \
    --profile-layers
go bench "$out/mlp.yaml" --device cuda --export-times "$out/mlp-times.json"
go bench "$out/mlp.yaml" --device cuda --no-data-transfers --profile-layers \
    --export-profile "$out/mlp-profile.json"
go bench "$out/mlp.yaml" --device cuda --fp16 --no-data-transfers
go bench "$out/mlp.yaml" --device cpu --duration-s 1
go bench "$out/mlp.yaml" --device cuda --cuda-graph
go bench "$out/mlp.yaml" --device cuda --no-cuda-graph
go compare "$out/mlp.yaml" --a device=cpu --b device=cuda --atol 1e-4 \
    --rtol 1e-3 --all-layers
go compare "$out/mlp.yaml" --a device=cpu --b device=cuda,fp16 --atol 1e-2 \
    --rtol 1e-2
go compare "$src/tests/manifests/transformer/encoder.yaml" --a device=cpu \
    --b device=cuda --atol 1e-4 --rtol 1e-3
exit $status
