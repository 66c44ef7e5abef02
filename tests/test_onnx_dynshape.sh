#!/bin/sh
# tests/test_onnx_dynshape.sh - the small models of
# tests/onnx/make_dynshape.py (shape arithmetic over runtime dimensions,
# runtime values where mica wants constants: issue 23 items 4 and 5), each
# built for a profile and run at shapes across it, on mica's CPU against
# ONNX Runtime (tests/onnx/dynshape.txt, run by tests/onnx/real_models.py).
# The Python that has numpy and onnxruntime is $MICA_REAL_PYTHON (.ci/run
# sets it), else python3; without one the test is skipped.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
py=${MICA_REAL_PYTHON:-python3}
if ! "$mica" import --list-ops >/dev/null 2>&1; then
    echo "1..0 # SKIP built without the ONNX importer"
    exit 0
fi
if ! "$py" -c 'import numpy, onnxruntime' 2>/dev/null; then
    echo "1..0 # SKIP no Python with numpy and onnxruntime: set MICA_REAL_PYTHON (.ci/run makes one)"
    exit 0
fi
exec "$py" "$top_src/tests/onnx/real_models.py" \
    "$top_src/tests/onnx/dynshape.txt" "$top_src/tests/onnx/models" "$mica"
