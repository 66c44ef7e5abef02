#!/bin/sh
# tests/test_onnx_transformers.sh - BERT and GPT-2 (small configurations
# of transformers' models, random weights) exported by both of PyTorch's
# exporters with dynamic batch and sequence, in float32 and float16, built
# by mica for one profile (batch 1-32, sequence 16-512) and run at shapes
# across it against onnxruntime: bench/onnx_dynamic_transformers.py
# --small --tap (the full-size models: the same script without --small).
# The Python with torch, transformers, onnxscript and onnxruntime is
# $MICA_TORCH_PYTHON, else python3; without one the test is skipped.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
py=${MICA_TORCH_PYTHON:-python3}
if ! "$top_build/tools/mica" import --list-ops >/dev/null 2>&1; then
    echo "1..0 # SKIP built without the ONNX importer"
    exit 0
fi
if ! "$py" -c 'import torch, transformers, onnxscript, onnxruntime, numpy' \
        2>/dev/null; then
    echo "1..0 # SKIP no Python with torch, transformers, onnxscript and onnxruntime: set MICA_TORCH_PYTHON"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$py" "$top_src/bench/onnx_dynamic_transformers.py" --small --tap \
    "$top_build" "$tmp" 1x16 2x128 32x32 1x512 2>"$tmp/stderr"
status=$?
if [ $status -ne 0 ]; then
    tail -n 5 "$tmp/stderr" | sed 's/^/# /'
fi
exit $status
