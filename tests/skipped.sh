#!/bin/sh
# tests/skipped.sh TEST... - the last line of `make check`: the optional
# test groups this run skipped, each with what would run it, or that
# none was skipped (issue 26: a green run must not hide them).  Reads
# the .trs files automake's driver wrote for the tests named (those of
# this run); Triton's test exists only when configured with
# --enable-triton ($MICA_TRITON_BUILT no: say so).

# group|tests (space-separated)|what runs it
groups='real ONNX models|tests/test_onnx_models|MICA_ONNX_LIGHT=the onnx wheel'"'"'s backend/test/data/light folder (.ci/run sets it)
trained models from wheels|tests/test_onnx_real.sh|MICA_REAL_PYTHON=a Python with numpy and onnxruntime, MICA_REAL_WHEELS (.ci/run sets both)
ONNX RNN against onnxruntime|tests/test_rnn_onnx.sh|MICA_PYTHON=a Python with numpy, onnx and onnxruntime
compare against onnxruntime|tests/test_cli_compare_ref.sh|MICA_PYTHON=a Python with onnxruntime
ONNX backend suite|tests/test_onnx_backend|the libonnx-testdata package
Triton under a real tritonserver|tests/test_triton.sh|MICA_TRITON_VENV=a venv with nvidia-pytriton and tritonclient[http] (.ci/run makes one)'

run=" $* "
out=
IFS_SAVE=$IFS
IFS='
'
for g in $groups; do
    IFS=$IFS_SAVE
    name=${g%%|*}; rest=${g#*|}; tests=${rest%%|*}; how=${rest#*|}
    why=
    for t in $tests; do
        case "$run" in
        *" $t "*)
            trs=${t%.sh}.trs
            [ -f "$trs" ] || continue
            # a test skipped whole, or (compare) its onnxruntime part
            if grep -q '^:global-test-result: SKIP' "$trs" ||
               { grep -q '^:test-result: SKIP' "$trs" &&
                 grep -q '# SKIP .*onnxruntime' "${t%.sh}.log"; }; then
                why=$how
            fi ;;
        *)
            if [ "$t" = tests/test_triton.sh ] &&
               [ "${MICA_TRITON_BUILT:-}" = no ]; then
                why="configure --enable-triton, then $how"
            fi ;;
        esac
    done
    [ -n "$why" ] && out="$out${out:+; }$name ($why)"
    IFS='
'
done
IFS=$IFS_SAVE
if [ -n "$out" ]; then
    echo "skipped test groups: $out"
else
    echo "skipped test groups: none"
fi
