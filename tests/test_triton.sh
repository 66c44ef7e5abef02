#!/bin/sh
# tests/test_triton.sh - libtriton_mica.so served by a real tritonserver
# (TAP).  The server and its client come from a Python virtual environment
# with nvidia-pytriton and tritonclient[http]: $MICA_TRITON_VENV (given to
# configure or in the environment; .ci/run makes one).  Skipped, with the
# reason, where there is none.  The work is done by
# tests/triton/test_triton.py; this wrapper finds the environment and
# kills the server, by the process group it recorded, whatever happens.

venv=${MICA_TRITON_VENV:-}
if [ -z "$venv" ]; then
    echo "1..0 # SKIP MICA_TRITON_VENV is not set: no Python environment with nvidia-pytriton and tritonclient[http] (.ci/run makes one)"
    exit 0
fi
py=$venv/bin/python
if [ ! -x "$py" ]; then
    echo "1..0 # SKIP MICA_TRITON_VENV=$venv has no bin/python"
    exit 0
fi
if ! "$py" -c 'import numpy, pytriton, tritonclient.http' 2>/dev/null; then
    echo "1..0 # SKIP $venv lacks nvidia-pytriton, tritonclient[http] or numpy"
    exit 0
fi
if [ ! -f "$MICA_TRITON_BACKEND" ]; then
    echo "1..0 # SKIP the backend $MICA_TRITON_BACKEND is not built"
    exit 0
fi
if ! command -v nm >/dev/null 2>&1; then
    echo "1..0 # SKIP nm (binutils) is not installed"
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-triton.XXXXXX") || exit 1
stop() {
    if [ -s "$tmp/server.pid" ]; then
        kill -KILL -- "-$(cat "$tmp/server.pid")" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

"$py" "$MICA_TOP_SRCDIR/tests/triton/test_triton.py" "$tmp"
