#!/bin/sh
# bench/pointwise_gpu.sh BUILD_DIR OUT_DIR - the Pointwise layer and the
# pointwise pass on a GPU machine, in one run (issue 20): builds nothing.
#
#   1. the tests that compare CUDA with the CPU there (skipped without a
#      GPU elsewhere): test_mod_pointwise (every case's CUDA run against
#      the CPU, channels last), test_pointwise_random (random programs, the
#      generated kernels against the layers one by one on the CPU; 2000
#      more cases with another seed), test_pass_pointwise (networks with
#      and without the pass, CUDA graphs captured and replayed),
#      test_pointwise_nvrtc (compilation and the code in the state);
#   2. compute-sanitizer memcheck and racecheck on test_mod_pointwise
#      (bench/compute_sanitizer.sh), where installed;
#   3. an engine built with Pointwise layers, then loaded and run by a
#      process that compiles nothing (its log at info level has no
#      "kernels compiled" line), its outputs against the CPU's;
#   4. the benchmark: issue 20's 3-layer ElementWise/Activation chain over
#      64M float32 elements (and the other workloads of bench_pointwise)
#      on CUDA, against a device-to-device copy of the same bytes (goal:
#      the fused chain at 90% of the copy or more), then on the CPU.
#
# Each part's output goes to OUT_DIR; a summary is printed last.  Exit
# status 0 when every test passed (timings assert nothing).
set -u
build=${1:?usage: pointwise_gpu.sh BUILD_DIR OUT_DIR}
out=${2:?usage: pointwise_gpu.sh BUILD_DIR OUT_DIR}
build=$(cd "$build" && pwd) || exit 1
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
export MICA_MODULE_DIR="$build/modules/.libs"
export MICA_DEVICE_DIR="$build/core/.libs"
export MICA_TOP_SRCDIR="$src" MICA_TOP_BUILDDIR="$build"
mica=$build/tools/mica
status=0
summary=

note() {
    summary="$summary
$1"
    echo "$1"
}

# ---- 1. tests ---------------------------------------------------------
run_test() { # NAME [ENV...]
    name=$1
    shift
    echo "== $name $*"
    env "$@" "$build/tests/$name" >"$out/$name$suffix.tap" 2>&1
    rc=$?
    nok=$(grep -c '^not ok' "$out/$name$suffix.tap")
    nskip=$(grep -c '# SKIP' "$out/$name$suffix.tap")
    nall=$(grep -c '^ok\|^not ok' "$out/$name$suffix.tap")
    grep '^not ok' "$out/$name$suffix.tap" | head -20
    if [ "$rc" -ne 0 ] || [ "$nok" -ne 0 ]; then
        status=1
        note "FAIL $name$suffix: $nok of $nall failed (exit $rc): $out/$name$suffix.tap"
    else
        note "ok   $name$suffix: $nall results, $nskip skipped"
    fi
}
suffix=
run_test test_mod_pointwise
run_test test_pointwise_nvrtc
run_test test_pointwise_random
run_test test_pass_pointwise
suffix=.seed7
run_test test_pointwise_random MICA_PW_SEED=7 MICA_PW_CASES=2000
suffix=

# ---- 2. compute-sanitizer --------------------------------------------------
echo "== compute-sanitizer (memcheck, racecheck) on test_mod_pointwise"
TESTS=test_mod_pointwise sh "$src/bench/compute_sanitizer.sh" "$build" \
    "memcheck racecheck" >"$out/sanitizer.txt" 2>&1
rc=$?
cat "$out/sanitizer.txt"
[ "$rc" -eq 0 ] || status=1
note "$( [ "$rc" -eq 0 ] && echo "ok  " || echo FAIL) compute-sanitizer: $out/sanitizer.txt"

# ---- 3. an engine that loads without compiling -------------------------
echo "== an engine with Pointwise layers: built, then loaded without NVRTC work"
cat >"$out/chain.yaml" <<'EOF'
mica: 1
name: pointwise-chain
inputs:
  a: {dtype: float16, shape: [8, 64, 32, 32]}
  b: {dtype: float16, shape: [1, 64, 1, 1]}
  c: {dtype: float32, shape: [8, 64, 32, 32]}
layers:
  - {name: add, type: ElementWise, inputs: [a, b], outputs: [t0], params: {op: sum}}
  - {name: act, type: Activation, inputs: [t0], outputs: [t1], params: {type: leaky_relu, alpha: 0.1}}
  - {name: cast, type: Identity, inputs: [t1], outputs: [t2], params: {dtype: float32}}
  - {name: mul, type: ElementWise, inputs: [t2, c], outputs: [t3], params: {op: prod}}
  - {name: gt, type: ElementWise, inputs: [t3, c], outputs: [g], params: {op: greater}}
  - {name: sel, type: Select, inputs: [g, t3, c], outputs: [y]}
outputs: [y, t2]
EOF
MICA_LOG_LEVEL=info "$mica" build "$out/chain.yaml" --device cuda \
    -o "$out/chain.engine" >"$out/chain.build.txt" 2>&1
rc=$?
MICA_LOG_LEVEL=info "$mica" inspect "$out/chain.engine" \
    >"$out/chain.inspect.txt" 2>&1
MICA_LOG_LEVEL=info "$mica" run "$out/chain.engine" \
    --output-dir "$out/chain-gpu" >"$out/chain.run.txt" 2>&1
rc2=$?
"$mica" run "$out/chain.yaml" --device cpu --no-fusion \
    --output-dir "$out/chain-cpu" >/dev/null 2>&1
rc3=$?
compiled=$(grep -c 'kernels compiled' "$out/chain.build.txt")
recompiled=$(grep -c 'kernels compiled' "$out/chain.run.txt")
echo "build: exit $rc, $compiled compilation(s); load and run: exit $rc2, $recompiled compilation(s)"
grep -E 'Pointwise|pointwise' "$out/chain.inspect.txt" | head -5
same=1
if command -v python3 >/dev/null 2>&1; then
    python3 - "$out" <<'EOF' || same=0
import sys, numpy as np
d = sys.argv[1]
for n in ("y", "t2"):
    a = np.load(f"{d}/chain-cpu/{n}.npy").astype(np.float64)
    b = np.load(f"{d}/chain-gpu/{n}.npy").astype(np.float64)
    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-3, atol=1e-3, equal_nan=True):
        print(f"{n}: CUDA differs from the CPU: max |diff| {np.nanmax(np.abs(a - b))}")
        sys.exit(1)
print("outputs: CUDA engine = CPU layers (rtol 1e-3)")
EOF
fi
if [ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ] && [ "$rc3" -eq 0 ] &&
   [ "$compiled" -ge 1 ] && [ "$recompiled" -eq 0 ] && [ "$same" -eq 1 ]; then
    note "ok   engine: compiled at build ($compiled), loaded and ran without compiling, same outputs as the CPU"
else
    status=1
    note "FAIL engine: build $rc, run $rc2, cpu $rc3, compiled $compiled, at load $recompiled, same $same (see $out/chain.*.txt)"
fi

# ---- 4. benchmarks ------------------------------------------------------
echo "== bench_pointwise --device cuda (64M elements)"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader \
    >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
"$build/bench/bench_pointwise" --device cuda --elements 67108864 \
    | tee "$out/bench_cuda.txt"
chain=$(awk '$1 == "chain3" { print $9 }' "$out/bench_cuda.txt")
note "bench  cuda chain3 (64M float32, fused, against a D2D copy of its bytes): ${chain:-?} (goal >= 90%): $out/bench_cuda.txt"
echo "== bench_pointwise on the CPU, 1 thread (4M elements)"
cat /proc/loadavg
OMP_NUM_THREADS=1 "$build/bench/bench_pointwise" | tee "$out/bench_cpu.txt"
cat /proc/loadavg

echo
echo "== summary"
echo "$summary"
exit $status
