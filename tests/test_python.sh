#!/bin/sh
# tests/test_python.sh - `import mica` (python/mica) under pytest
# (tests/python/test_mica.py), against this build's libmica: one TAP
# line per pytest test.  Needs a Python with numpy and pytest:
# $MICA_PYTHON, else python3 (skipped, saying so, without).  Skipped in a
# sanitizer build (an instrumented libmica does not load into Python).

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
if [ -n "${MICA_SAN_CFLAGS:-}" ]; then
    echo "1..0 # SKIP a sanitizer build: its libmica does not load into Python"
    exit 0
fi
py=${MICA_PYTHON:-python3}
if ! "$py" -c 'import numpy, pytest' 2>/dev/null; then
    echo "1..0 # SKIP no Python with numpy and pytest: set MICA_PYTHON"
    exit 0
fi
lib=$top_build/.libs/libmica.so
[ -f "$lib" ] || { echo "1..0 # SKIP no $lib (a static build?)"; exit 0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-python-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
MICA_LIBRARY=$lib PYTHONPATH=$top_src/python${PYTHONPATH:+:$PYTHONPATH} \
    "$py" -m pytest -p no:cacheprovider -rs -v "$top_src/tests/python" \
    --basetemp="$tmp/pt" >"$tmp/log" 2>&1
status=$?
n=0
while IFS= read -r line; do
    case "$line" in
    *"::"*" PASSED"*) n=$((n + 1)); echo "ok $n - ${line%% PASSED*}" ;;
    *"::"*" SKIPPED"*) n=$((n + 1)); echo "ok $n - ${line%% SKIPPED*} # SKIP" ;;
    *"::"*" FAILED"*|*"::"*" ERROR"*) n=$((n + 1)); echo "not ok $n - ${line%% [FE]*}" ;;
    esac
done <"$tmp/log"
if [ "$status" -ne 0 ]; then
    n=$((n + 1))
    echo "not ok $n - pytest exited $status"
    sed 's/^/# /' "$tmp/log"
fi
echo "1..$n"
