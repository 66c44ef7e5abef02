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
#      PyTorch eager, CUDA graph and torch.compile.
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

echo
echo "== memcheck"
tail -6 "$out/memcheck.log" 2>/dev/null
echo "== racecheck"
tail -4 "$out/racecheck.log" 2>/dev/null
echo "== benchmarks (bench.log's table)"
sed -n '/^== transformers/,$p' "$out/bench.log"
echo
echo "== summary (status $status)"
cat "$summary"
exit $status
