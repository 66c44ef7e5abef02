#!/bin/sh
# bench/gpu21.sh - issue 21 on a GPU machine in one run: the tests it
# touched on the GPU (cuDNN's graph API convolutions, every tactic,
# autotune and the timing cache, loops and conditionals as conditional
# graph nodes), compute-sanitizer on the conditional nodes and the
# convolutions, then every benchmark of the issue with PyTorch in the
# same run, and a table last:
#
#   - bench_overhead: host time per layer without graphs, the launch floor
#   - bench_loop: 1000 trips of a 3-layer loop, layer by layer and in a
#     CUDA graph (the loop as a while node)
#   - bench_rnn.py: the loop-built LSTM against RNNv2 and PyTorch, with
#     and without graphs
#   - gpu21_models.py: ResNet-50 (batch 1, 256), MobileNetV3-Large and
#     EfficientNet-B0 (batch 1, 64) in float16 against PyTorch eager, CUDA
#     graph and torch.compile (ResNet-50), build times with tactic timing
#     cold and with the timing cache
#   - conv_ncu.py: ResNet-50 batch 1 kernel by kernel (ncu), mica and
#     PyTorch
#   - fusion.sh: the conv fusion rules re-measured (fused against
#     --no-fusion, float32 and float16)
#
#   sh bench/gpu21.sh BUILD_DIR OUT_DIR [PYTHON] [PART...]
#
# BUILD_DIR: a mica tree built with CUDA and cuDNN (make); the tests are
# built by `make check`.  All parts take more than one 10-minute device
# call: run them in two or three (tests sanitizer overhead loop rnn;
# models; ncu fusion), each with its own OUT_DIR.  PYTHON (default python3) has torch,
# torchvision, onnx and numpy.  PARTs (default all): tests sanitizer
# overhead loop rnn models ncu fusion.  Each part's log is OUT_DIR/PART.txt; the
# summary is printed last.
set -u
build=$1 out=$2
py=${3:-python3}
shift 2
[ $# -gt 0 ] && shift
parts=${*:-tests sanitizer overhead loop rnn models ncu fusion}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 1
export MICA_MODULE_DIR="$build/modules/.libs" MICA_DEVICE_DIR="$build/core/.libs"
status=0
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
    tee -a "$summary"
date -u '+%Y-%m-%d %H:%M UTC' | tee -a "$summary"

TESTS="tests/test_mod_convolution tests/test_mod_fused_conv tests/test_control
tests/test_cuda_graph tests/test_mod_loop tests/test_abi_tactics
tests/test_rnn_loop tests/test_mod_conditional"
if has tests; then
    echo "== tests"
    make -C "$build" -j8 check TESTS="$(echo $TESTS)" >"$out/tests.txt" 2>&1 ||
        status=1
    for t in $TESTS; do
        cat "$build/$t.log" >>"$out/tests.txt" 2>/dev/null
    done
    grep -E '^(not ok|# (PASS|FAIL|SKIP))' "$out/tests.txt" | sort | uniq -c |
        sed 's/^/tests: /' | tee -a "$summary"
    grep -h '^not ok' $(for t in $TESTS; do echo "$build/$t.log"; done) \
        2>/dev/null | head -20 | tee -a "$summary"
fi

if has sanitizer; then
    echo "== compute-sanitizer (memcheck)"
    TESTS="test_control test_mod_loop test_cuda_graph test_mod_fused_conv" \
        LIMIT=240 sh "$src/bench/compute_sanitizer.sh" "$build" memcheck \
        >"$out/sanitizer.txt" 2>&1 || status=1
    sed 's/^/sanitizer: /' "$out/sanitizer.txt" | tee -a "$summary"
fi

if has overhead; then
    echo "== bench_overhead"
    "$build/bench/bench_overhead" | tee "$out/overhead.txt" || status=1
    sed -n 's/^/overhead: /p' "$out/overhead.txt" | tail -4 >>"$summary"
fi

if has loop; then
    echo "== bench_loop"
    "$build/bench/bench_loop" | tee "$out/loop.txt" || status=1
    sed -n 's/^/loop: /p' "$out/loop.txt" | tail -4 >>"$summary"
fi

if has rnn; then
    echo "== bench_rnn.py"
    "$py" "$src/bench/bench_rnn.py" --build "$build" | tee "$out/rnn.txt" ||
        status=1
    tail -8 "$out/rnn.txt" | sed 's/^/rnn: /' >>"$summary"
fi

if has models; then
    echo "== gpu21_models.py"
    PYTHONUNBUFFERED=1 "$py" "$src/bench/gpu21_models.py" --build "$build" \
        --dir "$out/models" --compile resnet50 --build-times \
        --profile resnet50:1,mobilenet_v3_large:1,mobilenet_v3_large:64,efficientnet_b0:64 \
        | tee "$out/models.txt" || status=1
    sed -n '/float16: GPU ms per batch/,$p' "$out/models.txt" |
        sed 's/^/models: /' >>"$summary"
fi

if has ncu; then
    echo "== conv_ncu.py"
    PYTHONUNBUFFERED=1 "$py" "$src/bench/conv_ncu.py" --build "$build" \
        --dir "$out/models" | tee "$out/ncu.txt" || status=1
    grep '^GPU time of one forward' "$out/ncu.txt" | sed 's/^/ncu: /' \
        >>"$summary"
fi

if has fusion; then
    echo "== fusion.sh"
    sh "$src/bench/fusion.sh" "$build/tools/mica" "$src" "$out/fusion" \
        >"$out/fusion.txt" 2>&1 || status=1
    sed -n '/^median GPU compute time/,$p' "$out/fusion.txt" |
        sed 's/^/fusion: /' | tee -a "$summary"
fi

echo
echo "==== summary (issue 21) ===="
cat "$summary"
exit $status
