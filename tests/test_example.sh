#!/bin/sh
# tests/test_example.sh - the out-of-tree module of examples/bar, as a
# third party would build and use it:
#
#   1. install the project into a scratch DESTDIR;
#   2. find the installed mica-module.pc and build bar.so against the
#      INSTALLED headers only (cc -std=c99 -pedantic -Werror), once by
#      hand and once with the example's own Makefile;
#   3. run examples/bar/bar.yaml with the build tree's `mica` command,
#      finding bar.so through MICA_MODULE_PATH and no other module, and
#      compare the outputs (written and read back with tests/npy_fixture,
#      which shares no code with the tool's .npy reader and writer), and
#      with and without graph passes (mica compare --a passes=none);
#   4. check `mica modules` lists it, and that without MICA_MODULE_PATH
#      the run fails with a message and writes nothing;
#   5. build examples/swish (a layer written with the module kit, with a
#      CUDA kernel) with its Makefile through pkg-config: CPU-only, and,
#      when the installed mica has CUDA, with its kernel (nvcc, the static
#      CUDA runtime: no GPU library among its DT_NEEDED); run it and
#      compare with x * sigmoid(x).
#
# Environment (from the top-level Makefile.am): MICA_TOP_BUILDDIR,
# MICA_TOP_SRCDIR, MICA_BIN.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_TOP_SRCDIR not set (run through make check)"
    exit 0
fi
if [ -n "${MICA_SAN_CFLAGS:-}" ]; then
    # Out-of-tree builds use the system compiler, which cannot link
    # against an instrumented library; the main build checks them.
    echo "1..0 # SKIP a sanitizer build: the installed library is instrumented"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}
npy=$top_build/tests/npy_fixture
CC=${CC:-cc}
for tool in "$CC" pkg-config; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done

echo "1..31"
. "$top_src/tests/tap.sh"

# show FILE: a log as TAP comments
show() {
    sed -e 's/^/# /' "$1" | tail -n 20
}

bail() {
    echo "Bail out! $*"
    exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_example.XXXXXX") || bail "mktemp failed"
tmp=$(cd "$tmp" && pwd -P)
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
mkdir "$tmp/plugins" "$tmp/build" "$tmp/out" "$tmp/out2"

# ---- 1. install -----------------------------------------------------------
# A make of its own: without the jobserver and flags of the make running
# the tests.
(
    unset MAKEFLAGS MFLAGS MAKELEVEL
    cd "$top_build" && ${MAKE:-make} install DESTDIR="$tmp/root"
) >"$tmp/install.log" 2>&1
st=$?
ok $st "make install DESTDIR=... succeeds"
[ $st -eq 0 ] || { show "$tmp/install.log"; bail "cannot install"; }

# ---- 2. build against the installed headers -------------------------------
pc=$(find "$tmp/root" -name mica-module.pc | head -n 1)
[ -n "$pc" ] || bail "no mica-module.pc installed"
PKG_CONFIG_LIBDIR=$(dirname "$pc")
PKG_CONFIG_PATH=
PKG_CONFIG_SYSROOT_DIR=$tmp/root
PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR \
    PKG_CONFIG_ALLOW_SYSTEM_CFLAGS
cflags=$(pkg-config --cflags mica-module)
inc=$(echo "$cflags" | sed -n 's/^ *-I\([^ ]*\).*/\1/p')
case $inc in
"$tmp/root"/*) [ -f "$inc/mica/module.h" ]; st=$? ;;
*) st=1 ;;
esac
ok $st "pkg-config --cflags mica-module points at the installed headers"
[ $st -eq 0 ] || echo "#   cflags: $cflags"

cat >"$tmp/headers.c" <<'EOC'
#include <mica/mica.h>
#include <mica/module.h>
int main(void) { return mica_dtype_size(MICA_FLOAT32) == 4 ? 0 : 1; }
EOC
"$CC" -std=c99 -pedantic -Wall -Wextra -Werror $cflags -c \
    -o "$tmp/headers.o" "$tmp/headers.c" >"$tmp/headers.log" 2>&1
st=$?
ok $st "the installed headers compile with -std=c99 -pedantic -Werror"
[ $st -eq 0 ] || show "$tmp/headers.log"

"$CC" -std=c99 -pedantic -Wall -Wextra -Werror $cflags -shared -fPIC \
    -o "$tmp/plugins/bar.so" "$top_src/examples/bar/bar.c" \
    >"$tmp/cc.log" 2>&1
st=$?
ok $st "bar.so builds against the installed headers"
[ $st -eq 0 ] || { show "$tmp/cc.log"; bail "cannot build the example"; }

(
    unset MAKEFLAGS MFLAGS MAKELEVEL
    cd "$tmp/build" &&
        ${MAKE:-make} -f "$top_src/examples/bar/Makefile" \
            CFLAGS="-O2 -Wall -Wextra -Werror" &&
        test -f bar.so
) >"$tmp/make.log" 2>&1
st=$?
ok $st "the example's Makefile builds bar.so out of tree"
[ $st -eq 0 ] || show "$tmp/make.log"

# ---- 3. run the manifest ----------------------------------------------------
"$npy" write "$tmp/x0.npy" float32 2x3 1 2 3 4 5 6 &&
    "$npy" write "$tmp/x1.npy" float32 1x3 7 8 9
st=$?
ok $st "input files written"

MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/plugins \
    "$mica" run "$top_src/examples/bar/bar.yaml" \
    --input "x0=$tmp/x0.npy" --input "x1=$tmp/x1.npy" \
    --output-dir "$tmp/out" >"$tmp/run.log" 2>&1
st=$?
ok $st "mica run bar.yaml finds BarPlugin through MICA_MODULE_PATH"
[ $st -eq 0 ] || show "$tmp/run.log"

is "float32 [1,3] 7 8 9" "$("$npy" print "$tmp/out/copy.npy" 2>&1)" \
    "copy is input 1"
is "float32 [3,3] 1 2 3 4 5 6 7 8 9" \
    "$("$npy" print "$tmp/out/concat.npy" 2>&1)" \
    "concat is input 0 then input 1 along the first dimension"

# ---- 3b. with a runtime dimension ---------------------------------------------
"$npy" write "$tmp/x3.npy" float32 3x3 1 2 3 4 5 6 10 11 12
MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/plugins \
    "$mica" run "$top_src/examples/bar/bar_dynamic.yaml" \
    --input "x0=$tmp/x3.npy" --input "x1=$tmp/x1.npy" \
    --output-dir "$tmp/outd" >"$tmp/rund.log" 2>&1
st=$?
ok $st "mica run bar_dynamic.yaml: BarPlugin with a runtime dimension"
[ $st -eq 0 ] || show "$tmp/rund.log"
is "float32 [4,3] 1 2 3 4 5 6 10 11 12 7 8 9" \
    "$("$npy" print "$tmp/outd/concat.npy" 2>&1)" \
    "  concat has N+1 = 4 rows"
MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/plugins \
    "$mica" inspect "$top_src/examples/bar/bar_dynamic.yaml" \
    >"$tmp/inspect.log" 2>&1
grep -q "concat .*\[N+1, 3\]" "$tmp/inspect.log"
st=$?
ok $st "  and inspect shows its shape as [N+1, 3]"
[ $st -eq 0 ] || show "$tmp/inspect.log"

# ---- 3b'. graph passes change nothing of its outputs (tests/test_passes.sh
# does this for the other networks of the tree)
MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/plugins \
    "$mica" compare "$top_src/examples/bar/bar_dynamic.yaml" \
    --a passes=none,device=cpu --b passes=all,device=cpu \
    >"$tmp/cmp.log" 2>&1
st=$?
ok $st "mica compare bar_dynamic.yaml: the same outputs with and without passes"
[ $st -eq 0 ] || show "$tmp/cmp.log"

# ---- 3c. an application against the installed library ---------------------
"$CC" -std=c99 -pedantic -Wall -Wextra -Werror \
    $(pkg-config --cflags mica) -o "$tmp/app" "$top_src/examples/app/app.c" \
    $(pkg-config --libs mica) >"$tmp/app-cc.log" 2>&1
st=$?
ok $st "examples/app builds against the installed library (pkg-config mica)"
[ $st -eq 0 ] || show "$tmp/app-cc.log"
moddir=$(dirname "$(find "$tmp/root" -name 'mica_elementwise.so' | head -n 1)")
libdir=$(dirname "$(find "$tmp/root" -name 'libmica.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    MICA_MODULE_DIR=$moddir MICA_MODULE_PATH= \
    "$tmp/app" "$top_src/examples/dynamic.yaml" "$tmp/app.engine" \
    >"$tmp/app.log" 2>&1
st=$?
ok $st "it builds, saves, loads and runs an engine"
[ $st -eq 0 ] || show "$tmp/app.log"
# x rows: [-1 0 1] [2 -1 0] [1 2 -1] [0 1 2] [-1 0 1]; + bias [1 -2 3]:
# [0 -2 4] [3 -3 3] [2 0 2] [1 -1 5] [0 -2 4]; relu, row sums: 4 6 4 6 4.
is "a: 4 6
b: 4 6 4 6 4" "$(cat "$tmp/app.log")" \
    "  with host data in one context and step by step in another"

# ---- 4. listing and failure -------------------------------------------------
MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/plugins "$mica" modules \
    >"$tmp/modules.log" 2>&1
st=$?
if [ $st -eq 0 ] && grep BarPlugin "$tmp/modules.log" |
    grep -q "$tmp/plugins/bar.so"; then
    st=0
else
    st=1
fi
ok $st "mica modules lists BarPlugin with its file"
[ $st -eq 0 ] || show "$tmp/modules.log"

MICA_MODULE_DIR= MICA_MODULE_PATH= \
    "$mica" run "$top_src/examples/bar/bar.yaml" \
    --input "x0=$tmp/x0.npy" --input "x1=$tmp/x1.npy" \
    --output-dir "$tmp/out2" >"$tmp/fail.log" 2>&1
st=$?
[ $st -ne 0 ]
ok $? "without the module, mica run fails"
grep -q BarPlugin "$tmp/fail.log"
st=$?
ok $st "  and says BarPlugin is unknown"
[ $st -eq 0 ] || show "$tmp/fail.log"
[ -z "$(ls -A "$tmp/out2")" ]
ok $? "  and writes no output"

# ---- 5. a layer written with the kit, with CUDA -----------------------------
kitlib=$(find "$tmp/root" -name libmica_kit.a | head -n 1)
case " $(pkg-config --libs mica-module) " in
*" -lmica_kit "*) [ -n "$kitlib" ]; st=$? ;;
*) st=1 ;;
esac
ok $st "pkg-config --libs mica-module links the installed libmica_kit.a"

# swish_check DIR WHAT: run swish.yaml with DIR/swish.so and compare y
# with x * sigmoid(x) within 1e-6.
"$npy" write "$tmp/sx.npy" float32 2x3 0 1 -1 2 -3 10
swish_check() {
    rm -rf "$tmp/sout"
    MICA_MODULE_DIR= MICA_MODULE_PATH=$1 \
        "$mica" run "$top_src/examples/swish/swish.yaml" \
        --input "x=$tmp/sx.npy" --output-dir "$tmp/sout" \
        >"$tmp/swish-run.log" 2>&1
    st=$?
    ok $st "mica run swish.yaml with the $2 Swish module"
    [ $st -eq 0 ] || show "$tmp/swish-run.log"
    "$npy" print "$tmp/sout/y.npy" 2>&1 | awk '
        BEGIN { split("0 1 -1 2 -3 10", x, " "); bad = 0 }
        $1 != "float32" || $2 != "[2,3]" || NF != 8 { bad = 1; exit }
        { for (i = 1; i <= 6; i++) {
              want = x[i] / (1 + exp(-x[i]))
              d = $(i + 2) - want
              if (d < 0) d = -d
              if (d > 1e-6) bad = 1
          } }
        END { exit bad }'
    st=$?
    ok $st "  y is x * sigmoid(x)"
    [ $st -eq 0 ] || "$npy" print "$tmp/sout/y.npy" | sed 's/^/#   got: /'
}

mkdir "$tmp/swish-cpu" "$tmp/swish-cuda"
swish_cflags="-O2 -std=c99 -pedantic -Wall -Wextra -Werror"
(
    unset MAKEFLAGS MFLAGS MAKELEVEL
    cd "$tmp/swish-cpu" &&
        ${MAKE:-make} -f "$top_src/examples/swish/Makefile" CUDA=no \
            CC="$CC" CFLAGS="$swish_cflags" &&
        test -f swish.so
) >"$tmp/swish-make.log" 2>&1
st=$?
ok $st "examples/swish builds CPU-only against the installed kit"
[ $st -eq 0 ] || show "$tmp/swish-make.log"
swish_check "$tmp/swish-cpu" CPU-only
MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/swish-cpu \
    "$mica" compare "$top_src/examples/swish/swish.yaml" \
    --a passes=none,device=cpu --b passes=all,device=cpu \
    >"$tmp/swish-cmp.log" 2>&1
st=$?
ok $st "mica compare swish.yaml: the same outputs with and without passes"
[ $st -eq 0 ] || show "$tmp/swish-cmp.log"
MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/swish-cpu "$mica" modules \
    >"$tmp/swish-modules.log" 2>&1
grep -q "^Swish .* reference .*swish-cpu/swish.so" "$tmp/swish-modules.log" &&
    ! grep -q "^Swish .* cuda " "$tmp/swish-modules.log"
st=$?
ok $st "  mica modules lists its CPU implementation alone"
[ $st -eq 0 ] || show "$tmp/swish-modules.log"

# pkgconf puts the sysroot before a variable that starts with '/': the
# compiler is the host's, so ask without it.
nvcc=$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=nvcc mica-module)
if [ -z "$nvcc" ]; then
    for what in "examples/swish builds with its CUDA kernel" \
        "  mica modules lists both implementations" \
        "  no GPU library among its DT_NEEDED" \
        "mica run swish.yaml with the CUDA-enabled Swish module" \
        "  y is x * sigmoid(x)"; do
        skip "$what" "the installed mica has no CUDA"
    done
else
    (
        unset MAKEFLAGS MFLAGS MAKELEVEL
        cd "$tmp/swish-cuda" &&
            ${MAKE:-make} -f "$top_src/examples/swish/Makefile" \
                NVCC="$nvcc" CC="$CC" CFLAGS="$swish_cflags" &&
            test -f swish.so
    ) >"$tmp/swish-make.log" 2>&1
    st=$?
    ok $st "examples/swish builds with its CUDA kernel"
    [ $st -eq 0 ] || show "$tmp/swish-make.log"
    MICA_MODULE_DIR= MICA_MODULE_PATH=$tmp/swish-cuda "$mica" modules \
        >"$tmp/swish-modules.log" 2>&1
    grep -q "^Swish .* reference " "$tmp/swish-modules.log" &&
        grep -q "^Swish .* cuda .*swish-cuda/swish.so" "$tmp/swish-modules.log"
    st=$?
    ok $st "  mica modules lists both implementations"
    [ $st -eq 0 ] || show "$tmp/swish-modules.log"
    if command -v readelf >/dev/null 2>&1; then
        readelf -d "$tmp/swish-cuda/swish.so" >"$tmp/swish-elf.log" 2>&1 &&
            ! grep NEEDED "$tmp/swish-elf.log" |
            grep -q -e libcudart -e libcublas -e libcudnn -e 'libcuda\.'
        st=$?
        ok $st "  no GPU library among its DT_NEEDED"
        [ $st -eq 0 ] || show "$tmp/swish-elf.log"
    else
        skip "  no GPU library among its DT_NEEDED" "readelf is not installed"
    fi
    # A GPU runs the CUDA implementation, else the CPU one is chosen.
    swish_check "$tmp/swish-cuda" CUDA-enabled
fi

[ $failed -eq 0 ]
