/*
 * tests/test_manifest.c - the manifest loader: a good manifest loads, and
 * every error names file:line:column and the layer or field.
 *
 * Each case writes a small manifest into a scratch folder, loads it and
 * checks the message's exact "FILE:LINE:COL: " prefix and a fragment of
 * the text.  Uses the build tree's modules (Constant, ElementWise,
 * Activation, Reduce) through MICA_MODULE_DIR.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mica/mica.h"
#include "tap.h"

static mica_context_t *ctx;
static char dir[512];
static char msg[2048];

static const char *path_of(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf), "%s/%s", dir, name);
    return buf;
}

static void put(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(path_of(name), "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        bail("cannot write %s", path_of(name));
    fclose(f);
}

/* Load `text` as m.yaml; NULL on success, else the message. */
static const char *load(const char *text)
{
    mica_manifest_t *m = NULL;
    mica_status_t st;
    put("m.yaml", text, strlen(text));
    st = mica_manifest_load(ctx, path_of("m.yaml"), &m);
    if (st == MICA_OK) {
        mica_manifest_destroy(m);
        return NULL;
    }
    snprintf(msg, sizeof(msg), "%s", mica_context_error(ctx));
    return msg;
}

/* Two results: the error is at m.yaml:LINE:COL and mentions `needle`. */
static void check(const char *label, const char *text, int line, int col,
                  const char *needle)
{
    char want[1100];
    const char *e = load(text);
    snprintf(want, sizeof(want), "%s:%d:%d: ", path_of("m.yaml"), line, col);
    if (!ok(e && !strncmp(e, want, strlen(want)), "%s: at %d:%d", label,
            line, col))
        diag("    got: %s", e ? e : "(loaded)");
    contains(e, needle, "%s: says what", label);
}

#define HEAD "mica: 1\ninputs:\n  x: {dtype: float32, shape: [2, 3]}\n"

/* A manifest loads modules only when its caller allows it (issue 15). */
static void opt_in(void)
{
    check("modules.load needs permission",
          "mica: 1\nmodules:\n  load: [./nope.so]\noutputs: []\n", 3, 9,
          "modules.load: this manifest loads modules (native code), which "
          "is off unless its caller allows it: run mica with "
          "--allow-manifest-modules, or call "
          "mica_context_allow_manifest_modules()");
    check("modules.paths needs permission",
          "mica: 1\nmodules:\n  paths: [.]\noutputs: []\n", 3, 10,
          "modules.paths: this manifest loads modules");
    ok(load("mica: 1\nmodules:\n  load: []\n  paths: []\noutputs: []\n")
       == NULL, "empty modules.load and modules.paths need no permission");
    mica_context_allow_manifest_modules(ctx, 1);
    ok(load("mica: 1\nmodules:\n  paths: [.]\noutputs: []\n") == NULL,
       "modules.paths loads once allowed");
}

static void good(void)
{
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    mica_manifest_t *m = NULL;
    const mica_build_config_t *cfg;
    const char *text =
        "# a good manifest\n"
        "mica: 1\n"
        "name: good\n"
        "device: cpu\n"
        "precision: [float32, float16]\n"
        "modules:\n"
        "  paths: [.]\n"
        "  prefer: {ElementWise: reference}\n"
        "inputs:\n"
        "  x: {dtype: float32, shape: [2, 3]}\n"
        "weights:\n"
        "  w: {dtype: float32, shape: [2, 3], data: [[1, 2, 3], [4, 5, 6]]}\n"
        "  raw: {dtype: float32, shape: [2, 3], file: w.bin, offset: 0}\n"
        "layers:\n"
        "  - {name: total, type: Reduce, inputs: [r], outputs: [y],\n"
        "     params: {op: sum, axes: [1], keep_dims: false}}\n"
        "  - {name: c, type: Constant, outputs: [b],\n"
        "     params: {weights: raw, shape: [2, 3]}}\n"
        "  - {name: c2, type: Constant, outputs: [b2], params: {shape: [1],\n"
        "     weights: {dtype: float32, shape: [1], data: [2.5]}}}\n"
        "  - {name: add, type: ElementWise, version: 1, inputs: [x, b],\n"
        "     outputs: [s], params: {op: sum}}\n"
        "  - {name: relu, type: Activation, inputs: [s], outputs: [r],\n"
        "     params: {type: relu}}\n"
        "outputs: [y, r]\n"
        "shape_outputs: []\n";

    put("w.bin", w, sizeof(w));
    put("m.yaml", text, strlen(text));
    if (!ok(mica_manifest_load(ctx, path_of("m.yaml"), &m) == MICA_OK,
            "a good manifest loads"))
        diag("    %s", mica_context_error(ctx));
    if (!m) {
        skip_block(4, "no manifest");
        return;
    }
    is_string("good", mica_manifest_name(m), "its name");
    ok(mica_manifest_network(m) != NULL, "it has a network");
    cfg = mica_manifest_config(m);
    is_int(MICA_DEVICE_CPU, cfg->device, "device: cpu");
    ok(cfg->nb_prefer == 1 && !strcmp(cfg->prefer_types[0], "ElementWise")
           && !strcmp(cfg->prefer_impls[0], "reference"),
       "modules.prefer becomes the build preferences");
    mica_manifest_destroy(m);
}

/* Profiles, shape tensors, .npy and inline weights, optional inputs. */
static void good_more(void)
{
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    unsigned char buf[128 + 24];
    const char *e;

    static const char dict[] =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

    /* A .npy file as NumPy writes it: 128 bytes of header, then data. */
    memcpy(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
    memset(buf + 10, ' ', 118);
    memcpy(buf + 10, dict, strlen(dict));
    buf[127] = '\n';
    memcpy(buf + 128, w, 24);
    put("w.npy", buf, sizeof(buf));
    e = load("mica: 1\n"
             "inputs:\n"
             "  x: {dtype: float32, shape: [2, 3]}\n"
             "  n: {dtype: int32, shape: [2], shape_tensor: true}\n"
             "profiles:\n"
             "  - x: {min: [2, 3], opt: [2, 3], max: [2, 3]}\n"
             "    n: {values: {min: [1, 1], opt: [2, 2], max: [4, 4]}}\n"
             "  - {x: {min: [2, 3], opt: [2, 3], max: [2, 3]},\n"
             "     n: {values: {min: [1, 1], opt: [1, 1], max: [1, 1]}}}\n"
             "weights:\n"
             "  c: {npy: w.npy}\n"
             "  d: {npy: w.npy, dtype: float32, shape: [2, 3]}\n"
             "  h: {dtype: float16, shape: [2], data: [0.5, -2]}\n"
             "  b: {dtype: bool, shape: [3], data: [true, false, 1]}\n"
             "  i: {dtype: int32, shape: [], data: 7}\n"
             "layers:\n"
             "  - {name: k, type: Constant, outputs: [y],\n"
             "     params: {weights: d, shape: [2, 3]}}\n"
             "outputs: [y]\n"
             "shape_outputs: [n]\n");
    if (!ok(e == NULL, "profiles, shape tensors, .npy and typed weights load"))
        diag("    %s", e);
    e = load("mica: 1\nweights:\n  c: {npy: w.npy, dtype: float16}\n"
             "outputs: []\n");
    contains(e, "m.yaml:3:26: weights 'c': 'w.npy' holds float32, the "
             "manifest says float16", ".npy weights of another dtype");
    remove(path_of("w.npy"));
}

/* Profiles, shape-tensor inputs and outputs for shapes reach the network
 * and the engine built from it. */
static void dynamic(void)
{
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;
    mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_dims_t mn, op, mx;
    const int32_t *vmin = NULL, *vopt = NULL, *vmax = NULL;
    int32_t nb = -1;
    const char *text =
        "mica: 1\n"
        "inputs:\n"
        "  x: {dtype: float32, shape: [-1, 3]}\n"
        "  n: {dtype: int32, shape: [2], shape_tensor: true}\n"
        "profiles:\n"
        "  - x: {min: [1, 3], opt: [2, 3], max: [4, 3]}\n"
        "    n: {values: {min: [1, -2], opt: [2, 0], max: [3, 5]}}\n"
        "  - n: {values: {min: [0, 0], opt: [0, 0], max: [0, 0]}}\n"
        "    x: {min: [5, 3], opt: [6, 3], max: [9, 3]}\n"
        "layers:\n"
        "  - {name: r, type: Activation, inputs: [x], outputs: [y],\n"
        "     params: {type: relu}}\n"
        "outputs: [y]\n"
        "shape_outputs: [n]\n";

    put("m.yaml", text, strlen(text));
    if (!ok(mica_manifest_load(ctx, path_of("m.yaml"), &m) == MICA_OK,
            "a manifest with profiles and a shape-tensor input loads"))
        diag("    %s", mica_context_error(ctx));
    if (!m) {
        skip_block(9, "no manifest");
        return;
    }
    is_int(2, mica_network_nb_profiles(mica_manifest_network(m)),
           "the network has its two profiles");
    cfg = *mica_manifest_config(m);
    cfg.device = MICA_DEVICE_CPU;
    if (!ok(mica_engine_build(mica_manifest_network(m), &cfg, &e) == MICA_OK,
            "its engine builds"))
        diag("    %s", mica_context_error(ctx));
    if (!e) {
        skip_block(6, "no engine");
        mica_manifest_destroy(m);
        return;
    }
    is_int(2, mica_engine_nb_profiles(e), "the engine has two profiles");
    ok(mica_engine_profile_input(e, 1, 0, &mn, &op, &mx, &nb, &vmin, &vopt,
                                 &vmax) == MICA_OK
           && nb == 0 && mn.d[0] == 5 && op.d[0] == 6 && mx.d[0] == 9
           && mx.d[1] == 3,
       "profile 1 gives x [5..9, 3] (listed after n)");
    ok(mica_engine_profile_input(e, 0, 1, &mn, &op, &mx, &nb, &vmin, &vopt,
                                 &vmax) == MICA_OK
           && nb == 2 && vmin && vopt && vmax && vmin[0] == 1
           && vmin[1] == -2 && vopt[1] == 0 && vmax[0] == 3 && vmax[1] == 5,
       "profile 0 gives the values of n, negative ones too");
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    ok(mica_engine_tensor(e, mica_engine_find_tensor(e, "n"), &info)
           == MICA_OK && info.is_input && info.is_shape_output
           && info.dtype == MICA_INT32,
       "n is an int32 input and an output for shapes");
    ok(info.kind == MICA_TENSOR_SHAPE || info.kind == MICA_TENSOR_BOTH,
       "n is a shape tensor");
    ok(mica_engine_tensor(e, mica_engine_find_tensor(e, "x"), &info)
           == MICA_OK && info.dims.d[0] == -1 && info.dims.d[1] == 3,
       "x keeps its runtime dimension");
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
}

static void errors(void)
{
    /* The file itself. */
    {
        mica_manifest_t *m = NULL;
        ok(mica_manifest_load(ctx, path_of("nothing.yaml"), &m)
               == MICA_ERR_NOT_FOUND && !m,
           "missing manifest: not found");
        contains(mica_context_error(ctx), "cannot open manifest",
                 "missing manifest: says so");
        contains(mica_context_error(ctx), path_of("nothing.yaml"),
                 "missing manifest: names the file");
    }
    check("YAML syntax", "mica: 1\ninputs: [a, b\n", 3, 1, "YAML");
    check("bad version", "mica: 2\n", 1, 7, "format version '2'");
    check("missing version", "name: x\noutputs: []\n", 1, 1, "mica: 1");
    check("unknown top-level key", "mica: 1\nlayerz: []\noutputs: []\n", 2, 1,
          "unknown key 'layerz'");
    check("bad device", "mica: 1\ndevice: gpu\noutputs: []\n", 2, 9,
          "'gpu' is not one of auto, cpu, cuda");
    check("bad dtype",
          "mica: 1\ninputs:\n  x: {dtype: float33, shape: [2]}\n"
          "outputs: [x]\n", 3, 14, "input 'x': 'float33' is not a dtype");
    check("bad shape", HEAD "  z: {dtype: float32, shape: [2, x]}\n"
          "outputs: [x]\n", 4, 34, "expected an integer");
    check("runtime dim without profile",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "outputs: [x]\n", 3, 3, "profiles");
    check("profile names no input",
          HEAD "profiles:\n  - {q: {min: [1], opt: [1], max: [1]}}\n"
          "outputs: [x]\n", 5, 6, "'q' is not a network input");
    check("profile rank",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {min: [1, 3], opt: [4], max: [8, 3]}\n"
          "outputs: [x]\n", 5, 27, "opt has 1 values, 2 expected");
    check("unknown type",
          HEAD "layers:\n  - name: f\n    type: Frobnicate\n"
          "    inputs: [x]\n    outputs: [y]\noutputs: [y]\n", 6, 11,
          "layer 'f'");
    check("unknown layer key",
          HEAD "layers:\n  - name: add\n    type: ElementWise\n"
          "    input: [x, x]\n    outputs: [y]\noutputs: [y]\n", 7, 5,
          "unknown key 'input'");
    check("unknown param",
          HEAD "layers:\n  - name: add\n    type: ElementWise\n"
          "    inputs: [x, x]\n    outputs: [y]\n"
          "    params: {op: sum, bogus: 1}\noutputs: [y]\n", 9, 23,
          "layer 'add': unknown param 'bogus' (ElementWise takes op");
    check("enum value",
          HEAD "layers:\n  - name: add\n    type: ElementWise\n"
          "    inputs: [x, x]\n    outputs: [y]\n"
          "    params: {op: summ}\noutputs: [y]\n", 9, 18,
          "layer 'add': param 'op': 'summ' is not one of sum, prod");
    check("param of the wrong type",
          HEAD "layers:\n  - name: r\n    type: Reduce\n"
          "    inputs: [x]\n    outputs: [y]\n"
          "    params: {op: sum, axes: [abc]}\noutputs: [y]\n", 9, 30,
          "layer 'r': param 'axes': expected int, got 'abc'");
    check("missing required param",
          HEAD "layers:\n  - name: add\n    type: ElementWise\n"
          "    inputs: [x, x]\n    outputs: [y]\noutputs: [y]\n", 5, 5,
          "missing param 'op'");
    check("undefined tensor",
          HEAD "layers:\n  - name: add\n    type: ElementWise\n"
          "    inputs: [x, q]\n    outputs: [y]\n"
          "    params: {op: sum}\noutputs: [y]\n", 7, 17,
          "layer 'add': input 1: tensor 'q' is not defined");
    check("undefined output",
          HEAD "outputs: [x, nope]\n", 4, 14, "tensor 'nope' is not defined");
    check("tensor defined twice",
          HEAD "layers:\n"
          "  - {name: a, type: Activation, inputs: [x], outputs: [y],"
          " params: {type: relu}}\n"
          "  - {name: b, type: Activation, inputs: [x], outputs: [y],"
          " params: {type: relu}}\n"
          "outputs: [y]\n", 6, 56,
          "layer 'b': tensor 'y' is already defined by layer 'a' (at 5:56)");
    check("input redefined by a layer",
          HEAD "layers:\n"
          "  - {name: a, type: Activation, inputs: [x], outputs: [x],"
          " params: {type: relu}}\n"
          "outputs: [x]\n", 5, 56, "already defined as a network input");
    check("layer name twice",
          HEAD "layers:\n"
          "  - {name: a, type: Activation, inputs: [x], outputs: [y],"
          " params: {type: relu}}\n"
          "  - {name: a, type: Activation, inputs: [y], outputs: [z],"
          " params: {type: relu}}\n"
          "outputs: [z]\n", 6, 12, "layer name 'a' is used twice");
    check("cycle",
          HEAD "layers:\n"
          "  - {name: a, type: ElementWise, inputs: [x, c], outputs: [b],"
          " params: {op: sum}}\n"
          "  - {name: b, type: Activation, inputs: [b], outputs: [c],"
          " params: {type: relu}}\n"
          "outputs: [c]\n", 5, 5, "cycle");
    check("weights size",
          HEAD "weights:\n  w: {dtype: float32, shape: [2, 3], "
          "data: [1, 2, 3, 4, 5]}\noutputs: [x]\n", 5, 44,
          "weights 'w': 5 values for shape [2, 3] (6 expected)");
    check("weights value",
          HEAD "weights:\n  w: {dtype: int8, shape: [2], data: [1, 300]}\n"
          "outputs: [x]\n", 5, 42, "out of range for int8");
    check("missing weights file",
          HEAD "weights:\n  w: {dtype: float32, shape: [2, 3], "
          "file: nothing.bin}\noutputs: [x]\n", 5, 44, "cannot open");
    check("short weights file",
          HEAD "weights:\n  w: {dtype: float32, shape: [2, 3], "
          "file: w.bin, offset: 8}\noutputs: [x]\n", 5, 44,
          "has 16 bytes after offset 8");
    check("weights source",
          HEAD "weights:\n  w: {dtype: float32, shape: [2]}\n"
          "outputs: [x]\n", 5, 6, "give exactly one of data, file or npy");
    check("missing npy file",
          HEAD "weights:\n  w: {npy: nothing.npy}\noutputs: [x]\n", 5, 12,
          "weights 'w': cannot open");
    check("quoted version", "mica: '1'\noutputs: []\n", 1, 7,
          "format version");
    check("two documents", "mica: 1\noutputs: []\n---\nmica: 1\n", 4, 1,
          "one YAML document");
    check("module file missing",
          "mica: 1\nmodules:\n  load: [./nope.so]\noutputs: []\n", 3, 10,
          "modules.load");
    check("module folder missing",
          "mica: 1\nmodules:\n  paths: [./nope]\noutputs: []\n", 3, 11,
          "modules.paths");
    check("precision", "mica: 1\nprecision: [float32, int32]\n"
          "outputs: []\n", 2, 22, "int32 is not a precision");
    check("shape tensor dtype",
          "mica: 1\ninputs:\n  n: {dtype: float32, shape: [2], "
          "shape_tensor: true}\noutputs: [n]\n", 3, 14,
          "input 'n': a shape tensor input must be int32, not float32");
    check("shape tensor int64",
          "mica: 1\ninputs:\n  n: {dtype: int64, shape: [2], "
          "shape_tensor: true}\noutputs: [n]\n", 3, 14,
          "must be int32, not int64");
    check("shape tensor rank",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [2, 2], "
          "shape_tensor: true}\noutputs: [n]\n", 3, 28,
          "input 'n': rank 2, but a shape tensor has rank 0 or 1");
    check("shape tensor length",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [-1], "
          "shape_tensor: true}\noutputs: [n]\n", 3, 29,
          "input 'n': a shape tensor's length must be fixed, not -1");
    check("profile missing an input",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "  n: {dtype: int32, shape: [2], shape_tensor: true}\n"
          "profiles:\n  - x: {min: [1, 3], opt: [4, 3], max: [8, 3]}\n"
          "outputs: [x]\n", 6, 5,
          "profile 0 does not give input 'n' (shape [2], a shape tensor)");
    check("profile fixed dimension",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {min: [1, 2], opt: [4, 2], max: [8, 2]}\n"
          "outputs: [x]\n", 5, 8,
          "profile 0: input 'x' dimension 1 is fixed at 3, but the profile "
          "gives 2..2");
    check("profile static input",
          HEAD "  y: {dtype: float32, shape: [-1]}\n"
          "profiles:\n  - y: {min: [1], opt: [1], max: [1]}\n"
          "  - y: {min: [1], opt: [1], max: [1]}\n"
          "    x: {min: [2, 3], opt: [2, 3], max: [2, 4]}\n"
          "outputs: [x]\n", 8, 8,
          "profile 1: input 'x' dimension 1 is fixed at 3, but the profile "
          "gives 3..4");
    check("profile min > opt",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {min: [4, 3], opt: [2, 3], max: [8, 3]}\n"
          "outputs: [x]\n", 5, 8,
          "profile 0: input 'x' dimension 0 needs 0 <= min <= opt <= max, "
          "got 4/2/8");
    check("profile opt > max",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {min: [1, 3], opt: [9, 3], max: [8, 3]}\n"
          "outputs: [x]\n", 5, 8, "got 1/9/8");
    check("profile negative dimension",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {min: [-1, 3], opt: [2, 3], max: [8, 3]}\n"
          "outputs: [x]\n", 5, 15, "expected an integer >= 0, got '-1'");
    check("profile missing max",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {min: [1, 3], opt: [2, 3]}\n"
          "outputs: [x]\n", 5, 8, "profile 0: input 'x': missing key 'max'");
    check("profile values of an execution input",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles:\n  - x: {values: {min: [1], opt: [1], max: [1]}}\n"
          "outputs: [x]\n", 5, 9, "unknown key 'values' (expected one of "
          "min, opt, max)");
    check("profile dims of a shape tensor",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [2], "
          "shape_tensor: true}\n"
          "profiles:\n  - n: {min: [2], opt: [2], max: [2]}\n"
          "outputs: [n]\n", 5, 9, "unknown key 'min' (expected one of "
          "values)");
    check("profile values order",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [2], "
          "shape_tensor: true}\n"
          "profiles:\n  - n: {values: {min: [1, 5], opt: [2, 4], "
          "max: [3, 6]}}\n"
          "outputs: [n]\n", 5, 17,
          "profile 0: value 1 of input 'n' needs min <= opt <= max, got "
          "5/4/6");
    check("profile values count",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [], "
          "shape_tensor: true}\n"
          "profiles:\n  - n: {values: {min: [1, 5], opt: [2], max: [3]}}\n"
          "outputs: [n]\n", 5, 23, "min has 2 values, 1 expected");
    check("profile values int32",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [], "
          "shape_tensor: true}\n"
          "profiles:\n  - n: {values: {min: [-3000000000], opt: [2], "
          "max: [3]}}\n"
          "outputs: [n]\n", 5, 24, "expected an int32 value, got "
          "'-3000000000'");
    check("profiles not a list",
          "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 3]}\n"
          "profiles: {x: {min: [1, 3], opt: [2, 3], max: [8, 3]}}\n"
          "outputs: [x]\n", 4, 11, "profiles must be a list");
    check("shape tensor without profile",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [2], "
          "shape_tensor: true}\noutputs: [n]\n", 3, 3,
          "input 'n' is a shape tensor: give its range under 'profiles'");
    check("shape output undefined",
          HEAD "outputs: [x]\nshape_outputs: [s]\n", 5, 17,
          "shape_outputs: tensor 's' is not defined");
    check("shape output twice",
          "mica: 1\ninputs:\n  n: {dtype: int32, shape: [2], "
          "shape_tensor: true}\n"
          "profiles:\n  - n: {values: {min: [1, 1], opt: [2, 2], "
          "max: [3, 3]}}\n"
          "outputs: []\nshape_outputs: [n, n]\n", 7, 20,
          "shape_outputs: 'n' is listed twice (first at 7:17)");
    check("unknown weights key",
          HEAD "weights:\n  w: {dtype: float32, shape: [1], data: [1], "
          "ofset: 2}\noutputs: [x]\n", 5, 46, "unknown key 'ofset'");
    check("param count",
          HEAD "layers:\n  - name: a\n    type: Activation\n"
          "    inputs: [x]\n    outputs: [y]\n"
          "    params: {type: relu, alpha: [1, 2]}\noutputs: [y]\n", 9, 33,
          "param 'alpha': expected one float, got a list");
    check("unknown weights",
          HEAD "layers:\n"
          "  - {name: c, type: Constant, outputs: [y],"
          " params: {weights: nowhere, shape: [1]}}\noutputs: [y]\n", 5, 63,
          "no weights named 'nowhere'");
}

int main(void)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, sizeof(dir), "%s/mica-test-manifest-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bail("cannot make a scratch folder");
    if (mica_context_create(&ctx) != MICA_OK)
        bail("cannot create a context");
    mica_context_set_logger(ctx, NULL, NULL, MICA_LOG_ERROR);
    mica_context_load_default_modules(ctx);
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (mica_registry_find(ctx, NULL, "ElementWise", 0, NULL, 0, &info)
            != MICA_OK
        || mica_registry_find(ctx, NULL, "Reduce", 0, NULL, 0, &info)
               != MICA_OK)
        skip_all("the ElementWise and Reduce modules are not loaded");

    plan_lazy();
    opt_in();
    good();
    good_more();
    dynamic();
    errors();

    mica_context_destroy(ctx);
    remove(path_of("m.yaml"));
    remove(path_of("w.bin"));
    rmdir(dir);
    return exit_status();
}
