#!/bin/sh
# tests/test_cli_cnn.sh - a small CNN end to end through the `mica`
# command: tests/manifests/cnn/small_cnn.yaml (convolutions with their
# batch norms folded, ReLU, max pooling, a depthwise convolution, global
# average pooling, FullyConnected; runtime batch 1..4, weights in a raw
# file), generated with its expected outputs by tests/gen/small_cnn.py.
#
# On the CPU: the manifest at batch 2 and 3 against NumPy's outputs, with
# the default implementations (oneDNN where built) and with the
# references; an engine built, saved, loaded and run; with oneDNN a
# float32 channels-last chain with its format changed at its edges only,
# with the references none; a channel shuffle (tests/manifests/cnn/
# shuffle_cnn.yaml) kept in channels last by Shuffle, against the
# references.  On CUDA, where a
# GPU is usable: the same with the default implementations (cuDNN,
# cuBLAS), with the hand-written convolution, in float16 (--fp16), and an
# engine built with --autotune; `mica inspect` shows cuDNN's algorithm as
# the convolutions' tactic, and in float16 a channels-last chain with its
# format changed at its edges only.
#
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_TOP_BUILDDIR, MICA_MODULE_DIR.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
npy=$top_build/tests/npytool
dir=$top_src/tests/manifests/cnn
net=$dir/small_cnn.yaml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-cnn-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

types=$("$mica" modules 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
for t in Convolution Activation Pooling FullyConnected; do
    if ! echo "$types" | grep -qx "$t"; then
        echo "1..0 # SKIP the $t module is not built"
        exit 0
    fi
done

# check NAME TOL MODEL ARGS...: run MODEL on x2 and x3 (ARGS: device,
# preferences) and compare logits with NumPy's within TOL; two results.
check() {
    name=$1
    tol=$2
    model=$3
    shift 3
    for b in 2 3; do
        rm -rf "$tmp/res"
        run "$mica" run "$model" --input "x=$dir/x$b.npy" --output-dir \
            "$tmp/res" "$@"
        if [ "$rc" -ne 0 ]; then
            ok 1 "$name: batch $b runs"
            sed 's/^/#     | /' "$tmp/err"
            continue
        fi
        "$npy" cmp "$tmp/res/logits.npy" "$dir/y$b.npy" "$tol" >"$tmp/cmp" 2>&1
        st=$?
        sed 's/^/#     /' "$tmp/cmp"
        ok "$st" "$name: batch $b gives NumPy's logits"
    done
}
# built NAME ENGINE ARGS...: mica build into ENGINE (one result)
built() {
    name=$1
    engine=$2
    shift 2
    run "$mica" build "$net" -o "$engine" "$@"
    [ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
    ok "$rc" "$name: engine built and saved"
}

refs="--prefer Convolution=reference --prefer Pooling=reference \
--prefer FullyConnected=reference"

check "cpu" 1e-4 "$net" --device cpu
# shellcheck disable=SC2086
check "cpu, references" 1e-4 "$net" --device cpu $refs
built "cpu" "$tmp/cpu.mica" --device cpu
check "cpu engine loaded" 1e-4 "$tmp/cpu.mica"
# With oneDNN, float32 channels last on the CPU too (its convolutions
# and pooling run NHWC): a reorder of x, one before FullyConnected, none
# in between; with the references every tensor linear.
run "$mica" inspect "$tmp/cpu.mica"
if grep -q "FusedConvolution .*onednn" "$tmp/out"; then
    has "$tmp/out" "^memory formats: .* 2 layers change a tensor's format" \
        "cpu, oneDNN: formats change at the edges only (2 layers)"
    has "$tmp/out" "^  reorder:x@hwc .*(float32, linear, network input) .*(float32, hwc), read by 'relu1'$" \
        "  x reordered into channels last"
    has "$tmp/out" "^  reorder:.*(float32, hwc, made by 'gap') .*(float32, linear), read by 'fc'$" \
        "  one reorder, between the pooling and FullyConnected"
else
    skip "cpu, oneDNN: formats change at the edges only (2 layers)" \
        "oneDNN not built"
    skip "  x reordered into channels last" "oneDNN not built"
    skip "  one reorder, between the pooling and FullyConnected" \
        "oneDNN not built"
fi
# shellcheck disable=SC2086
run "$mica" inspect "$net" --device cpu $refs --prefer FusedConvolution=reference
if [ "$rc" -eq 0 ] && ! grep -q "^memory formats" "$tmp/out"; then
    ok 0 "cpu, references: every tensor linear"
else
    ok 1 "cpu, references: every tensor linear"
    grep "^memory formats" "$tmp/out" | sed 's/^/#     /'
fi

# A channel shuffle (two Shuffle layers) between channels-last layers:
# Shuffle's vec implementation reads and writes channels last itself, so
# that formats change at the network's edges only, and the result is the
# references' (every layer linear).
shuf=$dir/shuffle_cnn.yaml
run "$mica" inspect "$shuf" --device cpu
if grep -q "Convolution .*onednn" "$tmp/out"; then
    has "$tmp/out" "^memory formats: .* 2 layers change a tensor's format" \
        "channel shuffle, oneDNN: formats change at the edges only (2 layers)"
    has "$tmp/out" "^  s2 .*float32, hwc" \
        "  the shuffled tensor is made in channels last"
else
    skip "channel shuffle, oneDNN: formats change at the edges only (2 layers)" \
        "oneDNN not built"
    skip "  the shuffled tensor is made in channels last" "oneDNN not built"
fi
run "$mica" compare "$shuf" --a \
    device=cpu,prefer=Shuffle=reference,prefer=Convolution=reference,prefer=Pooling=reference,prefer=FullyConnected=reference \
    --b device=cpu --atol 1e-4 --rtol 1e-4
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/out" "$tmp/err"
ok "$rc" "channel shuffle: the default implementations give the references' logits"

rm -rf "$tmp/probe"
if "$mica" run "$net" --device cuda --input "x=$dir/x2.npy" \
    --output-dir "$tmp/probe" >/dev/null 2>&1; then
    check "cuda" 1e-3 "$net" --device cuda
    check "cuda, hand-written convolution" 1e-3 "$net" --device cuda \
        --prefer Convolution=cuda --prefer Pooling=cuda
    built "cuda" "$tmp/cuda.mica" --device cuda
    check "cuda engine loaded" 1e-3 "$tmp/cuda.mica"
    built "cuda float16" "$tmp/fp16.mica" --device cuda --fp16
    check "cuda float16 engine" 3e-2 "$tmp/fp16.mica"
    # Channels last end to end: the cast of x makes it NHWC, every
    # convolution (fused with its relu: FusedConvolution 'relu1', ...),
    # activation and pooling keeps it, one reorder before FullyConnected
    # (linear only); none in between.
    run "$mica" inspect "$tmp/fp16.mica"
    has "$tmp/out" "^memory formats: .* 2 layers change a tensor's format" \
        "cuda float16: formats change at the edges only (2 layers)"
    has "$tmp/out" "^  cast:x.*(float32, linear, network input) .*(float16, hwc), read by 'relu1'$" \
        "  the cast of x makes it channels last"
    has "$tmp/out" "^  reorder:.*(float16, hwc, made by 'gap') .*(float16, linear), read by 'fc'$" \
        "  one reorder, between the pooling and FullyConnected"
    # cuDNN's algorithm is the layer's tactic, kept by the engine file.
    run "$mica" inspect "$tmp/cuda.mica"
    has "$tmp/out" "Convolution .*cudnn tactic [1-9]" \
        "cuda engine: inspect shows cuDNN's tactic"
    built "cuda autotuned" "$tmp/tuned.mica" --device cuda --autotune
    check "cuda autotuned engine" 1e-3 "$tmp/tuned.mica"
    run "$mica" inspect "$tmp/tuned.mica"
    has "$tmp/out" "Convolution .*fastest measured: .*cudnn tactic [1-9][0-9]* [0-9.]* us" \
        "cuda autotuned engine: inspect shows cuDNN's tactics timed"
else
    for s in "cuda" "cuda, hand-written convolution" "cuda engine loaded" \
        "cuda float16 engine" "cuda autotuned engine"; do
        skip "$s: batch 2" "no usable GPU"
        skip "$s: batch 3" "no usable GPU"
    done
    for s in cuda "cuda float16" "cuda autotuned"; do
        skip "$s: engine built and saved" "no usable GPU"
    done
    skip "cuda engine: inspect shows cuDNN's tactic" "no usable GPU"
    skip "cuda float16: formats change at the edges only (2 layers)" \
        "no usable GPU"
    skip "  the cast of x makes it channels last" "no usable GPU"
    skip "  one reorder, between the pooling and FullyConnected" \
        "no usable GPU"
    skip "cuda autotuned engine: inspect shows cuDNN's tactics timed" \
        "no usable GPU"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
