#!/bin/sh
# bench/passes_gpu.sh - the graph passes and bound constants on a GPU
# machine (docs/passes.md), in one run; builds nothing:
#
#   1. tests/test_constants (its CUDA part: a Constant uploaded once per
#      engine and read in place by two contexts);
#   2. `mica compare MODEL --a passes=none,device=cuda --b
#      passes=all,device=cuda` on every network tests/test_passes.sh
#      compares on the CPU (float32, the same tolerances), and on BERT
#      (bert_dynamo.onnx, if given) at 1x128 and 2x16;
#   3. `mica bench` of BERT in float16 on CUDA, without passes and with
#      them, and its layer counts (mica inspect).
#
#   sh bench/passes_gpu.sh BUILD_DIR [BERT.onnx]
#
# BUILD_DIR: a mica tree built with CUDA (`make check` built there, for
# tests/test_constants and tests/abi2).  Each part prints what it ran;
# the status is 1 if any comparison or test failed.
set -u
build=$1 bert=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
mica=$build/tools/mica
export MICA_MODULE_DIR="$build/modules/.libs" MICA_DEVICE_DIR="$build/core/.libs"
export MICA_SCANNER="$build/registry/mica-scan-module"
status=0

echo "== tests/test_constants (CUDA part)"
MICA_TOP_BUILDDIR=$build MICA_TOP_SRCDIR=$src "$build/tests/test_constants" ||
    status=1

echo "== with and without passes on CUDA"
cmp_cuda() {
    "$mica" compare "$@" --a passes=none,device=cuda \
        --b passes=all,device=cuda --atol 1e-5 --rtol 1e-4 >/tmp/passes_gpu.$$ 2>&1
    st=$?
    printf '%s %s\n' "$([ $st -eq 0 ] && echo PASS || echo FAIL)" "$1"
    [ $st -eq 0 ] || { tail -n 5 /tmp/passes_gpu.$$; status=1; }
    rm -f /tmp/passes_gpu.$$
}
for f in $(cd "$src" && find tests/manifests examples -name '*.yaml' |
           LC_ALL=C sort); do
    case $f in
    */bad/*|*_bad.yaml|examples/bar/*|examples/swish/*|tests/manifests/abi/*)
        continue ;;
    esac
    cmp_cuda "$src/$f"
done
cmp_cuda "$src/tests/onnx/models/splat.onnx"
if [ -n "$bert" ]; then
    cmp_cuda "$bert" --shapes input_ids:1x128,attention_mask:1x128
    cmp_cuda "$bert" --shapes input_ids:2x16,attention_mask:2x16
    echo "== BERT float16 on CUDA: layers, then time (median GPU compute)"
    for p in "--no-passes all" ""; do
        # shellcheck disable=SC2086
        "$mica" build "$bert" --device cuda --fp16 $p -o /tmp/passes_gpu.engine \
            --shapes input_ids:1x128,attention_mask:1x128 &&
            "$mica" inspect /tmp/passes_gpu.engine |
            grep -e '^passes' -e '^  [a-z-]*  ' -e '^layers'
        rm -f /tmp/passes_gpu.engine
        # shellcheck disable=SC2086
        "$mica" bench "$bert" --device cuda --fp16 --no-data-transfers $p \
            --shapes input_ids:1x128,attention_mask:1x128 |
            grep -e '^GPU Compute Time'
    done
fi
exit $status
