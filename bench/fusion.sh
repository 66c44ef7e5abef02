#!/bin/sh
# bench/fusion.sh - what fusion (modules/convolution/fused_rules.c) buys on
# the GPU: two chains of 8 convolution blocks that bench/gen_convchain.py
# writes (batch 32, 64 channels, 56x56), "bias" (Convolution, ElementWise
# sum with a bias, relu: rule conv_add_relu) and "residual" (Convolution,
# batch norm, sum with the block's input, relu: rule conv_scale_add_relu),
# each timed by `mica bench --no-data-transfers` with fusion and with
# --no-fusion, in float32 and float16; then `mica compare` of the two
# configurations on CUDA.  By hand, from a CUDA build (sm_90):
#
#   sh bench/fusion.sh MICA_BINARY TOP_SRCDIR OUT_DIR
#
# (`make bench-fusion` does the same into bench-fusion-out/).  Each
# command is printed before its output; the last lines are a table of
# the median GPU compute time per configuration.
set -u
mica=$1 src=$2 out=$3
mkdir -p "$out" || exit 1
status=0
table=$out/table.txt
: >"$table"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
date -u '+%Y-%m-%d %H:%M UTC'

# time KIND PRECISION FUSION: one mica bench, its median into the table
time_one() {
    kind=$1 prec=$2 fus=$3
    set -- "$out/$kind.yaml" --device cuda --no-data-transfers \
        --duration-s 2
    [ "$prec" = fp16 ] && set -- "$@" --fp16
    [ "$fus" = off ] && set -- "$@" --no-fusion
    echo "\$ mica bench $*"
    "$mica" bench "$@" >"$out/bench.log" 2>&1 || status=1
    cat "$out/bench.log"
    med=$(sed -n 's/^GPU Compute Time:.*median = \([0-9.]*\) ms.*/\1/p' \
        "$out/bench.log")
    printf '%-9s %-5s %-7s %s\n' "$kind" "$prec" "$fus" "${med:-?}" \
        >>"$table"
    echo
}

for kind in bias residual; do
    python3 "$src/bench/gen_convchain.py" "$out/$kind.yaml" --kind "$kind" \
        || exit 1
    "$mica" inspect "$out/$kind.yaml" --device cuda | sed -n '/^layers/,/^$/p'
    for prec in fp32 fp16; do
        time_one "$kind" "$prec" on
        time_one "$kind" "$prec" off
    done
    echo "\$ mica compare $out/$kind.yaml --a device=cuda,no-fusion --b device=cuda"
    "$mica" compare "$out/$kind.yaml" --a device=cuda,no-fusion \
        --b device=cuda --atol 1e-4 --rtol 1e-3 || status=1
    echo
done
echo "median GPU compute time (ms), 8 blocks, batch 32, 64 channels, 56x56:"
printf '%-9s %-5s %-7s %s\n' chain prec fusion ms
cat "$table"
exit $status
