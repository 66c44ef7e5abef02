#!/bin/sh
# tests/test_cli_engine.sh - engine files end to end through the `mica`
# command: `mica build` of examples/hello.yaml and of dynamic manifests,
# `mica run ENGINE` giving the outputs of `mica run MANIFEST`, `mica inspect
# ENGINE` showing what inspecting the manifest shows, --device against the
# engine's device, and the refusals that exit 1 with one line and write
# nothing: a truncated or corrupted engine, a missing module, an engine
# file that cannot be written, a bad manifest; float16, autotune, int8
# scales, tactics, and where memory formats change (reorders).
#
# With a usable GPU, engines are built for CUDA too and their outputs
# compared with the CPU's; otherwise those cases are skipped.
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
dir=$top_src/tests/manifests/dynamic

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-cli-engine-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"
# same FILE1 FILE2 DESCRIPTION: the two files are equal
same() {
    if cmp -s "$1" "$2"; then
        ok 0 "$3"
    else
        ok 1 "$3"
        diff "$1" "$2" | sed 's/^/#     /'
    fi
}
# mk FILE DTYPE DIMS VALUES: write a .npy file
mk() {
    "$npy" make "$@" || echo "# npytool make $* failed"
}
# same_outputs DIR1 DIR2 [TOL]: both hold the same .npy files with the same
# dtype, shape and values (within TOL); differences go to TAP comments.
same_outputs() {
    st=0
    if [ "$(ls -A "$1" | sort)" != "$(ls -A "$2" | sort)" ]; then
        echo "#     files differ: $(ls -A "$1" | tr '\n' ' ')| $(ls -A "$2" | tr '\n' ' ')"
        return 1
    fi
    for f in "$1"/*.npy; do
        [ -e "$f" ] || { echo "#     no .npy file in $1"; return 1; }
        b=$(basename "$f")
        if ! "$npy" cmp "$f" "$2/$b" ${3:-} >"$tmp/cmp" 2>&1; then
            st=1
            sed "s/^/#     $b: /" "$tmp/cmp"
        fi
    done
    return $st
}
# inspect_body FILE: inspect's output from the device line on (the lines
# before it name the manifest or the engine file)
inspect_body() {
    sed -n '/^device:/,$p' "$1"
}

types=$("$mica" modules 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
missing=
needs() {
    missing=
    for t in "$@"; do
        echo "$types" | grep -qx "$t" || missing="$missing $t"
    done
    [ -z "$missing" ]
}
if ! needs Constant ElementWise Activation Reduce; then
    echo "1..0 # SKIP the Constant, ElementWise, Activation and Reduce modules are not built"
    exit 0
fi

# ---- help and usage --------------------------------------------------------
run "$mica" --help
has "$tmp/out" '^  build ' "--help lists build"
run "$mica" build --help
is 0 "$rc" "build --help exits 0"
has "$tmp/out" '^usage: mica build MANIFEST -o ENGINE' "  and shows the usage"
run "$mica" run --help
has "$tmp/out" '^usage: mica run MANIFEST|ENGINE' "run --help: MANIFEST|ENGINE"
run "$mica" inspect --help
has "$tmp/out" '^usage: mica inspect MANIFEST|ENGINE' "inspect --help: MANIFEST|ENGINE"
run "$mica" build "$hello"
is 2 "$rc" "build without -o: usage error (2)"
has "$tmp/err" "^mica build: no engine file given" "  and says so"
run "$mica" build -o "$tmp/u.engine"
is 2 "$rc" "build without a manifest: usage error (2)"
run "$mica" build "$hello" -o "$tmp/u.engine" --frobnicate
is 2 "$rc" "build with an unknown option: usage error (2)"
run "$mica" build "$hello" -o "$tmp/u.engine" --device tpu
is 2 "$rc" "build --device tpu: usage error (2)"
run "$mica" build "$hello" "$hello" -o "$tmp/u.engine"
is 2 "$rc" "build of two manifests: usage error (2)"
ok $([ ! -e "$tmp/u.engine" ]; echo $?) "usage errors write no engine"

# ---- hello.yaml: build, run, inspect ---------------------------------------
mkdir "$tmp/eng"
run "$mica" build "$hello" -o "$tmp/eng/hello.engine" --device cpu \
    --no-passes all
is 0 "$rc" "build hello.yaml exits 0"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
is 1 "$(lines "$tmp/out")" "  one line on stdout"
has "$tmp/out" "^built $tmp/eng/hello.engine: 5 layers, device cpu, [1-9][0-9]* bytes$" \
    "  naming the file, its layers, device and size"
size=$(wc -c <"$tmp/eng/hello.engine" | tr -d ' ')
has "$tmp/out" " $size bytes$" "  the size is the file's ($size)"
is "hello.engine" "$(ls -A "$tmp/eng" | tr '\n' ' ' | sed 's/ $//')" \
    "  the engine file alone, no temporary file"

run "$mica" run "$hello" --device cpu --output-dir "$tmp/hm"
is 0 "$rc" "run hello.yaml"
run "$mica" run "$tmp/eng/hello.engine" --output-dir "$tmp/he"
is 0 "$rc" "run hello.engine exits 0"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
is "float32 [2] 6 7.5" "$("$npy" dump "$tmp/he/y.npy" 2>&1)" "  y.npy holds the row sums"
same_outputs "$tmp/hm" "$tmp/he"
ok $? "  the outputs are those of the manifest, exactly"
sed "s|$tmp/he/|DIR/|" "$tmp/out" >"$tmp/out.e"
"$mica" run "$hello" --device cpu --output-dir "$tmp/hm" 2>/dev/null \
    | sed "s|$tmp/hm/|DIR/|" >"$tmp/out.m"
same "$tmp/out.m" "$tmp/out.e" "  and so is what it prints"

# An engine file of format 1 (hello.yaml built before format 2) still runs.
run "$mica" run "$top_src/tests/engines/hello-v1.engine" --output-dir "$tmp/h1"
is 0 "$rc" "run of a format-1 engine file exits 0"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
same_outputs "$tmp/hm" "$tmp/h1"
ok $? "  with the outputs of the manifest"

run "$mica" run "$tmp/eng/hello.engine" --device cpu --output-dir "$tmp/he2"
is 0 "$rc" "run ENGINE --device cpu (the engine's device) exits 0"
run "$mica" run "$tmp/eng/hello.engine" --device auto --output-dir "$tmp/he3"
is 0 "$rc" "run ENGINE --device auto takes the engine's device"
run "$mica" run "$tmp/eng/hello.engine" --device cuda --output-dir "$tmp/hcu"
is 1 "$rc" "run of a CPU engine --device cuda: refused (exit 1)"
is 1 "$(lines "$tmp/err")" "  with one line"
has "$tmp/err" "^mica: $tmp/eng/hello.engine: the engine was built for cpu" \
    "  naming the engine and its device"
empty_dir "$tmp/hcu"
ok $? "  nothing written"

# The file is told by its contents, not its name.
cp "$tmp/eng/hello.engine" "$tmp/eng/hello.yaml"
run "$mica" run "$tmp/eng/hello.yaml" --output-dir "$tmp/hy"
is 0 "$rc" "an engine file named .yaml runs as an engine"
rm -f "$tmp/eng/hello.yaml"

run "$mica" inspect "$hello" --device cpu --no-passes all
cp "$tmp/out" "$tmp/insp.m"
run "$mica" inspect "$tmp/eng/hello.engine"
is 0 "$rc" "inspect hello.engine exits 0"
[ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
has "$tmp/out" "^engine: *$tmp/eng/hello.engine$" "  says engine: PATH"
hasnt "$tmp/out" '^manifest:' "  and no manifest: line"
has "$tmp/out" '^device: *cpu' "  the device"
has "$tmp/out" 'add  *ElementWise  *1  *\(reference\|onednn\|vec\)  *x, b -> s' \
    "  a layer with its implementation and tensors"
inspect_body "$tmp/insp.m" >"$tmp/body.m"
inspect_body "$tmp/out" >"$tmp/body.e"
same "$tmp/body.m" "$tmp/body.e" \
    "  the same layers, implementations, tensors and memory as the manifest"
run "$mica" inspect "$tmp/eng/hello.engine" --device cuda
is 1 "$rc" "inspect of a CPU engine --device cuda: refused (exit 1)"
is 1 "$(lines "$tmp/err")" "  with one line"

# A second build replaces the file whole.
run "$mica" build "$hello" -o "$tmp/eng/hello.engine" --device cpu \
    --no-passes all
is 0 "$rc" "build again over the engine exits 0"
is "hello.engine" "$(ls -A "$tmp/eng" | tr '\n' ' ' | sed 's/ $//')" \
    "  the engine file alone, no temporary file"
run "$mica" build "$hello" --output="$tmp/eng/hello2.engine" --device=cpu \
    --no-passes=all
is 0 "$rc" "build --output=FILE --device=cpu"
same "$tmp/eng/hello.engine" "$tmp/eng/hello2.engine" \
    "  two builds of one manifest write the same bytes"

# ---- dynamic manifests -----------------------------------------------------
# dyn NAME MANIFEST ENGINE ARGS...: run MANIFEST and ENGINE with ARGS; both
# succeed and give the same outputs and the same report.
dyn() {
    name=$1
    manifest=$2
    engine=$3
    shift 3
    rm -rf "$tmp/m-$name" "$tmp/e-$name"
    run "$mica" run "$manifest" --device cpu --output-dir "$tmp/m-$name" "$@"
    sed "s|$tmp/m-$name/|DIR/|" "$tmp/out" >"$tmp/out.m"
    if [ "$rc" -ne 0 ]; then
        ok 1 "$name: the manifest runs"
        sed 's/^/#     | /' "$tmp/err"
        return
    fi
    run "$mica" run "$engine" --output-dir "$tmp/e-$name" "$@"
    sed "s|$tmp/e-$name/|DIR/|" "$tmp/out" >"$tmp/out.e"
    if [ "$rc" -ne 0 ]; then
        ok 1 "$name: the engine runs"
        sed 's/^/#     | /' "$tmp/err"
        return
    fi
    same_outputs "$tmp/m-$name" "$tmp/e-$name"
    ok $? "$name: the engine gives the manifest's outputs"
    same "$tmp/out.m" "$tmp/out.e" "$name: and the same report"
}
# dyn_refused NAME MANIFEST ENGINE ARGS...: both refuse with the same line
# and write nothing.
dyn_refused() {
    name=$1
    manifest=$2
    engine=$3
    shift 3
    run "$mica" run "$manifest" --device cpu --output-dir "$tmp/m-$name" "$@"
    cp "$tmp/err" "$tmp/err.m"
    run "$mica" run "$engine" --output-dir "$tmp/e-$name" "$@"
    is 1 "$rc" "$name: the engine refuses it (exit 1)"
    is 1 "$(lines "$tmp/err")" "$name: with one line"
    empty_dir "$tmp/e-$name"
    ok $? "$name: nothing written"
    same "$tmp/err.m" "$tmp/err" "$name: the manifest's message"
}
# built NAME MANIFEST: build it for the CPU into $tmp/NAME.engine, and
# check that inspecting the engine shows what inspecting the manifest does.
built() {
    run "$mica" build "$2" -o "$tmp/$1.engine" --device cpu
    is 0 "$rc" "$1: build exits 0"
    [ "$rc" -eq 0 ] || { sed 's/^/#     | /' "$tmp/err"; return 1; }
    run "$mica" inspect "$2" --device cpu
    inspect_body "$tmp/out" >"$tmp/body.m"
    run "$mica" inspect "$tmp/$1.engine"
    is 0 "$rc" "$1: inspect ENGINE exits 0"
    inspect_body "$tmp/out" >"$tmp/body.e"
    same "$tmp/body.m" "$tmp/body.e" \
        "$1: inspect ENGINE shows the manifest's layers, tensors, symbols, profiles"
    return 0
}

if built batch "$dir/batch.yaml"; then
    mk "$tmp/b1.npy" float32 1x4 1,1,1,1
    mk "$tmp/b3.npy" float32 3x4 1,1,1,1,2,2,2,2,3,3,3,3
    mk "$tmp/b8.npy" float32 8x4 "$(seq -s, 1 32)"
    mk "$tmp/b9.npy" float32 9x4 "$(seq -s, 1 36)"
    dyn batch1 "$dir/batch.yaml" "$tmp/batch.engine" --input "x=$tmp/b1.npy"
    dyn batch3 "$dir/batch.yaml" "$tmp/batch.engine" --input "x=$tmp/b3.npy"
    is "float32 [3] 10 20 30" "$("$npy" dump "$tmp/e-batch3/y.npy" 2>&1)" \
        "batch3: y from the engine"
    dyn batch8 "$dir/batch.yaml" "$tmp/batch.engine" --input "x=$tmp/b8.npy"
    dyn_refused batch9 "$dir/batch.yaml" "$tmp/batch.engine" --input "x=$tmp/b9.npy"
    has "$tmp/err" "profile 0's \[1\.\.8, 4\]" "batch9: names the profile's range"
fi

if built two "$dir/two_profiles.yaml"; then
    mk "$tmp/t3.npy" float32 3x2 1,2,3,4,5,6
    mk "$tmp/t10.npy" float32 10x2 "$(seq -s, 1 20)"
    dyn two3 "$dir/two_profiles.yaml" "$tmp/two.engine" --input "x=$tmp/t3.npy"
    dyn two10 "$dir/two_profiles.yaml" "$tmp/two.engine" --input "x=$tmp/t10.npy"
    has "$tmp/out.e" '^profile: 1$' "two10: the engine picks profile 1"
    dyn two10p "$dir/two_profiles.yaml" "$tmp/two.engine" --profile 1 \
        --input "x=$tmp/t10.npy"
    dyn_refused two10p0 "$dir/two_profiles.yaml" "$tmp/two.engine" --profile 0 \
        --input "x=$tmp/t10.npy"
fi

if needs Shuffle; then
    if built shape "$dir/shape_input.yaml"; then
        mk "$tmp/x6.npy" float32 6 1,2,3,4,5,6
        mk "$tmp/n23.npy" int32 2 2,3
        mk "$tmp/n32.npy" int32 2 3,2
        mk "$tmp/n121.npy" int32 2 12,1
        dyn shape23 "$dir/shape_input.yaml" "$tmp/shape.engine" \
            --input "x=$tmp/x6.npy" --input "n=$tmp/n23.npy"
        dyn shape32 "$dir/shape_input.yaml" "$tmp/shape.engine" \
            --input "x=$tmp/x6.npy" --input "n=$tmp/n32.npy"
        is "float32 [3, 2] 1 2 3 4 5 6" "$("$npy" dump "$tmp/e-shape32/y.npy" 2>&1)" \
            "shape32: y from the engine"
        dyn_refused shape121 "$dir/shape_input.yaml" "$tmp/shape.engine" \
            --input "x=$tmp/x6.npy" --input "n=$tmp/n121.npy"
    fi
else
    skip "shape-tensor input" "no module for$missing"
fi

if needs Shape Shuffle; then
    if built like "$dir/reshape_like.yaml"; then
        mk "$tmp/x43.npy" float32 4x3 0,0,0,0,0,0,0,0,0,0,0,0
        mk "$tmp/y12.npy" float32 12 "$(seq -s, 1 12)"
        dyn like "$dir/reshape_like.yaml" "$tmp/like.engine" \
            --input "x=$tmp/x43.npy" --input "y=$tmp/y12.npy"
        is "int32 [2] 4 3" "$("$npy" dump "$tmp/e-like/s.npy" 2>&1)" \
            "like: the output for shapes from the engine"
    fi
else
    skip "Shape + Shuffle" "no module for$missing"
fi

if needs Slice Concatenation; then
    mk "$tmp/e03.npy" float32 0x3 ""
    mk "$tmp/x23.npy" float32 2x3 1,2,3,4,5,6
    if built eslice "$dir/empty_slice.yaml"; then
        dyn eslice "$dir/empty_slice.yaml" "$tmp/eslice.engine" \
            --input "x=$tmp/x23.npy" --input "v=$tmp/e03.npy"
    fi
    if built econcat "$dir/empty_concat.yaml"; then
        dyn econcat "$dir/empty_concat.yaml" "$tmp/econcat.engine" \
            --input "a=$tmp/e03.npy" --input "b=$tmp/x23.npy"
    fi
else
    skip "empty Slice and Concatenation" "no module for$missing"
fi

# ---- a damaged engine: exit 1, one line, nothing written -------------------
eng=$tmp/eng/hello.engine
size=$(wc -c <"$eng" | tr -d ' ')
# refused_engine NAME FILE: run and inspect of FILE both refuse it.
refused_engine() {
    rm -rf "$tmp/bad-$1"
    run "$mica" run "$2" --output-dir "$tmp/bad-$1"
    st=0
    [ "$rc" -eq 1 ] || st=1
    [ "$(lines "$tmp/err")" -eq 1 ] || st=1
    grep -q '^mica: ' "$tmp/err" || st=1
    empty_dir "$tmp/bad-$1" || st=1
    [ "$st" -eq 0 ] || { echo "#     exit $rc"; sed 's/^/#     | /' "$tmp/err"; }
    ok "$st" "$1: run refuses it (exit 1, one line, nothing written)"
    cp "$tmp/err" "$tmp/err.run"
    run "$mica" inspect "$2"
    st=0
    [ "$rc" -eq 1 ] || st=1
    [ "$(lines "$tmp/err")" -eq 1 ] || st=1
    [ -s "$tmp/out" ] && st=1
    [ "$st" -eq 0 ] || { echo "#     exit $rc"; sed 's/^/#     | /' "$tmp/err"; }
    ok "$st" "$1: inspect refuses it (exit 1, one line, nothing printed)"
    cp "$tmp/err.run" "$tmp/err"
}

half=$((size / 2))
for cut in 0 4 8 12 16 24 32 48 64 $half $((size - 8)) $((size - 1)); do
    [ "$cut" -lt "$size" ] || continue
    head -c "$cut" "$eng" >"$tmp/cut.engine"
    refused_engine "truncated to $cut of $size bytes" "$tmp/cut.engine"
done
head -c 64 "$eng" >"$tmp/cut.engine"
has "$tmp/err" "$tmp/cut.engine" "a truncated engine: the message names the file"

# flip FILE OFFSET: invert the bits of the byte at OFFSET
flip() {
    b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "\\$(printf '%03o' $((255 - b)))" \
        | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
for off in 0 5 8 12 16 20 24 40 $half $((size - 12)) $((size - 1)); do
    [ "$off" -lt "$size" ] || continue
    cp "$eng" "$tmp/flip.engine"
    flip "$tmp/flip.engine" "$off"
    if cmp -s "$eng" "$tmp/flip.engine"; then
        ok 1 "byte $off flipped: the file changed"
        continue
    fi
    refused_engine "byte $off of $size flipped" "$tmp/flip.engine"
done
cp "$eng" "$tmp/flip.engine"
flip "$tmp/flip.engine" "$half"
run "$mica" run "$tmp/flip.engine" --output-dir "$tmp/bad-flip"
has "$tmp/err" "$tmp/flip.engine" "a corrupted engine: the message names the file"

# ---- a missing module ------------------------------------------------------
mkdir "$tmp/nomods" "$tmp/noreduce"
for f in "$MICA_MODULE_DIR"/*.so; do
    case $(basename "$f") in
    mica_reduce.so) ;;
    *) cp "$f" "$tmp/noreduce/" ;;
    esac
done
run env MICA_MODULE_DIR="$tmp/noreduce" "$mica" run "$eng" --output-dir "$tmp/nored"
is 1 "$rc" "engine without the Reduce module: refused (exit 1)"
is 1 "$(grep -c '^mica: ' "$tmp/err")" "  with one line"
has "$tmp/err" "'total'" "  naming the layer"
has "$tmp/err" "Reduce" "  and its type"
empty_dir "$tmp/nored"
ok $? "  nothing written"
run env MICA_MODULE_DIR="$tmp/noreduce" "$mica" inspect "$eng"
is 1 "$rc" "inspect without the Reduce module: refused (exit 1)"
run env MICA_MODULE_DIR="$tmp/nomods" "$mica" run "$eng" --output-dir "$tmp/nomod"
is 1 "$rc" "engine with no modules at all: refused (exit 1)"
is 1 "$(lines "$tmp/err")" "  with one line"
has "$tmp/err" "layer '[a-z]*'.*\(Constant\|ElementWise\|Activation\|Reduce\)" \
    "  naming a layer and its type"
empty_dir "$tmp/nomod"
ok $? "  nothing written"
run env MICA_MODULE_DIR="$tmp/nomods" "$mica" run "$eng" \
    --module-path "$MICA_MODULE_DIR" --output-dir "$tmp/mp"
is 0 "$rc" "--module-path gives the engine its modules"
same_outputs "$tmp/hm" "$tmp/mp"

# A deploy-time swap of a module file: another file that provides the same
# (type, version, implementation) needs no rebuild.
mkdir "$tmp/swapped"
cp "$tmp/noreduce/"*.so "$tmp/swapped/"
cp "$MICA_MODULE_DIR/mica_reduce.so" "$tmp/swapped/vendor_reduce_build2.so"
run env MICA_MODULE_DIR="$tmp/swapped" "$mica" run "$eng" --output-dir "$tmp/sw"
is 0 "$rc" "the Reduce module swapped for another file: the engine runs"
same_outputs "$tmp/hm" "$tmp/sw"
ok $? "  with the same outputs"
ok $? "  and it gives the manifest's outputs"

# ---- build errors: exit 1, one line, no engine file ------------------------
run "$mica" build "$hello" -o "$tmp/nowhere/x.engine" --device cpu
is 1 "$rc" "build into a missing folder: exits 1"
is 1 "$(lines "$tmp/err")" "  with one line"
ok $([ ! -e "$tmp/nowhere" ]; echo $?) "  nothing created"
: >"$tmp/plain"
run "$mica" build "$hello" -o "$tmp/plain/x.engine" --device cpu
is 1 "$rc" "build below a plain file: exits 1"
is 1 "$(lines "$tmp/err")" "  with one line"
before=$(ls -A "$tmp/eng" | tr '\n' ' ')
run "$mica" build "$hello" -o "$tmp/eng" --device cpu
is 1 "$rc" "build onto a folder: exits 1"
has "$tmp/err" "folder" "  and says so"
is "$before" "$(ls -A "$tmp/eng" | tr '\n' ' ')" \
    "  the folder is left as it was"
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$tmp/ro"
    chmod 555 "$tmp/ro"
    run "$mica" build "$hello" -o "$tmp/ro/x.engine" --device cpu
    is 1 "$rc" "build into a read-only folder: exits 1"
    is 1 "$(lines "$tmp/err")" "  with one line"
    empty_dir "$tmp/ro"
    ok $? "  nothing written"
    chmod 755 "$tmp/ro"
else
    skip "build into a read-only folder" "running as root"
fi

cat >"$tmp/bad.yaml" <<'EOF'
mica: 1
inputs:
  x: {dtype: float32, shape: [2, 3]}
layers:
  - {name: add, type: ElementWise, inputs: [x, x], outputs: [y], params: {op: summ}}
outputs: [y]
EOF
run "$mica" build "$tmp/bad.yaml" -o "$tmp/bad.engine"
is 1 "$rc" "build of a bad manifest: exits 1"
is 1 "$(lines "$tmp/err")" "  with one line"
has "$tmp/err" "^mica: $tmp/bad.yaml:5:79: layer 'add': param 'op'" \
    "  naming file:line:col, the layer and the param"
ok $([ ! -e "$tmp/bad.engine" ]; echo $?) "  no engine file"
cp "$eng" "$tmp/keep.engine"
run "$mica" build "$tmp/bad.yaml" -o "$tmp/keep.engine"
is 1 "$rc" "a failed build over an existing engine: exits 1"
same "$eng" "$tmp/keep.engine" "  the existing engine is left as it was"
cat >"$tmp/nobuild.yaml" <<'EOF'
mica: 1
inputs:
  x: {dtype: float32, shape: [2, 3]}
  z: {dtype: float32, shape: [4, 5]}
layers:
  - {name: add, type: ElementWise, inputs: [x, z], outputs: [y], params: {op: sum}}
outputs: [y]
EOF
run "$mica" build "$tmp/nobuild.yaml" -o "$tmp/nobuild.engine"
is 1 "$rc" "build of a manifest whose shapes do not agree: exits 1"
is 1 "$(lines "$tmp/err")" "  with one line"
has "$tmp/err" "'add'" "  naming the layer"
ok $([ ! -e "$tmp/nobuild.engine" ]; echo $?) "  no engine file"
run "$mica" build "$tmp/none.yaml" -o "$tmp/none.engine"
is 1 "$rc" "build of a missing manifest: exits 1"
ok $([ ! -e "$tmp/none.engine" ]; echo $?) "  no engine file"
run "$mica" build "$eng" -o "$tmp/again.engine"
is 1 "$rc" "build of an engine file: exits 1"
has "$tmp/err" "is an engine file, not a manifest" "  and says so"
cp "$hello" "$tmp/self.yaml"
cp "$top_src/examples/hello_x.npy" "$tmp/"
run "$mica" build "$tmp/self.yaml" -o "$tmp/self.yaml"
is 1 "$rc" "build -o the manifest itself: exits 1"
same "$hello" "$tmp/self.yaml" "  the manifest is left as it was"

# ---- CUDA ------------------------------------------------------------------
cuda=0
if "$mica" run "$hello" --device cuda --output-dir "$tmp/probe" >/dev/null 2>&1; then
    cuda=1
fi
if [ "$cuda" -eq 1 ]; then
    run "$mica" build "$hello" -o "$tmp/hello-cuda.engine" --device cuda
    is 0 "$rc" "cuda: build hello.yaml exits 0"
    has "$tmp/out" "device cuda" "cuda: the engine is for cuda"
    run "$mica" run "$tmp/hello-cuda.engine" --output-dir "$tmp/hc"
    is 0 "$rc" "cuda: run the CUDA engine"
    [ "$rc" -eq 0 ] || sed 's/^/#     | /' "$tmp/err"
    same_outputs "$tmp/hm" "$tmp/hc" 1e-5
    ok $? "cuda: the CUDA engine gives the CPU's outputs"
    run "$mica" inspect "$tmp/hello-cuda.engine"
    has "$tmp/out" '^device: *cuda' "cuda: inspect shows the device"
    run "$mica" run "$tmp/hello-cuda.engine" --device cpu --output-dir "$tmp/hcc"
    is 1 "$rc" "cuda: the CUDA engine --device cpu: refused (exit 1)"
    has "$tmp/err" "built for cuda" "  and says why"
    run "$mica" build "$dir/batch.yaml" -o "$tmp/batch-cuda.engine" --device cuda
    is 0 "$rc" "cuda: build batch.yaml exits 0"
    for b in b1 b3 b8; do
        rm -rf "$tmp/bc-$b"
        run "$mica" run "$tmp/batch-cuda.engine" --input "x=$tmp/$b.npy" \
            --output-dir "$tmp/bc-$b"
        st=$rc
        [ "$st" -ne 0 ] && sed 's/^/#     | /' "$tmp/err"
        [ "$st" -eq 0 ] && { same_outputs "$tmp/e-batch${b#b}" "$tmp/bc-$b" 1e-5 || st=1; }
        ok "$st" "cuda: batch engine with x of $b gives the CPU's outputs"
    done
else
    skip "cuda: build and run engines for CUDA" "no usable GPU"
fi

# ---- float16 ----------------------------------------------------------------
run "$mica" build "$hello" -o "$tmp/h16.engine" --fp16 --device cpu \
    --no-passes all
is 0 "$rc" "build --fp16 exits 0"
run "$mica" inspect "$tmp/h16.engine"
has "$tmp/out" '^  [0-9]  add .*runs in float16' "  ElementWise runs in float16"
has "$tmp/out" '^  [0-9]  cast:y .*a cast inserted for float16' \
    "  with a cast back to the output's float32"
mkdir -p "$tmp/o16" "$tmp/o32"
run "$mica" run "$tmp/h16.engine" --output-dir "$tmp/o16"
run "$mica" run "$hello" --device cpu --output-dir "$tmp/o32"
same_outputs "$tmp/o32" "$tmp/o16" 1e-2
ok $? "  its outputs are float32, within float16's precision of float32's"
sed -e 's/^name: hello$/name: hello\nprecision: [float32, float16]/' \
    -e 's/^  - {name: relu, \(.*\)}$/  - {name: relu, \1, precision: float32}/' \
    "$hello" >"$tmp/h16.yaml"
cp "$top_src/examples/hello_x.npy" "$tmp/"
run "$mica" inspect "$tmp/h16.yaml" --device cpu --no-passes all
has "$tmp/out" '^  [0-9]  add .*runs in float16' \
    "manifest precision [float32, float16]: float16 where allowed"
has "$tmp/out" '^  [0-9]  relu .*the highest priority for cpu$' \
    "  but not for a layer with precision: float32"

# ---- autotune ---------------------------------------------------------------
# tests/choice has three CPU implementations of Twin whose speeds run
# against their priorities: the autotuner must pick the fastest, "alt".
cat >"$tmp/twin.yaml" <<'EOY'
mica: 1
device: cpu
inputs:
  x: {dtype: float32, shape: [64]}
layers:
  - {name: twin, type: Twin, inputs: [x], outputs: [y]}
outputs: [y]
EOY
run "$mica" build "$tmp/twin.yaml" -o "$tmp/twin.engine" \
    --module-path "$top_build/tests/choice/.libs"
run "$mica" inspect "$tmp/twin.engine" --module-path "$top_build/tests/choice/.libs"
has "$tmp/out" '^  0  twin .* fast ' "without --autotune: the highest priority"
run "$mica" build "$tmp/twin.yaml" -o "$tmp/twin.engine" --autotune \
    --module-path "$top_build/tests/choice/.libs"
is 0 "$rc" "build --autotune exits 0"
run "$mica" inspect "$tmp/twin.engine" --module-path "$top_build/tests/choice/.libs"
has "$tmp/out" '^  0  twin .* alt .*the fastest measured: fast [0-9.]* us' \
    "  keeps the fastest, and the engine says why with the times"
# The timing cache written beside a planted link at the name it once
# used (NAME.tmp): the link's target stays as it was.
mkdir "$tmp/tc" && printf keep >"$tmp/tc/victim" &&
    ln -s "$tmp/tc/victim" "$tmp/tc/cache.tmp"
run "$mica" build "$tmp/twin.yaml" -o "$tmp/twin.engine" --autotune \
    --timing-cache "$tmp/tc/cache" --module-path "$top_build/tests/choice/.libs"
is 0 "$rc" "build --timing-cache beside a planted link exits 0"
is "keep" "$(cat "$tmp/tc/victim")" "  the link's target is untouched"
has "$tmp/tc/cache" '^mica timing cache 1$' "  the timing cache is in place"
is "" "$(ls -A "$tmp/tc" | grep '^\.')" "  no temporary file is left"

# ---- int8 scales ------------------------------------------------------------
cat >"$tmp/dq.yaml" <<'EOY'
mica: 1
device: cpu
inputs:
  x: {dtype: int8, shape: [4]}
layers:
  - {name: dq, type: Dequant, inputs: [x], outputs: [y]}
outputs: [y]
scales: {x: 0.5, y: 0.25}
EOY
"$npy" make "$tmp/q.npy" int8 4 -4,2,7,100
run "$mica" build "$tmp/dq.yaml" -o "$tmp/dq.engine" \
    --module-path "$top_build/tests/choice/.libs"
run "$mica" run "$tmp/dq.engine" --input "x=$tmp/q.npy" --output-dir "$tmp/dq" \
    --module-path "$top_build/tests/choice/.libs"
is 0 "$rc" "scales: a manifest's int8 scales, through an engine file"
is "float32 [4] -8 4 14 200" "$("$npy" dump "$tmp/dq/y.npy" 2>&1)" \
    "  reach the layer's descriptors (x * 0.5 / 0.25)"
sed 's/^scales: {x: 0.5, y: 0.25}$/scales: {x: -1}/' "$tmp/dq.yaml" >"$tmp/dq2.yaml"
run "$mica" inspect "$tmp/dq2.yaml" --module-path "$top_build/tests/choice/.libs"
is 1 "$rc" "a negative scale is refused"
has "$tmp/err" "dq2.yaml:8:13: scales: 'x' needs a positive number" \
    "  with its line and column"

# ---- tactics (tests/abi2's TacticAdd: y = x + its tactic) -------------------
cat >"$tmp/ta.yaml" <<'EOY'
mica: 1
device: cpu
inputs:
  x: {dtype: float32, shape: [4]}
layers:
  - {name: add, type: TacticAdd, implementation: reference, inputs: [x], outputs: [y]}
outputs: [y]
EOY
"$npy" make "$tmp/ta.npy" float32 4 1,2,3,4
abi2="$top_build/tests/abi2/.libs"
run "$mica" build "$tmp/ta.yaml" -o "$tmp/ta.engine" --autotune \
    --module-path "$abi2"
run "$mica" inspect "$tmp/ta.engine" --module-path "$abi2"
has "$tmp/out" "^  0  add  *TacticAdd  *1  *reference tactic 1  .*the fastest tactic measured: tactic 2 [0-9.]* us, tactic 1 [0-9.]* us$" \
    "tactics: inspect shows the tactic kept and the time of each"
run "$mica" run "$tmp/ta.engine" --input "x=$tmp/ta.npy" --output-dir "$tmp/ta" \
    --module-path "$abi2"
is "float32 [4] 2 3 4 5" "$("$npy" dump "$tmp/ta/y.npy" 2>&1)" \
    "  and the engine runs it (x + 1)"

# ---- memory formats (tests/abi2's FmtBoth: either format; FmtLinear) --------
# In float16 the FmtBoth run channels last, made so by the cast of x; a
# reorder goes before FmtLinear: inspect says where each format changes.
cat >"$tmp/fmt.yaml" <<'EOY'
mica: 1
device: cpu
inputs:
  x: {dtype: float32, shape: [2, 3, 2, 4]}
layers:
  - {name: both1, type: FmtBoth, inputs: [x], outputs: [a]}
  - {name: both2, type: FmtBoth, inputs: [a], outputs: [b]}
  - {name: lin, type: FmtLinear, inputs: [b], outputs: [y]}
outputs: [y]
EOY
run "$mica" build "$tmp/fmt.yaml" -o "$tmp/fmt.engine" --fp16 \
    --module-path "$abi2"
run "$mica" inspect "$tmp/fmt.engine" --module-path "$abi2"
has "$tmp/out" "^memory formats: 3 of 7 tensors channels last; 2 layers change a tensor's format (reorders):$" \
    "formats: inspect counts the channels-last tensors and the reorders"
has "$tmp/out" "^  cast:x@float16  *x (float32, linear, network input)  *x@float16 (float16, hwc), read by 'both1'$" \
    "  the cast that makes x channels last"
has "$tmp/out" "^  reorder:b@float16@linear  *b@float16 (float16, hwc, made by 'both2')  *b@float16@linear (float16, linear), read by 'lin'$" \
    "  the reorder before the linear-only layer, between whom"
run "$mica" inspect "$tmp/fmt.yaml" --module-path "$abi2"
hasnt "$tmp/out" "memory formats" "  nothing about formats where all is linear"

echo "1..$n"
[ "$failed" -eq 0 ]
