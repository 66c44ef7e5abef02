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
    # One process per file: a process that ran engines (the engine
    # harness runs each that loads) can trip LeakSanitizer's exit-time
    # crash on OpenMP's threads under clang 14 (.ci/run), and one file's
    # failure then names its file.
    files=0
    bad=
    for f in "$top_src/fuzz/corpus/$t"/* "$top_src/fuzz/regress/$t"/*; do
        [ -f "$f" ] || continue
        case $f in *.md) continue ;; esac
        files=$((files + 1))
        if ! out=$("$prog" "$f" 2>&1) ||
           ! printf '%s\n' "$out" | grep -q '^1\.\.'; then
            bad="$bad $f"
            printf '%s\n' "$out" | tail -15 | sed 's/^/#   /'
        fi
    done
    n=$((n + 1))
    if [ -z "$bad" ]; then
        echo "ok $n - $t: $files inputs replayed"
    else
        echo "not ok $n - $t: the replay failed on:$bad"
        failed=$((failed + 1))
    fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
