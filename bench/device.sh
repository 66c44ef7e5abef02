#!/bin/sh
# bench/device.sh - build a release tarball on a GPU machine, run the whole
# test suite there (every module test then compares CUDA with the CPU
# reference), then the benchmarks.  Used with the device machine, which has
# the CUDA toolkit but neither libtool nor libyaml headers: the tarball
# needs no libtool, and libyaml comes unpacked from its .deb packages.
#
#   sh bench/device.sh TARBALL YAML_DIR OUT_DIR
set -u
tarball=$1 yaml=$2 out=$3
work=${TMPDIR:-/tmp}/mica-device
rm -rf "$work" && mkdir -p "$work" "$out" || exit 1
tar -C "$work" -xzf "$tarball" || exit 1
cd "$work"/mica-* || exit 1
export LD_LIBRARY_PATH="$yaml/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    | tee "$out/gpu.txt"
./configure --with-yaml="$yaml/usr" --with-cuda-arch=sm_90 --enable-werror \
    >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
make -j16 >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
make -j16 check >"$out/check.log" 2>&1
status=$?
cp test-suite.log "$out/" 2>/dev/null
cat tests/*.log | grep -E '^(not ok|ok .*cuda|# )' >"$out/cuda-results.txt" 2>/dev/null
grep -E '^(# )?(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' test-suite.log | tail -10
grep -c 'ok .*: cuda$' "$out/cuda-results.txt" | sed 's/^/cuda comparisons passed: /'
grep '^not ok' tests/*.log | head -40
make bench 2>&1 | tee "$out/bench.txt"
exit $status
