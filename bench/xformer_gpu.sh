#!/bin/sh
# bench/xformer_gpu.sh BUILD_DIR OUT_DIR - the transformer layers on the
# GPU machine, in one run (builds nothing: BUILD_DIR is a CUDA build of
# mica with its tests built, `make check` or `make -j tests/test_mod_*`):
#
#   1. the module tests of Normalization, Attention and Activation
#      (GELU): every case on the CPU against the expected
#      values, then CUDA against the CPU (tests/harness.h); the Attention
#      test covers the flash kernel (float16/bfloat16, head sizes 64 and
#      128, sequence lengths not multiples of the 64 tile, causal, masks);
#   2. the Normalization and Attention tests under compute-sanitizer
#      memcheck (and racecheck for Attention's shared-memory tiles);
#   3. bench/xformer_torch.py: BERT-base, a GPT-2-small decoder and
#      ViT-B/16 through `mica bench --fp16 --no-data-transfers` next to
#      PyTorch eager, CUDA graph and torch.compile (BERT batch 1 and 32 at
#      sequence 128, GPT-2 batch 1 and 16 at 256, ViT batch 1 and 64);
#   4. the attention rules on CUDA: the tiny BERTs of test_cli_xformer
#      (dynamo and eager attention) built for CUDA with the passes, their
#      outputs against the CPU's network as written (mica compare), and
#      their fused layers;
#   5. BERT-base's build time on CUDA (--fp16, every pass, NVRTC), from
#      `mica build` at info level, and its layers after the passes;
#   6. issue 20's 3-layer ElementWise/Activation chain over 64M float32
#      elements against a device-to-device copy (bench_pointwise, goal
#      90% of the copy or more).
#
# Logs go to OUT_DIR; a summary table of every step comes last.  Exit
# status 0 when every step passed.
set -u
build=${1:?usage: xformer_gpu.sh BUILD_DIR OUT_DIR}
out=${2:?usage: xformer_gpu.sh BUILD_DIR OUT_DIR}
build=$(cd "$build" && pwd) || exit 1
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
src=$(sed -n 's/^abs_top_srcdir = //p' "$build/Makefile" 2>/dev/null)
[ -n "$src" ] || src=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
export MICA_MODULE_DIR="$build/modules/.libs"
export MICA_DEVICE_DIR="$build/core/.libs"
export MICA_TOP_SRCDIR="$src"
summary="$out/summary.txt"
: >"$summary"
status=0

note() { printf '%-44s %s\n' "$1" "$2" >>"$summary"; }

echo "== xformer_gpu: build $build, source $src, logs in $out"
nvidia-smi -L 2>&1 | head -2
date -u

# 1. the tests (TAP): ok / not ok / skip counts of each
for t in test_mod_normalization test_mod_attention test_mod_activation; do
    p="$build/tests/$t"
    if [ ! -x "$p" ]; then
        note "$t" "NOT BUILT (make -C $build tests/$t)"
        status=1
        continue
    fi
    (cd "$build" && timeout 1200 "$p") >"$out/$t.log" 2>&1
    rc=$?
    okc=$(grep -c '^ok' "$out/$t.log")
    bad=$(grep -c '^not ok' "$out/$t.log")
    skip=$(grep -c '^ok.*# SKIP' "$out/$t.log")
    cuda=$(grep '^ok' "$out/$t.log" | grep -c ': cuda$')
    note "$t" "rc $rc: $okc ok ($skip skipped, $cuda CUDA cases passed), $bad not ok"
    if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
        status=1
        grep -B2 '^not ok' "$out/$t.log" | head -30
    fi
done

# 2. compute-sanitizer on the new kernels
if [ -x "$src/bench/compute_sanitizer.sh" ] || [ -f "$src/bench/compute_sanitizer.sh" ]; then
    TESTS="test_mod_normalization test_mod_attention" \
        sh "$src/bench/compute_sanitizer.sh" "$build" memcheck \
        >"$out/memcheck.log" 2>&1
    rc=$?
    note "compute-sanitizer memcheck (norm, attention)" \
         "rc $rc (table in memcheck.log)"
    [ "$rc" -eq 0 ] || status=1
    TESTS="test_mod_attention" \
        sh "$src/bench/compute_sanitizer.sh" "$build" racecheck \
        >"$out/racecheck.log" 2>&1
    rc=$?
    note "compute-sanitizer racecheck (attention)" \
         "rc $rc (table in racecheck.log)"
    [ "$rc" -eq 0 ] || status=1
fi

# 3. the benchmarks
"$py" "$src/bench/xformer_torch.py" --build "$build" --dir "$out/models" \
    >"$out/bench.log" 2>&1
rc=$?
note "bench/xformer_torch.py" "rc $rc (bench.log)"
[ "$rc" -eq 0 ] || status=1

# 4. the attention rules on CUDA against the CPU as written
models="$src/tests/onnx/models"
for m in tiny_bert_dyn tiny_bert_eager14; do
    "$build/tools/mica" inspect "$models/$m.onnx" --device cuda \
        --shapes input_ids:2x16,attention_mask:2x16 >"$out/$m.inspect.txt" 2>&1
    att=$(grep -c '(Attention) replaces' "$out/$m.inspect.txt")
    "$build/tools/mica" compare "$models/$m.onnx" \
        --shapes input_ids:2x16,attention_mask:2x16 \
        --input input_ids="$models/tiny_bert14.input_ids.npy" \
        --input attention_mask="$models/tiny_bert14.attention_mask.npy" \
        --a device=cpu,passes=none --b device=cuda --atol 1e-4 --rtol 1e-3 \
        >"$out/$m.compare.txt" 2>&1
    rc=$?
    note "$m on CUDA vs CPU as written" "rc $rc, $att Attention layers"
    [ "$rc" -eq 0 ] || status=1
done

# 5. BERT-base's build time and layers on CUDA
bert="$out/models/bert.onnx"
if [ -f "$bert" ]; then
    t0=$(date +%s.%N)
    MICA_LOG_LEVEL=info "$build/tools/mica" build "$bert" --device cuda \
        --fp16 --shapes input_ids:1x128,attention_mask:1x128 \
        -o "$out/bert.engine" >"$out/bert.build.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    "$build/tools/mica" inspect "$out/bert.engine" >"$out/bert.inspect.txt" 2>&1
    layers=$(sed -n 's/^layers (\([0-9]*\).*/\1/p' "$out/bert.inspect.txt")
    note "BERT-base build (cuda, fp16, passes)" \
         "rc $rc, $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s, ${layers:-?} layers"
    [ "$rc" -eq 0 ] || status=1
fi

# 6. the 64M-element chain against a device-to-device copy
if [ -x "$build/bench/bench_pointwise" ]; then
    "$build/bench/bench_pointwise" --device cuda --elements 67108864 \
        >"$out/chain64m.txt" 2>&1
    rc=$?
    note "bench_pointwise --device cuda (64M)" "rc $rc (chain64m.txt)"
    [ "$rc" -eq 0 ] || status=1
else
    note "bench_pointwise" "NOT BUILT (make -C $build bench/bench_pointwise)"
fi

echo
echo "== memcheck"
tail -6 "$out/memcheck.log" 2>/dev/null
echo "== racecheck"
tail -4 "$out/racecheck.log" 2>/dev/null
echo "== benchmarks (bench.log's table)"
sed -n '/^== transformers/,$p' "$out/bench.log"
echo "== 64M chain (bench_pointwise)"
cat "$out/chain64m.txt" 2>/dev/null
echo
echo "== summary (status $status)"
cat "$summary"
exit $status
