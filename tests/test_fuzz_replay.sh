#!/bin/sh
# tests/test_fuzz_replay.sh - each fuzz harness (fuzz/fuzz_*.c, linked
# with fuzz/replay.c instead of libFuzzer) run once over its seed corpus
# (fuzz/corpus/TARGET/) and over the reproducers its fuzzing found
# (fuzz/regress/TARGET/): none may crash, and in the sanitizer legs none
# may make a sanitizer report.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
n=0
failed=0
for t in manifest npy engine onnx; do
    prog=$top_build/fuzz/replay_$t
    if [ ! -x "$prog" ]; then
        n=$((n + 1))
        echo "ok $n - $t # SKIP not built (ONNX importer absent)"
        continue
    fi
    out=$("$prog" "$top_src/fuzz/corpus/$t" "$top_src/fuzz/regress/$t" 2>&1)
    st=$?
    files=$(printf '%s\n' "$out" | grep -c '^ok ')
    n=$((n + 1))
    if [ "$st" -eq 0 ] && printf '%s\n' "$out" | grep -q '^1\.\.'; then
        echo "ok $n - $t: $files inputs replayed"
    else
        echo "not ok $n - $t: the replay failed (status $st)"
        printf '%s\n' "$out" | tail -30 | sed 's/^/#   /'
        failed=$((failed + 1))
    fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
