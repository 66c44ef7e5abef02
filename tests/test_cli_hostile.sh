#!/bin/sh
# tests/test_cli_hostile.sh - every command keeps working next to modules
# that crash, abort, exit or hang in their init (issue 15): `mica modules`
# lists the registered types and one load problem line per bad file, the
# verdicts are remembered in the cache file (a second run needs no
# scanner and loads none of them), and `mica run` still runs.  The
# modules of tests/hostile/ are copied into a scratch folder given with
# --module-path.
#
# Environment (from the top-level Makefile.am): MICA_BIN, MICA_TOP_SRCDIR,
# MICA_TOP_BUILDDIR, MICA_SCANNER.  TAP on stdout.

top_build=${MICA_TOP_BUILDDIR:-}
top_src=${MICA_TOP_SRCDIR:-}
if [ -z "$top_build" ] || [ -z "$top_src" ] || [ -z "${MICA_SCANNER:-}" ]; then
    echo "1..0 # SKIP MICA_TOP_BUILDDIR/MICA_SCANNER not set (run through make check)"
    exit 0
fi
mica=${MICA_BIN:-$top_build/tools/mica}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-hostile-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)

. "$top_src/tests/tap.sh"

if ! "$mica" modules 2>/dev/null | grep -q '^Activation '; then
    echo "1..0 # SKIP the Activation module is not built"
    exit 0
fi
mkdir "$tmp/mods"
for f in crash_segv crash_abort crash_exit crash_hang entry_data \
         overclaim_creators overclaim_fields null_ops; do
    cp "$top_build/tests/hostile/.libs/$f.so" "$tmp/mods/" || exit 1
done
MICA_REGISTRY_CACHE=$tmp/cache
MICA_SCAN_TIMEOUT=1
export MICA_REGISTRY_CACHE MICA_SCAN_TIMEOUT

# checks FILE WHEN: the module list and the problems in `mica modules`
checks() {
    has "$1" '^Activation ' "$2: mica modules lists the in-tree types"
    has "$1" '^NullOps ' "$2: and the types of the usable hostile module"
    has "$1" "^  $tmp/mods/crash_abort.so: crashed while loading (signal 6, SIGABRT); skipped until the file changes\$" \
        "$2: the module that aborts, in one line"
    has "$1" "^  $tmp/mods/crash_exit.so: exited with status 3 while loading; skipped until the file changes\$" \
        "$2: the module that exits, in one line"
    has "$1" "^  $tmp/mods/crash_hang.so: did not finish loading within 1 s (the scan was stopped); skipped until the file changes\$" \
        "$2: the module that hangs, in one line"
    has "$1" "^  $tmp/mods/crash_segv.so: .* while loading.*; skipped until the file changes\$" \
        "$2: the module that segfaults, in one line"
}

run "$mica" modules --module-path "$tmp/mods"
is 0 "$rc" "mica modules: status 0 next to crashing modules"
checks "$tmp/out" "first run (scanned)"
has "$tmp/cache" "^bad .* $tmp/mods/crash_exit.so	" "the verdicts are in the cache file"

# The second run reads the cache: no scanner is needed, no crash happens.
MICA_SCANNER=/nonexistent/mica-scan-module run "$mica" modules --module-path "$tmp/mods"
is 0 "$rc" "mica modules again: status 0, without a scanner"
checks "$tmp/out" "second run (remembered)"

# Other commands work too.
run "$mica" run "$top_src/examples/hello.yaml" --module-path "$tmp/mods" \
    --output-dir "$tmp/out_dir"
is 0 "$rc" "mica run next to crashing modules: status 0"
ok "$([ -f "$tmp/out_dir/y.npy" ]; echo $?)" "mica run wrote its output"

echo "1..$n"
[ "$failed" -eq 0 ]
