#!/bin/sh
# tests/test_cli_messages.sh - what a newcomer is told: a folder given
# where a file belongs (manifest, input .npy, weights file) is "a
# directory"; a misspelt type in --prefer or MICA_PREFER names the known
# types; a MICA_LOG_LEVEL that names no level is an error; info logging
# says which modules were loaded from where, which device was chosen and
# why (once), and how long the build took; debug adds each step's time;
# (hello.yaml, which has no input, is built without graph passes, which
# would fold it into Constants) a preference that cannot be met is said
# once, even when the build runs
# twice (--fp16); and configure's rm leaves the folder core/ alone.
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
hello=$top_src/examples/hello.yaml
dynamic=$top_src/examples/dynamic.yaml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-msg-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" modules 2>/dev/null | grep -q '^Activation '; then
    echo "1..0 # SKIP the Activation module is not built"
    exit 0
fi
unset MICA_PREFER MICA_LOG_LEVEL

# count FILE PATTERN: the number of lines of FILE matching PATTERN
count() {
    grep -c -e "$2" "$1"
}

# ---- a folder where a file belongs ------------------------------------------
mkdir "$tmp/dir.yaml" "$tmp/dir.npy"
run "$mica" run "$tmp/dir.yaml" --output-dir "$tmp/o"
is 1 "$rc" "a folder as the manifest: exits 1"
has "$tmp/err" "^mica: cannot open manifest '.*dir.yaml': is a directory$" \
    "  saying it is a directory"
run "$mica" run "$dynamic" --input "x=$tmp/dir.npy" --output-dir "$tmp/o"
is 1 "$rc" "a folder as an input .npy: exits 1"
has "$tmp/err" "^mica: input 'x': cannot read '.*dir.npy': is a directory$" \
    "  saying it is a directory"
cat >"$tmp/w.yaml" <<EOF
mica: 1
weights:
  w: {npy: dir.npy}
layers: []
outputs: []
EOF
run "$mica" inspect "$tmp/w.yaml"
is 1 "$rc" "a folder as an npy: weights file: exits 1"
has "$tmp/err" "w.yaml:3:12: weights 'w': cannot read '.*dir.npy': is a directory$" \
    "  saying it is a directory, at its position"
cat >"$tmp/f.yaml" <<EOF
mica: 1
weights:
  f: {dtype: float32, shape: [1], file: dir.npy}
layers: []
outputs: []
EOF
run "$mica" inspect "$tmp/f.yaml"
is 1 "$rc" "a folder as a weights file: exits 1"
has "$tmp/err" "f.yaml:3:.*: weights 'f': cannot read '.*dir.npy': is a directory$" \
    "  saying it is a directory"

# ---- a misspelt type in a deploy-time choice ---------------------------------
run "$mica" run "$hello" --output-dir "$tmp/o" --prefer Activaton=reference
is 1 "$rc" "--prefer with a misspelt type: exits 1"
has "$tmp/err" "'Activaton=reference': no layer type 'Activaton' is registered (did you mean 'Activation'?); the known types are .*Activation, .*ElementWise" \
    "  naming the known types"
MICA_PREFER=Activaton=reference run "$mica" run "$hello" --output-dir "$tmp/o"
is 1 "$rc" "MICA_PREFER with a misspelt type: exits 1"
has "$tmp/err" "^mica: MICA_PREFER 'Activaton=reference': no layer type 'Activaton' is registered .*; the known types are .*Activation" \
    "  naming the variable and the known types"
MICA_PREFER=Activation run "$mica" run "$hello" --output-dir "$tmp/o"
is 1 "$rc" "MICA_PREFER without =impl: exits 1"
has "$tmp/err" "^mica: MICA_PREFER 'Activation' is not Type=implementation$" \
    "  and says so"

# ---- MICA_LOG_LEVEL ------------------------------------------------------------
MICA_LOG_LEVEL=verbose run "$mica" modules
is 1 "$rc" "MICA_LOG_LEVEL=verbose: exits 1"
has "$tmp/err" "^mica: error: MICA_LOG_LEVEL 'verbose' is not a log level (error, warning, info, debug, or 0 to 3)$" \
    "  naming the levels"
is 1 "$(wc -l <"$tmp/err")" "  in one line"
MICA_LOG_LEVEL=DEBUG run "$mica" modules
is 0 "$rc" "MICA_LOG_LEVEL=DEBUG (any case) is a level"

# ---- info and debug ------------------------------------------------------------
MICA_LOG_LEVEL=info run "$mica" run "$hello" --output-dir "$tmp/o" \
    --no-passes all
is 0 "$rc" "run at info level exits 0"
has "$tmp/err" "^mica: module activation [^ ]* loaded from .*/mica_activation.so: \([0-9]*\) of \1 creators registered$" \
    "info: which module was loaded from where"
has "$tmp/err" "^mica: device auto: \(cpu (.*cuda skipped: .*)\|cuda (the highest-ranked usable device)\)$" \
    "info: which device auto chose, and why"
has "$tmp/err" "^mica: engine built for [a-z]* in [0-9.]* ms: 5 layers, 1 profile, [0-9]* arena bytes\(, tactics timed\)\?$" \
    "info: how long the build took"
hasnt "$tmp/err" "debug:" "info: no debug lines"
MICA_LOG_LEVEL=info run "$mica" build "$hello" -o "$tmp/h.engine" --fp16
is 1 "$(count "$tmp/err" '^mica: device auto: ')" \
    "device auto is said once, even when --fp16 builds twice"
MICA_LOG_LEVEL=info run "$mica" run "$hello" --output-dir "$tmp/o" --device cpu
has "$tmp/err" "^mica: device cpu: as asked$" "info: the device asked for"
MICA_LOG_LEVEL=debug run "$mica" run "$hello" --output-dir "$tmp/o" --device cpu
has "$tmp/err" "^mica: debug: build: implementations chosen, instances made: [0-9.]* ms$" \
    "debug: each step's time"
has "$tmp/err" "^mica: debug: .*/mica_activation.so: Activation v1 (implementation 'reference') for cpu.*, priority 0$" \
    "debug: each creator registered"

# ---- a preference that cannot be met, said once ------------------------------
run "$mica" run "$hello" --output-dir "$tmp/o" --device cpu --prefer Activation=nope \
    --no-passes all
is 0 "$rc" "--prefer of an implementation that does not exist: still runs"
is 1 "$(count "$tmp/err" "implementation 'nope' of Activation .* is not usable")" \
    "  said once"
run "$mica" build "$hello" -o "$tmp/h.engine" --device cpu --fp16 --prefer Activation=nope \
    --no-passes all
is 1 "$(count "$tmp/err" "implementation 'nope' of Activation .* is not usable")" \
    "  once with --fp16 too (two builds)"

# ---- configure's rm and the folder core/ ---------------------------------------
# configure removes core dumps with `rm -f core ...` before every test; its
# own rm leaves a folder named core alone, quietly.
if [ -f "$top_src/configure" ] &&
   sed -n '/^rm ()$/,/^}$/p' "$top_src/configure" >"$tmp/rm.sh" &&
   [ -s "$tmp/rm.sh" ]; then
    mkdir "$tmp/cfg" "$tmp/cfg/core"
    : >"$tmp/cfg/conftest.err"
    (cd "$tmp/cfg" && . "$tmp/rm.sh" && rm -f core conftest.err) \
        >"$tmp/out" 2>"$tmp/err"
    is 0 "$?" "configure's rm -f core with a folder core: exits 0"
    is "" "$(cat "$tmp/err")" "  says nothing"
    ok "$([ -d "$tmp/cfg/core" ] && [ ! -e "$tmp/cfg/conftest.err" ]; echo $?)" \
        "  keeps the folder, removes the rest"
else
    skip "configure's rm -f core with a folder core" "no configure in the source tree"
    skip "  says nothing" "no configure in the source tree"
    skip "  keeps the folder, removes the rest" "no configure in the source tree"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
