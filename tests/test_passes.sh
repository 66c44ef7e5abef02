#!/bin/sh
# tests/test_passes.sh - every graph pass proven by running both graphs
# (docs/passes.md): each in-tree test network is built as written
# (`--a passes=none`) and with every pass (`--b passes=all`), both run on
# the CPU on the same seeded random inputs (`mica compare`), and every
# output must agree within the tolerance of float32 (|a - b| <= 1e-5 or
# <= 1e-4 |a|; integers and booleans exactly).  The networks:
#
#   - every manifest of tests/manifests/ and examples/ (those of bad/ and
#     *_bad.yaml are refused on purpose, examples/bar and examples/swish
#     need their out-of-tree modules: tests/test_example.sh compares
#     those; tests/manifests/abi/ gets tests/abi2's module);
#   - every ONNX model of tests/onnx/models/ (the encoders at a fixed
#     shape and over a range of shapes, which constant folding must leave
#     dynamic);
#   - with $MICA_ONNX_LIGHT (as .ci/run sets it), the onnx wheel's
#     light_* models, with ONNX's model-test tolerance (rtol 1e-3, as
#     tests/test_onnx_models.c: their 50 to 120 layers add float32
#     roundings up, and reordered sums round differently).
#
# A network that does not build or run as written (A) is skipped with
# why; B failing, an output beyond the tolerance, a pass that fails (it
# is then skipped, with a warning), or the rewritten network not building
# (the build then falls back to the network as written, with a warning)
# fail.  The ONNX backend tests (tests/test_onnx_backend.c) check every
# node model built with the passes against ONNX's own outputs.
#
# Arguments: manifests or ONNX models to compare instead (no options).
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_TOP_BUILDDIR, MICA_MODULE_DIR, MICA_ONNX_LIGHT.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-passes-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

# check LABEL FILE [OPTIONS...]: one TAP result.
check() {
    label=$1
    shift
    run "$mica" compare "$@" --a passes=none,device=cpu \
        --b passes=all,device=cpu --atol "$atol" --rtol "$rtol"
    if [ "$rc" -ne 0 ] && ! grep -q "^mica: B: \|^FAIL" "$tmp/err" "$tmp/out" &&
       ! grep -q "^mica: warning: " "$tmp/err"; then
        skip "$label" "$(head -n 1 "$tmp/err" | sed 's/^mica: //')"
        return
    fi
    if grep -q "^mica: warning: " "$tmp/err"; then
        ok 1 "$label: no pass fails, the rewritten network builds"
        sed 's/^/#     | /' "$tmp/err"
        return
    fi
    ok "$rc" "$label: the same outputs with and without passes"
    if [ "$rc" -ne 0 ]; then
        grep -h -e "FAIL" -e "^mica" -e "^output" "$tmp/out" "$tmp/err" |
            sed 's/^/#     | /'
    fi
}

# The inputs of ONNX model M given as files beside it (M.NAME.npy, or
# PREFIX.NAME.npy for M = PREFIXdigits), as --input options.
inputs_of() {
    d=$(dirname "$1")
    b=$(basename "$1" .onnx)
    p=$(echo "$b" | sed 's/[0-9]*$//')
    [ "$p" = "$b" ] && p=
    for f in "$d/$b".*.npy ${p:+"$d/$p".*.npy}; do
        [ -f "$f" ] || continue
        case $f in *.want.*) continue ;; esac
        n=$(basename "$f" .npy)
        n=${n#"$b".}
        [ -n "$p" ] && n=${n#"$p".}
        printf ' --input %s=%s' "$n" "$f"
    done
}

atol=1e-5
rtol=1e-4

if [ $# -gt 0 ]; then
    for f in "$@"; do
        case $f in
        *.onnx) check "$(basename "$f")" "$f" ;;
        *) check "$f" "$f" ;;
        esac
    done
    echo "1..$n"
    exit $((failed > 0))
fi

# ---- manifests ---------------------------------------------------------------
for f in $(cd "$top_src" && find tests/manifests examples -name '*.yaml' |
           LC_ALL=C sort); do
    case $f in
    */bad/*|*_bad.yaml) continue ;;
    examples/bar/*|examples/swish/*) continue ;;
    tests/manifests/abi/*)
        check "$f" "$top_src/$f" --module-path "$top_build/tests/abi2/.libs" ;;
    *) check "$f" "$top_src/$f" ;;
    esac
done

# ---- ONNX models -------------------------------------------------------------
m=$top_src/tests/onnx/models
for f in "$m"/*.onnx; do
    [ -f "$f" ] || continue
    b=$(basename "$f" .onnx)
    # shellcheck disable=SC2046
    case $b in
    encoder*)
        check "tests/onnx/$b.onnx" "$f" $(inputs_of "$f")
        check "tests/onnx/$b.onnx, batch 1-4, sequence 1-16" "$f" \
            $(inputs_of "$f") \
            --min-shapes input_ids:1x1,attention_mask:1x1 \
            --opt-shapes input_ids:2x7,attention_mask:2x7 \
            --max-shapes input_ids:4x16,attention_mask:4x16 ;;
    mlp)
        # its input is named in:0 (the file in_0)
        check "tests/onnx/$b.onnx" "$f" --input "in:0=$m/mlp.in_0.npy" ;;
    *)
        check "tests/onnx/$b.onnx" "$f" $(inputs_of "$f") ;;
    esac
done

# ---- the onnx wheel's light models --------------------------------------------
if [ -n "${MICA_ONNX_LIGHT:-}" ] && [ -d "$MICA_ONNX_LIGHT" ]; then
    rtol=1e-3
    for f in "$MICA_ONNX_LIGHT"/light_*.onnx; do
        [ -f "$f" ] || continue
        check "$(basename "$f")" "$f"
    done
else
    skip "the onnx wheel's light models" "MICA_ONNX_LIGHT is not set"
fi

echo "1..$n"
exit $((failed > 0))
