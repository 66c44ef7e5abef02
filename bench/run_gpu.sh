#!/bin/sh
# bench/run_gpu.sh - the CNN benchmarks of issue 10 on a GPU machine, in
# one run: Convolution float16 on ResNet-50's convolutions through mica
# against cuDNN called directly (bench_conv) and PyTorch's channels-last
# conv2d (conv_torch.py), ResNet-50's float16 time in mica by layer type
# (resnet50_parts.py), then the whole ResNet-50 v1.5 in float16 through
# mica next to PyTorch eager and in a CUDA graph (resnet50_torch.py).
# Each part prints its table last.
#
#   sh bench/run_gpu.sh BUILD_DIR OUT_DIR [PYTHON]
#
# BUILD_DIR: a mica tree built with CUDA and cuDNN (bench/bench_conv,
# bench/bench_model, tools/mica, modules/.libs); PYTHON (default python3)
# has torch and numpy.
set -u
build=$1 out=$2 py=${3:-python3}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 1
export MICA_MODULE_DIR="$build/modules/.libs" MICA_DEVICE_DIR="$build/core/.libs"
status=0
echo "== bench_conv (mica vs cuDNN direct)"
"$build/bench/bench_conv" "$src/bench/resnet50_convs.txt" \
    --csv "$out/conv.csv" || status=1
echo "== conv_torch.py (PyTorch conv2d channels_last vs mica)"
"$py" "$src/bench/conv_torch.py" --shapes "$src/bench/resnet50_convs.txt" \
    --mica "$out/conv.csv" || status=1
echo "== resnet50_parts.py (ResNet-50 float16 in mica, by layer type)"
"$py" "$src/bench/resnet50_parts.py" --build "$build" \
    --dir "$out/resnet50" --conv-csv "$out/conv.csv" || status=1
echo "== resnet50_torch.py (ResNet-50 float16: mica vs PyTorch)"
"$py" "$src/bench/resnet50_torch.py" --build "$build" \
    --dir "$out/resnet50" || status=1
exit $status
