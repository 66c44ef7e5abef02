#!/bin/sh
# tests/test_cli_perf.sh - the measuring tools on the CPU device:
# `mica bench` (its report's structure, units and counts, every option,
# the JSON exports' layouts), `mica run`'s seeded random inputs
# (reproducible, per dtype, shape tensors), and `mica compare` (identical
# configurations pass; a deliberately different implementation, from
# tests/drift, fails with a clear report; --all-layers names the layer).
# No timing is asserted: only what the output says and how it is laid out.
#
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_TOP_BUILDDIR, MICA_MODULE_DIR.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
npy=$top_build/tests/npytool
hello=$top_src/examples/hello.yaml
dynamic=$top_src/tests/manifests/dynamic
drift=$top_build/tests/drift/.libs

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-perf-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" modules 2>/dev/null | grep -q '^ElementWise '; then
    echo "1..0 # SKIP the ElementWise module is not built"
    exit 0
fi
python=
if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' 2>/dev/null; then
    python=python3
fi
quick="--device cpu --duration-s 0 --warmup-ms 0 --iterations 7"
num='[-+0-9.e]*'

# ---- bench: the report -----------------------------------------------------
run "$mica" bench --help
is 0 "$rc" "bench --help exits 0"
for opt in --shapes --iterations --warmup-ms --duration-s --cuda-graph \
           --no-cuda-graph --no-data-transfers --profile-layers --export-times \
           --export-profile --device --prefer --fp16 --module-path --seed; do
    has "$tmp/out" "^ *.*$opt" "bench --help: $opt"
done
run "$mica" --help
has "$tmp/out" '^  bench ' "mica --help lists bench"
has "$tmp/out" '^  compare ' "mica --help lists compare"

run "$mica" bench "$hello" $quick
is 0 "$rc" "bench hello.yaml exits 0"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
has "$tmp/out" '^=== Benchmark: .*hello.yaml (hello) ===$' "bench: a title"
has "$tmp/out" '^Device: cpu$' "bench: the device"
has "$tmp/out" '^CUDA graphs: off (the engine runs on the CPU)$' \
    "bench: says CUDA graphs are off, and why"
has "$tmp/out" '^Data transfers: on (' "bench: says transfers are on"
has "$tmp/out" '^Warmup completed 0 queries over .* ms$' "bench: the warmup"
has "$tmp/out" '^Timing trace has 7 queries over .* s$' \
    "bench: --iterations 7 with --duration-s 0 gives 7 queries"
has "$tmp/out" '^=== Performance summary ===$' "bench: trtexec's summary"
has "$tmp/out" "^Throughput: $num qps$" "bench: Throughput in qps"
for m in 'Latency' 'Enqueue Time' 'H2D Latency' 'GPU Compute Time' \
         'D2H Latency'; do
    has "$tmp/out" "^$m: min = $num ms, max = $num ms, mean = $num ms, median = $num ms, percentile(90%) = $num ms, percentile(95%) = $num ms, percentile(99%) = $num ms$" \
        "bench: $m with min, max, mean, median, p90, p95, p99 in ms"
done
has "$tmp/out" "^Total Host Walltime: $num s$" "bench: Total Host Walltime in s"
has "$tmp/out" "^Total GPU Compute Time: $num s$" \
    "bench: Total GPU Compute Time in s"
has "$tmp/out" '^Note: on the cpu device, GPU Compute Time is the host time' \
    "bench: a note on what the GPU rows mean on the cpu"
hasnt "$tmp/out" 'Enqueue Time rather' "bench: no enqueue-bound warning on the cpu"
hasnt "$tmp/out" 'Profile' "bench: no per-layer table unless asked"
is 0 "$(wc -c <"$tmp/err" | tr -d ' ')" "bench: no progress line off a terminal"

run "$mica" bench "$hello" $quick --verbose
has "$tmp/err" '^bench: done .* 7 queries' "bench --verbose: a progress line on stderr"
has "$tmp/out" '^=== Explanations of the performance metrics ===' \
    "bench --verbose: what each metric means"

run "$mica" bench "$hello" $quick --no-data-transfers
is 0 "$rc" "bench --no-data-transfers exits 0"
has "$tmp/out" '^Data transfers: off' "  says transfers are off"
has "$tmp/out" '^H2D Latency: min = 0 ms, max = 0 ms' "  H2D is 0"
has "$tmp/out" '^D2H Latency: min = 0 ms, max = 0 ms' "  D2H is 0"

run "$mica" bench "$hello" $quick --profile-layers --no-passes all
is 0 "$rc" "bench --profile-layers exits 0"
has "$tmp/out" '^Per-layer timing: on$' "  says so"
has "$tmp/out" '^=== Profile (7 iterations) ===$' "  a per-layer table"
has "$tmp/out" '^Layer  *Type  *Implementation  *Time (ms)  *Avg. Time (ms)  *Median Time (ms)  *Time %$' \
    "  its columns: name, type, implementation, time, share"
for l in 'add  *ElementWise' 'relu  *Activation' 'total  *Reduce'; do
    has "$tmp/out" "^$l  *\(reference\|onednn\|vec\)  *$num  *$num  *$num  *$num$" \
        "  a row: $(echo "$l" | sed 's/ .*//')"
done
# Constants never run: their values are bound (core/constants.c).
hasnt "$tmp/out" "^input  *Constant" "  no row of a Constant: it never runs"
has "$tmp/out" "^Total  *$num  *$num  *$num  *100.0$" "  and a total"

# ---- bench: the JSON exports -------------------------------------------------
run "$mica" bench "$hello" $quick --export-times "$tmp/times.json" \
    --export-profile "$tmp/profile.json" --no-passes all
is 0 "$rc" "bench --export-times --export-profile exits 0"
has "$tmp/out" "^times: $tmp/times.json$" "  names the times file"
has "$tmp/out" '^=== Profile' "  --export-profile implies the table"
if [ -n "$python" ]; then
    is "7 startEnqMs,endEnqMs,startH2dMs,endH2dMs,startComputeMs,endComputeMs,startD2hMs,endD2hMs,h2dMs,computeMs,d2hMs,latencyMs,endToEndMs" \
        "$($python -c 'import json,sys; t=json.load(open(sys.argv[1])); print(len(t), ",".join(t[0].keys()))' "$tmp/times.json" 2>&1)" \
        "  times: 7 records in trtexec's layout"
    is "ok" "$($python -c '
import json, sys
for r in json.load(open(sys.argv[1])):
    assert r["startH2dMs"] <= r["endH2dMs"] <= r["startComputeMs"] <= r["endComputeMs"] <= r["startD2hMs"] <= r["endD2hMs"], r
    assert abs(r["latencyMs"] - r["h2dMs"] - r["computeMs"] - r["d2hMs"]) < 1e-6, r
print("ok")' "$tmp/times.json" 2>&1)" "  times: ordered spans, latency their sum"
    is "7 | add,relu,total | name,timeMs,averageMs,medianMs,percentage" \
        "$($python -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(p[0]["count"], "|", ",".join(r["name"] for r in p[1:]), "|", ",".join(p[1].keys()))' "$tmp/profile.json" 2>&1)" \
        "  profile: a count record, then one per layer in trtexec's layout"
else
    skip "  times: 7 records in trtexec's layout" "no python3"
    skip "  times: ordered spans, latency their sum" "no python3"
    skip "  profile: a count record, then one per layer" "no python3"
fi
run "$mica" bench "$hello" $quick --export-times "$tmp/no/such/dir/t.json"
is 1 "$rc" "bench: an export that cannot be written exits 1"
has "$tmp/err" "^mica: cannot write '$tmp/no/such/dir/t.json" "  and says so"
# The export written beside a planted link at the name it once used
# (NAME.tmp~): the link's target stays as it was.
printf keep >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/t2.json.tmp~"
run "$mica" bench "$hello" $quick --export-times "$tmp/t2.json"
is 0 "$rc" "bench --export-times beside a planted link exits 0"
is "keep" "$(cat "$tmp/victim")" "  the link's target is untouched"
[ -f "$tmp/t2.json" ] && [ ! -L "$tmp/t2.json" ]
ok $? "  the times are in place"
is "" "$(ls -A "$tmp" | grep '^\.')" "  no temporary file is left"

# ---- bench: options ------------------------------------------------------------
run "$mica" bench "$hello" $quick --cuda-graph
is 1 "$rc" "bench --cuda-graph on the cpu: exits 1, not ignored"
has "$tmp/err" '^mica: --cuda-graph: CUDA graphs are for the cuda device' \
    "  and says why"
run "$mica" bench "$hello" $quick --cuda-graph --no-cuda-graph
is 0 "$rc" "bench --cuda-graph --no-cuda-graph: the last wins"
has "$tmp/out" '^CUDA graphs: off (--no-cuda-graph)$' "  and says so"
run "$mica" bench "$dynamic/batch.yaml" $quick --shapes x:5x4
is 0 "$rc" "bench --shapes on a runtime dimension exits 0"
has "$tmp/out" "^input 'x': random float32 \[5, 4\], seed 1$" \
    "  the input has the shape asked for"
run "$mica" bench "$dynamic/batch.yaml" $quick --shapes x:5x3
is 1 "$rc" "bench --shapes of a wrong fixed size: exits 1"
has "$tmp/err" "^mica: --shapes: input 'x' takes \[N, 4\], not \[5, 3\]$" \
    "  and says so"
run "$mica" bench "$dynamic/batch.yaml" $quick --shapes nope:2
is 1 "$rc" "bench --shapes of an unknown input: exits 1"
has "$tmp/err" "no input named 'nope'" "  and names it"
"$npy" make "$tmp/x.npy" float32 2x3 0.5,1,1.5,2,2.5,3
cat >"$tmp/in.yaml" <<'EOF'
mica: 1
inputs:
  x: {dtype: float32, shape: [2, 3]}
layers:
  - {name: total, type: Reduce, inputs: [x], outputs: [y], params: {op: sum, axes: [1], keep_dims: false}}
outputs: [y]
EOF
run "$mica" bench "$tmp/in.yaml" $quick --input "x=$tmp/x.npy"
has "$tmp/out" "^input 'x': float32 \[2, 3\] from $tmp/x.npy$" \
    "bench --input: names the file"
"$mica" build "$tmp/in.yaml" -o "$tmp/in.engine" --device cpu >/dev/null 2>&1
run "$mica" bench "$tmp/in.engine" $quick
is 0 "$rc" "bench of an engine file exits 0"
for bad in "--iterations 0" "--warmup-ms -1" "--duration-s abc" "--frob"; do
    run "$mica" bench "$hello" $bad
    is 2 "$rc" "bench $bad: usage error (2)"
done

onnx=$top_src/tests/onnx/models/mlp.onnx
if "$mica" import --list-ops >/dev/null 2>&1; then
    run "$mica" bench "$onnx" $quick --shapes in:0:2x4
    is 0 "$rc" "bench of an ONNX model, --shapes as its profile and shapes"
    has "$tmp/out" "^input 'in:0': random float32 \[2, 4\], seed 1$" \
        "  a random input of those shapes (a name with ':')"
    run "$mica" compare "$onnx" --shapes in:0:2x4
    is 0 "$rc" "compare of an ONNX model exits 0"
else
    skip "bench of an ONNX model" "no ONNX importer in this build"
    skip "  a random input of those shapes" "no ONNX importer in this build"
    skip "compare of an ONNX model" "no ONNX importer in this build"
fi

# ---- run: seeded random inputs -----------------------------------------------
run "$mica" run "$tmp/in.yaml" --output-dir "$tmp/r1"
has "$tmp/out" "^input 'x': random float32 \[2, 3\], seed 1$" \
    "run without --input: random values, and says so with the seed"
run "$mica" run "$tmp/in.yaml" --output-dir "$tmp/r2" --input x=random
cmp -s "$tmp/r1/y.npy" "$tmp/r2/y.npy"
ok $? "run: --input x=random is the same as not giving x"
run "$mica" run "$tmp/in.yaml" --output-dir "$tmp/r3" --seed 1
cmp -s "$tmp/r1/y.npy" "$tmp/r3/y.npy"
ok $? "run: seed 1 is the default, and the values repeat"
run "$mica" run "$tmp/in.yaml" --output-dir "$tmp/r4" --seed 2
has "$tmp/out" "^input 'x': random float32 \[2, 3\], seed 2$" "run --seed 2: said"
cmp -s "$tmp/r1/y.npy" "$tmp/r4/y.npy"
[ $? -ne 0 ]
ok $? "run --seed 2: other values"
run "$mica" run "$tmp/in.yaml" --output-dir "$tmp/r5" --seed -3
is 2 "$rc" "run --seed -3: usage error (2)"
cat >"$tmp/types.yaml" <<'EOF'
mica: 1
inputs:
  f: {dtype: float32, shape: [256]}
  i: {dtype: int32, shape: [256]}
  b: {dtype: bool, shape: [64]}
layers:
  - {name: cf, type: Identity, inputs: [f], outputs: [fo]}
  - {name: ci, type: Identity, inputs: [i], outputs: [io]}
  - {name: cb, type: Identity, inputs: [b], outputs: [bo]}
outputs: [fo, io, bo]
EOF
run "$mica" run "$tmp/types.yaml" --output-dir "$tmp/t"
is 0 "$rc" "run: random float32, int32 and bool inputs"
in_range() { # FILE LOW HIGH: every value of the .npy in [LOW, HIGH]
    "$npy" dump "$1" | tr ' ' '\n' | tail -n +3 |
        awk -v lo="$2" -v hi="$3" '$1 < lo || $1 > hi { bad = 1 } END { exit bad }'
}
in_range "$tmp/t/fo.npy" -1 1
ok $? "  floats in [-1, 1]"
in_range "$tmp/t/io.npy" 0 3
ok $? "  integers 0 to 3"
in_range "$tmp/t/bo.npy" 0 1
ok $? "  bool 0 or 1"
run "$mica" run "$dynamic/shape_input.yaml" --output-dir "$tmp/s"
has "$tmp/out" "^input 'n': shape values \[.*\] (the profile's opt)$" \
    "run: a shape-tensor input takes the profile's opt values"

# ---- compare -------------------------------------------------------------------
# device: cpu, the test module Drift having no CUDA implementation (on a
# machine with a GPU, auto would pick cuda)
cat >"$tmp/drift.yaml" <<'EOF'
mica: 1
device: cpu
inputs:
  x: {dtype: float32, shape: [2, 3]}
layers:
  - {name: relu, type: Activation, inputs: [x], outputs: [r], params: {type: relu}}
  - {name: drift, type: Drift, inputs: [r], outputs: [d]}
  - {name: twice, type: ElementWise, inputs: [d, d], outputs: [y], params: {op: sum}}
outputs: [y]
EOF
"$npy" make "$tmp/p.npy" float32 2x3 1,2,3,4,5,6
cmpx() { run "$mica" compare "$tmp/drift.yaml" --module-path "$drift" "$@"; }
run "$mica" compare --help
is 0 "$rc" "compare --help exits 0"
cmpx
is 0 "$rc" "compare, identical configurations: exits 0"
has "$tmp/out" "^A: reference (engine on cpu)$" "  names A: by default every layer on its reference"
has "$tmp/out" "^B: the manifest's choices (engine on cpu)$" "  names B"
has "$tmp/out" "^input 'x': random float32 \[2, 3\], seed 1$" "  the inputs"
has "$tmp/out" "^  absolute error: max = 0, mean = 0, median = 0, p99 = 0$" \
    "  absolute error: max, mean, median, p99"
has "$tmp/out" "^PASS: 1 output matches$" "  PASS"
cmpx --b prefer=Drift=skewed --input "x=$tmp/p.npy"
is 1 "$rc" "compare against a different implementation: exits 1"
has "$tmp/out" "^  layer 'drift' (Drift): A reference, B skewed$" \
    "  names the implementations that differ"
has "$tmp/out" "^  absolute error: max = 0.004[0-9]*, mean = $num, median = $num, p99 = 0.004[0-9]*$" \
    "  the absolute errors"
has "$tmp/out" "^  relative error: max = $num, mean = $num, median = $num, p99 = $num$" \
    "  the relative errors"
has "$tmp/out" "^  FAIL: 4 of 6 elements (66.7%) beyond both atol 1e-05 and rtol 1e-05; the largest error at \[0, 2\]: A 6, B 6.004" \
    "  how many elements fail, and the worst"
has "$tmp/out" "^FAIL: 1 of 1 outputs differ$" "  FAIL"
cmpx --b prefer=Drift=skewed --input "x=$tmp/p.npy" --atol 0 --rtol 1e-3
is 0 "$rc" "compare: beyond atol but within rtol passes (both must be exceeded)"
cmpx --b prefer=Drift=skewed --input "x=$tmp/p.npy" --atol 0.003 --rtol 0
is 1 "$rc" "compare: beyond atol 0.003 and rtol 0 fails"
has "$tmp/out" "^  FAIL: 2 of 6 elements" "  for the two elements off by 0.004"
cmpx --b prefer=Drift=skewed --input "x=$tmp/p.npy" --all-layers
is 1 "$rc" "compare --all-layers: exits 1"
has "$tmp/out" "^  tensor 'r' (layer 'relu'): max abs 0, max rel 0: ok$" \
    "  the tensors before it match"
has "$tmp/out" "^  tensor 'd' (layer 'drift'): .*FAIL (4 of 6 elements)$" \
    "  its output differs"
has "$tmp/out" "^first layer that diverges: 'drift' (Drift, implementation reference in A, skewed in B): output 'd'" \
    "  names the first layer that diverges"
cmpx --b prefer=Drift=skewed --input "x=$tmp/p.npy" --bisect
is 1 "$rc" "compare --bisect: exits 1"
has "$tmp/out" "^bisecting over 2 tensors, one marked per step:$" \
    "  over the network's two inner tensors"
has "$tmp/out" "^first tensor that diverges (2 steps): 'd', output of layer 'drift' (Drift)$" \
    "  finds the drift's output in two steps"
cmpx --bisect
is 0 "$rc" "compare --bisect, identical configurations: exits 0"
has "$tmp/out" "^no tensor diverges (1 step)$" "  says no tensor diverges"
cmpx --all-layers
is 0 "$rc" "compare --all-layers, identical configurations: exits 0"
has "$tmp/out" "^PASS: 1 output matches, and 2 intermediate tensors$" \
    "  every intermediate tensor compared"
run "$mica" compare "$tmp/in.engine"
is 1 "$rc" "compare of an engine file: exits 1"
has "$tmp/err" "compare builds the model twice: give its manifest" "  and says why"
cmpx --b frob
is 2 "$rc" "compare --b with an unknown item: usage error (2)"
has "$tmp/err" "unknown item 'frob'" "  names it"
cmpx --a device=gpu
is 2 "$rc" "compare --a device=gpu: usage error (2)"

echo "1..$n"
[ "$failed" -eq 0 ]
