#!/bin/sh
# tests/test_cli.sh - the `mica` command end to end: help and usage
# errors, `mica modules`, `mica inspect`, `mica run` on examples/hello.yaml
# with the outputs checked against known values, and the failures (a bad
# manifest, an unknown input, an input of the wrong dtype or shape) that
# exit non-zero with one line and leave no output file behind.
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

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" modules 2>/dev/null | grep -q '^ElementWise '; then
    echo "1..0 # SKIP the ElementWise module is not built"
    exit 0
fi

# ---- help and usage --------------------------------------------------------
run "$mica" --help
is 0 "$rc" "--help exits 0"
has "$tmp/out" '^  run ' "--help lists run"
has "$tmp/out" '^  inspect ' "--help lists inspect"
has "$tmp/out" '^  modules ' "--help lists modules"
run "$mica"
is 2 "$rc" "no command: usage error (2)"
run "$mica" frobnicate "$hello"
is 2 "$rc" "an unknown command: usage error (2)"
has "$tmp/err" "^mica: unknown command 'frobnicate'" "  and says so"
run "$mica" run --help
is 0 "$rc" "run --help exits 0"
has "$tmp/out" '--output-dir DIR' "run --help shows the options"
run "$mica" run "$hello" --frobnicate --output-dir "$tmp/o"
is 2 "$rc" "an unknown option: usage error (2)"
has "$tmp/err" "unknown option '--frobnicate'" "  and names it"
run "$mica" run "$hello"
is 2 "$rc" "no --output-dir: usage error (2)"

# ---- modules ---------------------------------------------------------------
run "$mica" modules
is 0 "$rc" "modules exits 0"
has "$tmp/out" '^TYPE  *VERSION  *NAMESPACE  *IMPLEMENTATION' "modules: header"
for type in Constant ElementWise Activation Reduce; do
    has "$tmp/out" "^$type  *1  *-  *reference  *[0-9]*  *cpu.*  1  .*\.so$" \
        "modules: $type, version 1, reference, cpu, ABI 1, its file"
done

run "$mica" modules --fields
is 0 "$rc" "modules --fields exits 0"
has "$tmp/out" '^ElementWise v1 (.*reference.*):' "  a section per creator"
has "$tmp/out" '^  op  *enum  ' "  with its params"
mkdir "$tmp/junk"
printf 'not an ELF file' >"$tmp/junk/mica_junk.so"
run "$mica" modules --module-path "$tmp/junk"
is 0 "$rc" "modules with an unusable file exits 0"
has "$tmp/out" '^load problems:' "  and lists the load problems"
has "$tmp/out" "^  .*mica_junk.so" "  naming the file"
has "$tmp/out" '^ElementWise ' "  and everything else still loads"
run env MICA_MODULE_PATH="$tmp/junk" "$mica" modules
has "$tmp/out" "^  .*mica_junk.so" "MICA_MODULE_PATH is searched too"

# ---- run -------------------------------------------------------------------
run "$mica" run "$hello" --output-dir "$tmp/o" --device cpu
is 0 "$rc" "run hello.yaml exits 0"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
has "$tmp/out" '^y: float32 \[2\] -> .*/o/y.npy' "run: names what it wrote"
has "$tmp/out" '^  \[6, 7.5\]' "run: shows the values"
is "float32 [2, 3] 1.5 0 4.5 0 7.5 0" "$("$npy" dump "$tmp/o/r.npy" 2>&1)" \
    "run: r.npy holds relu(x + bias)"
is "float32 [2] 6 7.5" "$("$npy" dump "$tmp/o/y.npy" 2>&1)" \
    "run: y.npy holds the row sums"
is "r.npy y.npy" "$(ls -A "$tmp/o" | tr '\n' ' ' | sed 's/ $//')" \
    "run: exactly the outputs, no temporary files"

# The same network with x as a network input.
cat >"$tmp/in.yaml" <<'EOF'
mica: 1
inputs:
  x: {dtype: float32, shape: [2, 3]}
weights:
  bias: {dtype: float32, shape: [2, 3], data: [1, -2, 3, -4, 5, -6]}
layers:
  - {name: bias, type: Constant, outputs: [b], params: {weights: bias, shape: [2, 3]}}
  - {name: add, type: ElementWise, inputs: [x, b], outputs: [s], params: {op: sum}}
  - {name: relu, type: Activation, inputs: [s], outputs: [r], params: {type: relu}}
  - {name: total, type: Reduce, inputs: [r], outputs: [y], params: {op: sum, axes: [1], keep_dims: false}}
outputs: [y]
EOF
"$npy" make "$tmp/x.npy" float32 2x3 0.5,1,1.5,2,2.5,3
run "$mica" run "$tmp/in.yaml" --input="x=$tmp/x.npy" --output-dir="$tmp/a/b/c"
is 0 "$rc" "run with --input, --opt=value forms, a nested output folder"
is "float32 [2] 6 7.5" "$("$npy" dump "$tmp/a/b/c/y.npy" 2>&1)" \
    "  y.npy holds the row sums"
"$npy" make "$tmp/x2.npy" float32 2x3 -1,-1,-1,1,1,1
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/x2.npy" --output-dir "$tmp/a/b/c"
is "float32 [2] 2 6" "$("$npy" dump "$tmp/a/b/c/y.npy" 2>&1)" \
    "  a second run replaces the file"

# A network without runtime dimensions has no profiles: --profile 0 stands
# for its one implicit profile, anything else is refused.
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/x.npy" --profile 0 --output-dir "$tmp/p0"
is 0 "$rc" "run --profile 0 on a static network exits 0"
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/x.npy" --profile 1 --output-dir "$tmp/p1"
is 1 "$rc" "run --profile 1 on a static network: exits 1"
has "$tmp/err" "^mica: --profile 1: the network has no runtime dimensions and no profiles" \
    "  and says why"
empty_dir "$tmp/p1"
ok $? "  nothing written"
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/x.npy" --profile -1 --output-dir "$tmp/p1"
is 2 "$rc" "run --profile -1: usage error (2)"

# ---- inspect ---------------------------------------------------------------
# (hello.yaml has no input: constant folding would make it all Constants;
# --no-passes all shows its layers as written.)
run "$mica" inspect "$hello" --device cpu --no-passes all
is 0 "$rc" "inspect exits 0"
has "$tmp/out" '^device: *cpu' "inspect: the device"
has "$tmp/out" '^arena: *[0-9][0-9]* bytes' "inspect: the arena size"
has "$tmp/out" 'add  *ElementWise  *1  *\(reference\|onednn\|vec\)  *x, b -> s' \
    "inspect: a layer with its implementation and tensors"
has "$tmp/out" '^  x  *float32  *\[2, 3\]  *E  ' "inspect: tensor x"
has "$tmp/out" '^  y  *float32  *\[2\]  *E  *output' "inspect: output y"
if grep -q -e '^profiles' -e '^symbols' "$tmp/out"; then
    ok 1 "inspect: a static network shows no symbols and no profiles"
else
    ok 0 "inspect: a static network shows no symbols and no profiles"
fi

# ---- failures: exit 1, one line, nothing written ---------------------------
cat >"$tmp/bad.yaml" <<'EOF'
mica: 1
inputs:
  x: {dtype: float32, shape: [2, 3]}
layers:
  - {name: add, type: ElementWise, inputs: [x, x], outputs: [y], params: {op: summ}}
outputs: [y]
EOF
run "$mica" run "$tmp/bad.yaml" --input "x=$tmp/x.npy" --output-dir "$tmp/bad"
is 1 "$rc" "bad manifest: exits 1"
is 1 "$(wc -l <"$tmp/err" | tr -d ' ')" "bad manifest: one line"
has "$tmp/err" "^mica: $tmp/bad.yaml:5:79: layer 'add': param 'op': 'summ' is not one of sum, prod" \
    "bad manifest: file:line:col, layer and param"
empty_dir "$tmp/bad"
ok $? "bad manifest: no output folder"
mkdir "$tmp/bad2"
run "$mica" run "$tmp/bad.yaml" --input "x=$tmp/x.npy" --output-dir "$tmp/bad2"
empty_dir "$tmp/bad2"
ok $? "bad manifest: an existing output folder stays empty"
run "$mica" inspect "$tmp/bad.yaml"
is 1 "$rc" "inspect of a bad manifest: exits 1"

run "$mica" run "$tmp/in.yaml" --output-dir "$tmp/miss"
is 0 "$rc" "an input not given: random values, exits 0"
has "$tmp/out" "^input 'x': random float32 \[2, 3\], seed 1$" \
    "  and says so, with the seed"

run "$mica" run "$tmp/in.yaml" --input "x=$tmp/x.npy" --input "z=$tmp/x.npy" \
    --output-dir "$tmp/extra"
is 1 "$rc" "an input the network lacks: exits 1"
has "$tmp/err" "no input named 'z'" "  and names it"

"$npy" make "$tmp/xi.npy" int32 2x3 1,2,3,4,5,6
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/xi.npy" --output-dir "$tmp/dt"
is 1 "$rc" "input of the wrong dtype: exits 1"
has "$tmp/err" "^mica: input 'x': .*int32.* float32" "  and says which"
empty_dir "$tmp/dt"
ok $? "  nothing written"

"$npy" make "$tmp/xs.npy" float32 3x2 1,2,3,4,5,6
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/xs.npy" --output-dir "$tmp/sh"
is 1 "$rc" "input of the wrong shape: exits 1"
has "$tmp/err" "^mica: input 'x': .* has shape \[3, 2\]" "  and says which"

printf 'not a numpy file' >"$tmp/junk.npy"
run "$mica" run "$tmp/in.yaml" --input "x=$tmp/junk.npy" --output-dir "$tmp/junk"
is 1 "$rc" "a file that is not .npy: exits 1"
has "$tmp/err" "^mica: input 'x': .*junk.npy: not a .npy file" "  and says so"

run "$mica" run "$tmp/nothing.yaml" --output-dir "$tmp/n"
is 1 "$rc" "missing manifest: exits 1"
has "$tmp/err" "^mica: cannot open manifest" "  and says so"

# ---- deploy-time implementation choice ---------------------------------------
run "$mica" inspect "$hello" --device cpu --no-passes all
has "$tmp/out" '^  2  add .*\(reference\|onednn\|vec\) .*the highest priority for cpu' \
    "inspect says why each implementation was chosen"
run "$mica" inspect "$hello" --device cpu --prefer ElementWise=reference \
    --no-passes all
has "$tmp/out" '^  2  add .*reference .*the deploy-time choice' \
    "--prefer Type=impl is the deploy-time choice"
run "$mica" inspect "$hello" --device cpu --prefer ElementWise=nope \
    --no-passes all
is 0 "$rc" "--prefer of an implementation that does not exist: still builds"
has "$tmp/err" "implementation 'nope' of ElementWise .* is not usable" \
    "  with a warning"
run "$mica" inspect "$hello" --prefer ElementWise
is 2 "$rc" "--prefer without =impl: usage error (2)"
has "$tmp/err" "expected Type=implementation" "  and says so"

echo "1..$n"
[ "$failed" -eq 0 ]
