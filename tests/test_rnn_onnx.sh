#!/bin/sh
# tests/test_rnn_onnx.sh - the RNNv2 layer against ONNX Runtime's RNN,
# LSTM and GRU operators on the CPU (tests/gen/rnn_onnx_check.py): a
# second, independent source for the gate order and the cell equations.
# Needs a Python with numpy, onnx and onnxruntime: $MICA_PYTHON, else
# python3; skipped where there is none.  With MICA_RNN_DEVICE=cuda it
# checks the CUDA implementation instead.
#
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_MODULE_DIR.  TAP on stdout.

top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_src" ] || [ -z "${MICA_BIN:-}" ]; then
    echo "1..0 # SKIP MICA_TOP_SRCDIR/MICA_BIN not set (run through make check)"
    exit 0
fi
python=
for p in "${MICA_PYTHON:-}" python3; do
    if [ -n "$p" ] && "$p" -c 'import numpy, onnx, onnxruntime' \
        >/dev/null 2>&1; then
        python=$p
        break
    fi
done
if [ -z "$python" ]; then
    echo "1..0 # SKIP no Python with numpy, onnx and onnxruntime (set MICA_PYTHON)"
    exit 0
fi
exec "$python" "$top_src/tests/gen/rnn_onnx_check.py" "$MICA_BIN" \
    "${MICA_RNN_DEVICE:-cpu}"
