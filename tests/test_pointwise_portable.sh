#!/bin/sh
# tests/test_pointwise_portable.sh - tests/test_mod_pointwise again with
# the Pointwise CPU implementation's portable float16 conversions
# ($MICA_POINTWISE_NO_F16C), which a processor with F16C never runs
# otherwise: its conversion cases compare them bit for bit with the kit's.
# Environment (from the top-level Makefile.am): MICA_TOP_BUILDDIR.
top_build=${MICA_TOP_BUILDDIR:-}
if [ -z "$top_build" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR not set (run through make check)"
    exit 0
fi
MICA_POINTWISE_NO_F16C=1 exec "$top_build/tests/test_mod_pointwise"
