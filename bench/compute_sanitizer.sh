#!/bin/sh
# bench/compute_sanitizer.sh BUILD [TOOLS] - run every CUDA module test
# program of the build folder BUILD (tests/test_mod_*, each comparing the
# CUDA implementations with the CPU reference through tests/harness.h)
# under each of NVIDIA's compute-sanitizer tools and print a summary
# table: one row per test, one column per tool, each cell "clean", the
# number of errors the tool reported, "fail" (the test itself failed),
# or "timeout".  Exit status 0 when every cell is clean.
#
#   bench/compute_sanitizer.sh /path/to/build
#   TESTS="test_mod_softmax test_mod_topk" bench/compute_sanitizer.sh B memcheck
#
# TOOLS defaults to "memcheck racecheck initcheck synccheck"; $TESTS
# limits the programs; $LIMIT is each run's time limit in seconds
# (default 600).  Logs go to BUILD/compute-sanitizer/TEST.TOOL.log.
# Without a GPU (or without compute-sanitizer) it says so and exits 0.
set -u
build=${1:?usage: compute_sanitizer.sh BUILD [TOOLS]}
tools=${2:-memcheck racecheck initcheck synccheck}
limit=${LIMIT:-600}
build=$(cd "$build" && pwd) || exit 1
src=$(sed -n 's/^abs_top_srcdir = //p' "$build/Makefile" 2>/dev/null)
[ -n "$src" ] || src=$(cd "$(dirname "$0")/.." && pwd)

cs=$(command -v compute-sanitizer 2>/dev/null)
for d in ${CUDA_HOME:-} /usr/local/cuda; do
    [ -z "$cs" ] && [ -n "$d" ] && [ -x "$d/bin/compute-sanitizer" ] &&
        cs=$d/bin/compute-sanitizer
done
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "compute_sanitizer: no GPU here (nvidia-smi -L fails): nothing to check"
    exit 0
fi
if [ -z "$cs" ]; then
    echo "compute_sanitizer: compute-sanitizer not found (PATH, \$CUDA_HOME, /usr/local/cuda): nothing to check"
    exit 0
fi
if ! grep -q '^#define MICA_HAVE_CUDA 1' "$build/config.h" 2>/dev/null; then
    echo "compute_sanitizer: $build is not a CUDA build: nothing to check"
    exit 0
fi

# The environment of make check (Makefile.am's AM_TESTS_ENVIRONMENT).
MICA_MODULE_DIR=$build/modules/.libs
MICA_MODULE_PATH=
MICA_TOP_SRCDIR=$src
MICA_TOP_BUILDDIR=$build
MICA_DEVICE_DIR=$build/core/.libs
MICA_BIN=$build/tools/mica
MICA_SCANNER=$build/registry/mica-scan-module
MICA_REGISTRY_CACHE=$build/tests/registry.cache
export MICA_MODULE_DIR MICA_MODULE_PATH MICA_TOP_SRCDIR MICA_TOP_BUILDDIR \
    MICA_DEVICE_DIR MICA_BIN MICA_SCANNER MICA_REGISTRY_CACHE
# Tests leave out what makes CUDA API calls fail on purpose (the failed
# captures of tests/test_cuda_graph), which the tools count as errors.
MICA_TEST_NO_API_ERRORS=1
export MICA_TEST_NO_API_ERRORS

tests=${TESTS:-}
if [ -z "$tests" ]; then
    for p in "$build"/tests/test_mod_*; do
        [ -x "$p" ] && [ -f "$p" ] && tests="$tests $(basename "$p")"
    done
fi
logs=$build/compute-sanitizer
mkdir -p "$logs"

printf '%-22s' test
for t in $tools; do printf ' %-10s' "$t"; done
echo
bad=0
for p in $tests; do
    printf '%-22s' "$p"
    for t in $tools; do
        log=$logs/$p.$t.log
        timeout "$limit" "$cs" --tool "$t" --target-processes all \
            --error-exitcode 99 --print-limit 50 "$build/tests/$p" \
            >"$log" 2>&1
        st=$?
        n=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" |
            awk '{ s += $1 } END { print s + 0 }')
        if [ "$st" -eq 124 ]; then
            cell=timeout
        elif [ "$n" -gt 0 ]; then
            cell="$n errors"
        elif [ "$st" -ne 0 ]; then
            cell=fail
        elif grep -q '^not ok' "$log"; then
            cell=fail
        else
            cell=clean
        fi
        [ "$cell" = clean ] || bad=$((bad + 1))
        printf ' %-10s' "$cell"
    done
    echo
done
echo "compute_sanitizer: $bad cells not clean (logs in $logs)"
[ "$bad" -eq 0 ]
