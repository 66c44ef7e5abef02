#!/bin/sh
# tests/test_onnx_real.sh - trained models that public wheels ship
# (tests/onnx/real_models.txt) on mica's CPU against ONNX Runtime, by
# tests/onnx/real_models.py.  The wheels are in $MICA_REAL_WHEELS and the
# Python that has numpy and onnxruntime is $MICA_REAL_PYTHON (.ci/run
# sets both); without them the test is skipped, saying so.  TAP on
# stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
py=${MICA_REAL_PYTHON:-}
wheels=${MICA_REAL_WHEELS:-}
if ! "$mica" import --list-ops >/dev/null 2>&1; then
    echo "1..0 # SKIP built without the ONNX importer"
    exit 0
fi
if [ -z "$wheels" ] || [ ! -d "$wheels" ]; then
    echo "1..0 # SKIP no wheels: set MICA_REAL_WHEELS to the folder of the wheels tests/onnx/real_models.txt names (.ci/run downloads them)"
    exit 0
fi
if [ -z "$py" ] || ! "$py" -c 'import numpy, onnxruntime' 2>/dev/null; then
    echo "1..0 # SKIP no Python with numpy and onnxruntime: set MICA_REAL_PYTHON (.ci/run makes one)"
    exit 0
fi
exec "$py" "$top_src/tests/onnx/real_models.py" \
    "$top_src/tests/onnx/real_models.txt" "$wheels" "$mica"
