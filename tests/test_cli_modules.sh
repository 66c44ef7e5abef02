#!/bin/sh
# tests/test_cli_modules.sh - `mica modules TYPE` and `mica modules --json`:
# the exact detail of a test type with a default of every field kind
# (tests/odd/) and of an in-tree type's params, versions and namespaces of
# the fake modules (tests/modules/), the errors of an unknown type,
# namespace or version and of bad options, and the JSON document, parsed
# with python3's json module where python3 is installed (those checks skip
# otherwise), with the in-tree modules, with every fake module's load
# problems, and with strings that need escaping.
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
odd_dir=$top_build/tests/odd/.libs
fake_dir=$top_build/tests/modules/.libs

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mica-test-modules-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$top_src/tests/tap.sh"

if ! "$mica" modules 2>/dev/null | grep -q '^Reduce '; then
    echo "1..0 # SKIP the Reduce module is not built"
    exit 0
fi
python=
if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' 2>/dev/null; then
    python=python3
fi

# same WANT_FILE GOT_FILE DESCRIPTION: the files are identical
same() {
    if cmp -s "$1" "$2"; then
        ok 0 "$3"
    else
        ok 1 "$3"
        diff "$1" "$2" | sed 's/^/#     /'
    fi
}
# normalize FILE: the build folder as BUILD, the documentation folder as
# DOC, the byte 0xff (not UTF-8, printed as is) as '?'
normalize() {
    sed -e "s|$top_build|BUILD|g" \
        -e 's|^      .*/manifest\.md$|      DOC/manifest.md|' "$1" \
        | tr '\377' '?'
}
# json DESCRIPTION PYTHON-CODE: run the code on $tmp/out parsed as `d`
json() {
    if [ -z "$python" ]; then
        skip "$1" "python3 with its json module is not installed"
        return
    fi
    "$python" - "$tmp/out" >"$tmp/py" 2>&1 <<EOF
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    d = json.load(f)
$2
EOF
    pyrc=$?
    ok $pyrc "$1"
    [ $pyrc -eq 0 ] || sed 's/^/#     /' "$tmp/py"
}

# ---- one type in detail ---------------------------------------------------
run env MICA_MODULE_DIR= "$mica" modules 'Odd"Type\' --module-path "$odd_dir"
is 0 "$rc" "modules TYPE exits 0"
normalize "$tmp/out" >"$tmp/odd.txt"
cat >"$tmp/want" <<'EOF'
Layer type Odd"Type\
  Namespaces  (default)
  Versions    1

Version 1 (the default version)
  Role:
    none: an ordinary layer

  Implementations (on each device, the first listed is the default):
    IMPLEMENTATION  DEVICES  PRIORITY  MODULE  VERSION  ABI  FILE
    reference       cpu      0         odd     1.0      1    BUILD/tests/odd/.libs/odd.so

  Modules:
    odd 1.0, MIT "or" Apache\2 license: café, tab here, new line, bad ? byte,
    control byte
      BUILD/tests/odd/.libs/odd.so

  Inputs and outputs:
    not described by the module ABI, which declares a layer type by its params
    alone; the manifest reference documents those of mica's own layer types:
      DOC/manifest.md

  Params:
    ratio
      kind         float
      count        1
      required     no
      default      inf
      description  a "ratio" \ with a backslash
    sizes
      kind         int
      count        a list of 2
      required     no
      default      [3, -4]
    label
      kind         string
      count        1
      required     no
      default      'say "hi"'
      description  a label
    kind
      kind         enum
      count        1
      required     no
      default      with "quotes"
      values       plain, with "quotes"
      description  a kind
    flag
      kind         bool
      count        1
      required     no
      default      true
      values       true, false
    dtype
      kind         dtype
      count        1
      required     no
      default      float16
      values       float32, float16, int8, int32, bool, int64, uint8,
                   bfloat16, float64, uint16, uint32, uint64, int16, fp8e4m3,
                   fp8e5m2, int4, uint4, fp4e2m1, fp8e4m3fnuz, fp8e5m2fnuz,
                   fp8e8m0
    w
      kind         weights
      count        1
      required     yes
      default      none
      values       the name of a weights entry, or a blob {dtype, shape, data
                   | file | npy}
      description  the weights
    extra
      kind         int
      count        a list of any length
      required     no
      default      []
      description  line one line two and a bell
EOF
same "$tmp/want" "$tmp/odd.txt" \
    "modules TYPE: every part, a default of every kind, control characters as spaces"

run "$mica" modules Reduce
is 0 "$rc" "modules Reduce exits 0"
sed -n '/^  Params:$/,$p' "$tmp/out" >"$tmp/params"
cat >"$tmp/want" <<'EOF'
  Params:
    op
      kind         enum
      count        1
      required     yes
      default      none
      values       sum, prod, max, min, avg
      description  the reduction: sum, prod, max, min, avg
    axes
      kind         int
      count        a list of any length
      required     yes
      default      none
      description  the axes to reduce, each in [0, rank)
    keep_dims
      kind         bool
      count        1
      required     no
      default      false
      values       true, false
      description  keep reduced axes as 1s (default: false)
EOF
same "$tmp/want" "$tmp/params" "modules Reduce: its params"
has "$tmp/out" '^    reference  *cpu  *0  *reduce  *[0-9.]*  *1  *.*/mica_reduce\.so$' \
    "modules Reduce: the reference implementation, its module and file"
has "$tmp/out" '^    reduce [0-9.]*, MIT license: Reduce: sum, prod, max, min, avg over axes$' \
    "modules Reduce: the module's license and description"
run "$mica" modules MatrixMultiply
has "$tmp/out" '^    op_b$' "modules MatrixMultiply: op_b"
has "$tmp/out" '^      values       none, transpose, vector$' "  with its values"
has "$tmp/out" '^      default      none$' "  and its default"
run "$mica" modules TripLimit
has "$tmp/out" '^    trip_limit: a loop boundary' "modules TripLimit: its role"

# versions and namespaces (tests/modules/good.c)
run env MICA_MODULE_DIR= "$mica" modules Widget --module-path "$fake_dir"
is 0 "$rc" "modules Widget (two versions) exits 0"
has "$tmp/out" '^  Versions    1, 2$' "  lists both versions"
has "$tmp/out" '^Version 1$' "  version 1"
has "$tmp/out" '^Version 2 (the default version)$' "  version 2, the default"
# the first table is version 1's; its rows without the last three columns
sed -n '/IMPLEMENTATION/,/^$/p' "$tmp/out" | sed -n '1,6p' \
    | sed -e 's/  *[0-9.]*  *1  *[^ ]*$//' >"$tmp/impls"
cat >"$tmp/want" <<'EOF'
    IMPLEMENTATION  DEVICES  PRIORITY  MODULE  VERSION  ABI  FILE
    cuda            cuda     10        good
    avx             cpu      5         good
    simd            cpu      5         good
    reference       cpu      0         good

EOF
same "$tmp/want" "$tmp/impls" \
    "  version 1's implementations by priority, then name (the default of each device first)"
run env MICA_MODULE_DIR= "$mica" modules Widget --version 2 --module-path "$fake_dir"
hasnt "$tmp/out" '^Version 1' "--version 2: only version 2"
run env MICA_MODULE_DIR= "$mica" modules Gadget --namespace acme --module-path "$fake_dir"
has "$tmp/out" '^Version 1 in namespace acme (the default version)$' \
    "--namespace acme: Gadget"
has "$tmp/out" '^      default      exact$' "  with its enum default"

# ---- errors ------------------------------------------------------------------
run "$mica" modules Elementwise
is 1 "$rc" "an unknown type: status 1"
is "mica: unknown layer type 'Elementwise' (closest: ElementWise)" \
    "$(cat "$tmp/err")" "  one line naming the closest type"
is 0 "$(lines "$tmp/out")" "  nothing on stdout"
run "$mica" modules Shale
is "mica: unknown layer type 'Shale' (closest: Scale, Shape)" \
    "$(cat "$tmp/err")" "an unknown type: the closest ones, one edit apart"
run "$mica" modules --json Elementwise
is 1 "$rc" "--json with an unknown type: status 1"
is 0 "$(lines "$tmp/out")" "  and no JSON"
run env MICA_MODULE_DIR= "$mica" modules Widget --version 3 --module-path "$fake_dir"
is 1 "$rc" "an unknown version: status 1"
is "mica: layer type 'Widget' has no version 3 in namespace (default) (versions: 1, 2)" \
    "$(cat "$tmp/err")" "  naming the versions"
run env MICA_MODULE_DIR= "$mica" modules Gadget --namespace x --module-path "$fake_dir"
is "mica: layer type 'Gadget' has no namespace 'x' (namespaces: acme)" \
    "$(cat "$tmp/err")" "an unknown namespace names the type's namespaces"
run "$mica" modules Reduce Slice
is 2 "$rc" "two types: usage error (2)"
run "$mica" modules --version 1
is 2 "$rc" "--version without a type: usage error (2)"
run "$mica" modules Reduce --version x
is 2 "$rc" "--version x: usage error (2)"
has "$tmp/err" "takes an integer >= 1, not 'x'" "  and says why"
run "$mica" modules --help
has "$tmp/out" '^       mica modules TYPE ' "--help shows the TYPE form"

# ---- JSON --------------------------------------------------------------------
run "$mica" modules --json
is 0 "$rc" "--json exits 0"
nb=$("$mica" modules | sed -n 's/^\([0-9]*\) layer creators*$/\1/p')
json "--json: valid JSON, one creator per line of 'mica modules' ($nb)" "
assert len(d['creators']) == $nb, len(d['creators'])
assert d['load_problems'] == []
assert isinstance(d['mica_version'], str) and d['mica_version']
"
json "--json: the Reduce creator's params, kinds, defaults and values" "
c = [c for c in d['creators'] if c['type'] == 'Reduce' and c['implementation'] == 'reference'][0]
assert c['namespace'] == '' and c['version'] == 1 and c['priority'] == 0, c
assert c['devices'] == ['cpu'] and c['role'] == 'none', c
assert c['module'].endswith('/mica_reduce.so'), c['module']
f = {x['name']: x for x in c['fields']}
assert list(f) == ['op', 'axes', 'keep_dims'], list(f)
assert f['op']['kind'] == 'enum' and f['op']['required'] is True and f['op']['default'] is None
assert f['op']['values'] == ['sum', 'prod', 'max', 'min', 'avg'], f['op']['values']
assert f['axes']['kind'] == 'int' and f['axes']['count'] == -1 and f['axes']['values'] is None
assert f['keep_dims']['default'] is False and f['keep_dims']['required'] is False
"
json "--json: modules with file, name, version, ABI version, license, description" "
m = {x['name']: x for x in d['modules']}
r = m['reduce']
assert r['license'] == 'MIT' and r['abi_version'] == 1, r
assert r['description'] == 'Reduce: sum, prod, max, min, avg over axes', r
assert r['file'].endswith('/mica_reduce.so') and r['version'], r
assert sorted({c['module'] for c in d['creators']}) == sorted(x['file'] for x in d['modules'])
assert m['loop']['description'].startswith('Loop boundaries'), m['loop']
"
run "$mica" modules --json Gather
json "--json TYPE: only that type's creators and module" "
assert {c['type'] for c in d['creators']} == {'Gather'}, d['creators']
assert [m['name'] for m in d['modules']] == ['gather'], d['modules']
f = {x['name']: x for x in d['creators'][0]['fields']}
assert f['mode']['default'] == 'default' and f['axis']['default'] == 0, f
"
run env MICA_MODULE_DIR= "$mica" modules --json --module-path "$odd_dir"
is 0 "$rc" "--json with strings to escape exits 0"
json "--json: strings escaped, invalid UTF-8 replaced, defaults of every kind typed" "
m = d['modules'][0]
assert m['license'] == 'MIT \"or\" Apache\\\\2', repr(m['license'])
assert m['description'] == 'caf\u00e9, tab\\there,\\nnew line, bad \ufffd byte, control \\x01 byte', repr(m['description'])
c = d['creators'][0]
assert c['type'] == 'Odd\"Type\\\\', repr(c['type'])
f = {x['name']: x for x in c['fields']}
want = {'ratio': 'inf', 'sizes': [3, -4], 'label': 'say \"hi\"', 'kind': 'with \"quotes\"',
        'flag': True, 'dtype': 'float16', 'w': None, 'extra': []}
got = {k: v['default'] for k, v in f.items()}
assert got == want, got
assert f['sizes']['count'] == 2 and f['kind']['values'] == ['plain', 'with \"quotes\"']
assert f['extra']['description'] == 'line one\\nline two\\tand a bell \\x07', repr(f['extra']['description'])
assert f['sizes']['description'] is None
"
run env MICA_MODULE_DIR= "$mica" modules --json --module-path "$fake_dir"
json "--json: the fake modules, namespaces and load problems" "
assert any(c['type'] == 'Gadget' and c['namespace'] == 'acme' and c['devices'] == ['cpu', 'cuda'] for c in d['creators'])
assert sorted(c['version'] for c in d['creators'] if c['type'] == 'Widget') == [1, 1, 1, 1, 2]
assert any('no symbol mica_module_init' in p for p in d['load_problems']), d['load_problems']
assert any('already registered' in p for p in d['load_problems'])
"

echo "1..$n"
[ "$failed" -eq 0 ]
