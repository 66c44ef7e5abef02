/*
 * tests/test_limits.c - what mica refuses instead of crashing (issue 15):
 * sizes beyond 64 bits or beyond the largest tensor (weights of shape
 * [2^32, 2^32, 4], an input of shape [INT64_MAX, 2], a profile's or a
 * layer's output too large, a .npy header claiming too much), and the
 * YAML a manifest may not hold (an alias that refers to itself, "billion
 * laughs", 100,000 nested lists, a text over 64 MiB).  Each case checks
 * the one line it gets; none may crash, which is what the sanitizer legs
 * of .ci/run watch.
 */
#include <config.h>

#include <stdint.h>
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

/* Load `text` as m.yaml; NULL when it loads, else its message. */
static const char *load(const char *text, size_t len)
{
    mica_manifest_t *m = NULL;
    put("m.yaml", text, len);
    if (mica_manifest_load(ctx, path_of("m.yaml"), &m) == MICA_OK) {
        mica_manifest_destroy(m);
        return NULL;
    }
    snprintf(msg, sizeof(msg), "%s", mica_context_error(ctx));
    return msg;
}

/* The manifest is refused with a message containing `needle`. */
static void refused(const char *label, const char *text, const char *needle)
{
    const char *e = load(text, strlen(text));
    if (!ok(e != NULL, "%s: refused", label))
        return;
    contains(e, needle, "%s: says why", label);
}

static void sizes(void)
{
    refused("weights [2^32, 2^32, 4]",
            "mica: 1\nweights:\n  w: {dtype: float32, "
            "shape: [4294967296, 4294967296, 4], data: []}\n"
            "layers:\n  - {name: c, type: Constant, outputs: [y], "
            "params: {weights: w, shape: [4294967296, 4294967296, 4]}}\n"
            "outputs: [y]\n",
            "weights 'w': shape [4294967296, 4294967296, 4] has more than "
            "2^63 elements");
    refused("weights of 2^50 bytes",
            "mica: 1\nweights:\n  w: {dtype: float32, "
            "shape: [1125899906842624], data: []}\noutputs: []\n",
            "shape [1125899906842624] of float32 holds 1125899906842624 "
            "elements of 4 bytes: more bytes than the largest tensor mica "
            "accepts (2^48 bytes, 256 TiB)");
    /* Issue 25: a raw byte of a name is printed escaped. */
    refused("a param name with a control byte",
            "mica: 1\ninputs:\n  x: {dtype: float32, shape: [2]}\n"
            "layers:\n  - {name: a, type: Activation, inputs: [x], "
            "outputs: [y], params: {\"bad\\x01name\": 1}}\n"
            "outputs: [y]\n", "unknown param 'bad\\x01name'");
    refused("input [INT64_MAX, 2]",
            "mica: 1\ninputs:\n  x: {dtype: float32, "
            "shape: [9223372036854775807, 2]}\noutputs: [x]\n",
            "input 'x': shape [9223372036854775807, 2] has more than 2^63 "
            "elements");
    refused("profile max [INT64_MAX, 2]",
            "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 2]}\n"
            "profiles:\n  - x: {min: [1, 2], opt: [1, 2], "
            "max: [9223372036854775807, 2]}\noutputs: [x]\n",
            "profile 0: input 'x' at its max: shape [9223372036854775807, 2] "
            "has more than 2^63 elements");
    /* empty, but a product of its other dimensions would leave 64 bits
     * (the class of the engine fuzzer's RNNv2 finding) */
    refused("input [0, 2^40, 2^40]",
            "mica: 1\ninputs:\n  x: {dtype: float32, "
            "shape: [0, 1099511627776, 1099511627776]}\noutputs: [x]\n",
            "input 'x': shape [0, 1099511627776, 1099511627776]: its "
            "non-zero dimensions multiply past 2^63, which not even an "
            "empty tensor may do");
    refused("profile max [0, 2^62, 3]",
            "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, -1, 3]}\n"
            "profiles:\n  - x: {min: [0, 1, 3], opt: [0, 1, 3], "
            "max: [0, 4611686018427387904, 3]}\noutputs: [x]\n",
            "profile 0: input 'x' at its max: shape [0, 4611686018427387904, "
            "3]: its non-zero dimensions multiply past 2^63");
}

/* A manifest whose build fails with `needle`. */
static void build_refused(const char *label, const char *text,
                          const char *needle)
{
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_status_t st;

    put("m.yaml", text, strlen(text));
    st = mica_manifest_load(ctx, path_of("m.yaml"), &m);
    if (st == MICA_OK)
        st = mica_engine_build(mica_manifest_network(m),
                               mica_manifest_config(m), &e);
    ok(st != MICA_OK, "%s: refused", label);
    contains(mica_context_error(ctx), needle, "%s: says why", label);
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
}

/* A layer whose output is too large: refused where its shape is first
 * computed (loading the manifest validates the network). */
static void inferred(void)
{
    build_refused(
        "Fill of [2^40, 2^40]",
        "mica: 1\nlayers:\n  - {name: f, type: Fill, outputs: [y], "
        "params: {shape: [1099511627776, 1099511627776], op: linspace, "
        "alpha: 0, beta: [1, 1]}}\noutputs: [y]\n",
        "layer 'f': output 'y': shape [1099511627776, 1099511627776] "
        "has more than 2^63 elements");
}

/* A layer's output of more than 2^63 elements is refused before the next
 * layer reads it (the manifest fuzzer's finding: Scale multiplied the
 * dimensions of Resize's output past 64 bits), its runtime dimensions
 * counted as 1. */
static void inferred_next(void)
{
    build_refused(
        "Resize to [1, 2, 2^62, 4], then Scale",
        "mica: 1\ninputs:\n  x: {dtype: float32, shape: [1, 2, 3, 3]}\n"
        "weights:\n  s: {dtype: float32, shape: [2], data: [2, 3]}\n"
        "layers:\n  - {name: nn, type: Resize, inputs: [x], outputs: [q], "
        "params: {output_shape: [1, 2, 4611686018427387904, 4]}}\n"
        "  - {name: bn, type: Scale, inputs: [q], outputs: [y], "
        "params: {mode: channel, scale: s}}\noutputs: [y]\n",
        "layer 'nn': output 'q': shape [1, 2, 4611686018427387904, 4] has "
        "more than 2^63 elements");
    build_refused(
        "a runtime batch of [2^40, 2^40] padded rows, then Scale",
        "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 1, 1]}\n"
        "profiles:\n  - x: {min: [1, 1, 1], opt: [1, 1, 1], max: [2, 1, 1]}\n"
        "weights:\n  s: {dtype: float32, shape: [1], data: [2]}\n"
        "layers:\n  - {name: pad, type: Padding, inputs: [x], outputs: [p], "
        "params: {post_padding: [1099511627776, 1099511627776]}}\n"
        "  - {name: bn, type: Scale, inputs: [p], outputs: [y], "
        "params: {mode: elementwise, scale: s}}\noutputs: [y]\n",
        "layer 'pad': output 'p' of shape [N, 1099511627777, 1099511627777] "
        "(its runtime dimensions counted as 1): shape [1, 1099511627777, "
        "1099511627777] has more than 2^63 elements");
}

/* An input of shape [INT64_MAX, 2] given at run time. */
static void runtime(void)
{
    static const char text[] =
        "mica: 1\ninputs:\n  x: {dtype: float32, shape: [-1, 2]}\n"
        "profiles:\n  - x: {min: [1, 2], opt: [2, 2], max: [4, 2]}\n"
        "layers:\n  - {name: r, type: Activation, inputs: [x], "
        "outputs: [y], params: {type: relu}}\noutputs: [y]\n";
    static const float data[4] = {1, -1, 2, -2};
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    mica_dims_t dims = {2, 0, {INT64_MAX, 2}};

    put("m.yaml", text, strlen(text));
    if (mica_manifest_load(ctx, path_of("m.yaml"), &m) != MICA_OK ||
        mica_engine_build(mica_manifest_network(m), mica_manifest_config(m),
                          &e) != MICA_OK ||
        mica_exec_create(e, &x) != MICA_OK) {
        skip_block(4, "no engine: %s", mica_context_error(ctx));
        goto out;
    }
    ok(mica_exec_set_input(x, "x", &dims, data) == MICA_ERR_INVALID,
       "input [INT64_MAX, 2] at run time: refused");
    contains(mica_context_error(ctx), "input 'x': shape "
             "[9223372036854775807, 2] has more than 2^63 elements",
             "input [INT64_MAX, 2] at run time: says why");
    dims.d[0] = (int64_t)1 << 47;
    ok(mica_exec_set_input(x, "x", &dims, data) == MICA_ERR_INVALID,
       "input [2^47, 2] of float32 at run time: refused");
    contains(mica_context_error(ctx), "elements of 4 bytes: more bytes than "
             "the largest tensor mica accepts (2^48 bytes",
             "input [2^47, 2] at run time: says why");
out:
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
}

/* "&a [1, *a]" and friends. */
static void yaml(void)
{
    char *text;
    size_t i, n = 100000, len;

    refused("self-referencing alias",
            "mica: 1\nweights:\n  w: {dtype: float32, shape: [2], "
            "data: &a [1, *a]}\noutputs: []\n",
            "m.yaml:3:48: YAML alias '*a': a manifest may not use aliases");
    refused("billion laughs",
            "mica: 1\n"
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
            "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
            "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
            "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
            "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
            "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n",
            "m.yaml:3:8: YAML alias '*a'");

    /* 100,000 nested lists: the root map and 63 lists are 64 levels,
     * the 64th list (column 4 + 63) is refused */
    len = strlen("mica: 1\nx: ") + 2 * n + 1;
    text = malloc(len + 1);
    if (!text)
        bail("out of memory");
    strcpy(text, "mica: 1\nx: ");
    for (i = 0; i < n; i++)
        strcat(text + strlen("mica: 1\nx: ") + i, "[");
    memset(text + strlen(text), ']', n);
    text[len - 1] = '\n';
    text[len] = '\0';
    refused("100,000 nested lists", text,
            "m.yaml:2:67: YAML nested deeper than 64 levels, the most a "
            "manifest may have");
    free(text);

    /* 64 nested levels (the map and 63 lists) are fine */
    ok(load("mica: 1\noutputs: []\nx: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", 0) != NULL,
       "64 levels: parsed (then refused for its unknown key)");
    contains(load("mica: 1\noutputs: []\nx: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]"
                  "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
                  strlen("mica: 1\noutputs: []\nx: ") + 2 * 63 + 1),
             "unknown key 'x'", "64 levels: only the key is refused");
}

/* A manifest over 64 MiB is refused by its size, before it is parsed. */
static void too_big(void)
{
    FILE *f = fopen(path_of("big.yaml"), "wb");
    mica_manifest_t *m = NULL;

    if (!f || fputs("mica: 1\n", f) < 0 ||
        fseek(f, (64L << 20) + 1, SEEK_SET) != 0 || fputc('\n', f) == EOF ||
        fclose(f) != 0)
        bail("cannot write %s", path_of("big.yaml"));
    ok(mica_manifest_load(ctx, path_of("big.yaml"), &m) == MICA_ERR_INVALID,
       "a manifest of 64 MiB + 2 bytes: refused");
    contains(mica_context_error(ctx), "big.yaml: 67108866 bytes, more than "
             "the 64 MiB a manifest may have", "64 MiB: says why");
    remove(path_of("big.yaml"));
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, sizeof(dir), "%s/mica-test-limits-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bail("cannot make a scratch folder");
    if (mica_context_create(&ctx) != MICA_OK)
        bail("cannot create a context");
    mica_context_set_logger(ctx, NULL, NULL, MICA_LOG_ERROR);
    mica_context_load_default_modules(ctx);

    plan_lazy();
    sizes();
    inferred();
    inferred_next();
    runtime();
    yaml();
    too_big();

    mica_context_destroy(ctx);
    remove(path_of("m.yaml"));
    rmdir(dir);
    return exit_status();
}
