/*
 * tests/test_pointwise_nvrtc.c - the Pointwise layer's CUDA kernels are
 * generated and compiled with NVRTC when the layer is configured, which
 * needs no GPU: a program with every op and every kind of line the
 * generator writes (each result cast to float32 and summed, so that every
 * line is computed), one
 * with several classes of outputs and every input dtype, each compiled
 * (for the device's architecture, or the configured one without a
 * device); the code is then in the layer's state (its kernels named in
 * the PTX), an instance made from that state is configured again without
 * a change of state, and one whose code does not read compiles anew.
 * Skipped in builds without CUDA.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mica_int.h"

#define MAXL 1024

/* Lines of a program under construction. */
typedef struct lines {
    char *l[MAXL];
    int n, sum;
} lines_t;

static void line(lines_t *p, const char *fmt, ...) TAP_PRINTF(2, 3);
static void line(lines_t *p, const char *fmt, ...)
{
    va_list ap;
    char buf[256];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (p->n == MAXL)
        bail("too many lines");
    p->l[p->n] = malloc(strlen(buf) + 1);
    strcpy(p->l[p->n++], buf);
}

/* Fold value `v` into the running sum s<k>. */
static void fold(lines_t *p, const char *v)
{
    line(p, "c%d = cast(%s, dtype=float32)", p->n, v);
    if (p->sum)
        line(p, "s%d = sum(s%d, c%d)", p->n, p->sum, p->n - 1);
    else
        line(p, "s%d = sum(c%d, c%d)", p->n, p->n - 1, p->n - 1);
    p->sum = p->n - 1;
}

static void free_lines(lines_t *p)
{
    int i;
    for (i = 0; i < p->n; i++)
        free(p->l[i]);
    p->n = 0;
}

/* Configure an instance for inputs of types in[] (rank 2); 1 if it
 * succeeded, with its message otherwise. */
static int configure(mica_layer_t *l, int nb_in, const mica_dtype_t *in,
                     char *why, size_t len)
{
    mica_dyn_desc_t din[24], dout[8];
    mica_dtype_t out[8];
    mica_error_t err;
    int32_t i, n = l->ops->nb_outputs(l);

    memset(&err, 0, sizeof err);
    memset(din, 0, sizeof din);
    memset(dout, 0, sizeof dout);
    if (l->ops->output_dtypes(l, in, nb_in, out, n, &err) != MICA_OK) {
        snprintf(why, len, "%s", err.msg);
        return 0;
    }
    for (i = 0; i < nb_in + n; i++) {
        mica_dyn_desc_t *d = i < nb_in ? &din[i] : &dout[i - nb_in];
        d->desc.dtype = i < nb_in ? in[i] : out[i - nb_in];
        d->desc.dims.nb_dims = 2;
        d->desc.dims.d[0] = 4;
        d->desc.dims.d[1] = 5;
        d->desc.scale = 1;
        d->min = d->max = d->desc.dims;
    }
    if (l->ops->configure(l, din, nb_in, dout, n, &err) != MICA_OK) {
        snprintf(why, len, "%s", err.msg);
        return 0;
    }
    return 1;
}

/* The state of l (malloc'd). */
static unsigned char *state(const mica_layer_t *l, size_t *size)
{
    unsigned char *b;
    if (l->ops->serialize(l, NULL, size) != MICA_OK ||
        !(b = malloc(*size)) || l->ops->serialize(l, b, size) != MICA_OK)
        bail("serialize failed");
    return b;
}

/* Whether `needle` is among the n bytes of b. */
static int has(const unsigned char *b, size_t n, const char *needle)
{
    size_t k = strlen(needle), i;
    for (i = 0; i + k <= n; i++)
        if (!memcmp(b + i, needle, k))
            return 1;
    return 0;
}

static const char *const ew[] = {"sum", "prod", "max", "min", "sub", "div",
                                 "pow", "floor_div"};
static const char *const un[] = {
    "exp", "log", "sqrt", "recip", "abs", "neg", "sin", "cos", "tan",
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "ceil", "floor", "erf", "sign", "round"};
static const char *const act[] = {
    "relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu", "softsign",
    "softplus", "clip", "hard_sigmoid", "scaled_tanh", "thresholded_relu",
    "gelu_erf", "gelu_tanh"};
static const char *const dts[] = {"float32", "float16", "bfloat16", "int8",
                                  "uint8", "int32", "int64", "bool"};

/*
 * Every op, and every kind of line the generator writes (each op family
 * on each dtype class, each cast): in0 float32, in1 float16, in2 int32,
 * in3 int8, in4 bool, in5 bfloat16, in6 uint8, in7 int64.  Each op
 * once: its line is the same on every dtype of its class but for the
 * rounding after it, and NVRTC's time grows with the math functions
 * compiled.
 */
static void every_op(lines_t *p)
{
    char v[32];
    size_t i, k;

#define FOLD(prefix)                                                        \
    do {                                                                    \
        snprintf(v, sizeof v, "%s%d", prefix, p->n - 1);                    \
        fold(p, v);                                                         \
    } while (0)
    for (i = 0; i < sizeof ew / sizeof *ew; i++) {
        line(p, "e%d = %s(in0, in0)", p->n, ew[i]);
        FOLD("e");
        line(p, "e%d = %s(in2, in2)", p->n, ew[i]);
        FOLD("e");
    }
    for (k = 1; k < 4; k++) {
        line(p, "e%d = sum(in%d, in%d)", p->n, (int)k, (int)k);
        FOLD("e");
    }
    for (i = 0; i < 3; i++) {
        static const char *const cmp[] = {"equal", "greater", "less"};
        static const char *const lg[] = {"and", "or", "xor"};
        line(p, "q%d = %s(in0, in0)", p->n, cmp[i]);
        FOLD("q");
        line(p, "q%d = %s(in3, in3)", p->n, cmp[i]);
        FOLD("q");
        line(p, "g%d = %s(in4, in4)", p->n, lg[i]);
        FOLD("g");
    }
    line(p, "q%d = equal(in4, in4)", p->n);
    FOLD("q");
    for (i = 0; i < sizeof un / sizeof *un; i++) {
        line(p, "u%d = %s(in0)", p->n, un[i]);
        FOLD("u");
    }
    line(p, "u%d = exp(in1)", p->n);
    FOLD("u");
    for (k = 2; k < 4; k++) {
        line(p, "u%d = abs(in%d)", p->n, (int)k);
        line(p, "u%d = neg(u%d)", p->n, p->n - 1);
        line(p, "u%d = sign(u%d)", p->n, p->n - 1);
        FOLD("u");
    }
    line(p, "n%d = not(in4)", p->n);
    FOLD("n");
    for (k = 0; k < 2; k++) {
        line(p, "i%d = isinf(in%d)", p->n, (int)k);
        line(p, "i%d = isnan(in%d)", p->n, (int)k);
        line(p, "i%d = or(i%d, i%d)", p->n, p->n - 1, p->n - 2);
        FOLD("i");
    }
    for (i = 0; i < sizeof act / sizeof *act; i++) {
        line(p, "a%d = %s(in0, alpha=0.25, beta=-1.5)", p->n, act[i]);
        FOLD("a");
    }
    line(p, "a%d = sigmoid(in1)", p->n);
    FOLD("a");
    for (k = 2; k < 4; k++) {
        line(p, "a%d = relu(in%d)", p->n, (int)k);
        FOLD("a");
    }
    for (k = 0; k < 8; k++) {
        line(p, "x%d = select(in4, in%d, in%d)", p->n, (int)k, (int)k);
        FOLD("x");
    }
    for (k = 0; k < 2; k++) {
        line(p, "k%d = scale(in%d, mode=channel, axis=1, shift=w0, "
             "scale=w1, power=w2)", p->n, (int)k);
        line(p, "k%d = scale(k%d, mode=uniform, scale=w3)", p->n, p->n - 1);
        line(p, "k%d = scale(k%d, mode=elementwise, axis=0, shift=w4)", p->n,
             p->n - 1);
        line(p, "k%d = scale(k%d, mode=uniform)", p->n, p->n - 1);
        FOLD("k");
    }
    for (k = 0; k < 8; k++)
        for (i = 0; i < 8; i++) {
            line(p, "z%d = cast(in%d, dtype=%s)", p->n, (int)k, dts[i]);
            FOLD("z");
        }
    /* const values of each kind: a NaN, a float16, an int64, a bool */
    line(p, "k%d = const(value=nan, dtype=float32)", p->n);
    line(p, "k%d = max(in0, k%d)", p->n, p->n - 1);
    FOLD("k");
    line(p, "k%d = const(value=0.1, dtype=float16)", p->n);
    line(p, "k%d = prod(in1, k%d)", p->n, p->n - 1);
    FOLD("k");
    line(p, "k%d = const(value=-9223372036854775807, dtype=int64)", p->n);
    line(p, "k%d = select(in4, in7, k%d)", p->n, p->n - 1);
    FOLD("k");
    line(p, "k%d = const(value=1, dtype=bool)", p->n);
    line(p, "k%d = and(in4, k%d)", p->n, p->n - 1);
    FOLD("k");
#undef FOLD
}

/* The coefficients of every_op: w0..w2 5 each (channel axis 1 of [4, 5]),
 * w3 one, w4 20 (elementwise from axis 0). */
static th_fields_t *with_weights(th_fields_t *f)
{
    th_tensor_t w[5];
    int64_t n[5] = {5, 5, 5, 1, 20}, i;
    int k;
    for (k = 0; k < 5; k++) {
        w[k] = th_tensor(k == 1 ? MICA_FLOAT16 : MICA_FLOAT32, 1, &n[k],
                         NULL);
        for (i = 0; i < n[k]; i++)
            th_set(&w[k], i, k == 2 ? 2.0 : 0.5 * (double)(i + 1));
    }
    th_f_weights_list(f, "weights", 5, w);
    for (k = 0; k < 5; k++)
        th_free(&w[k]);
    return f;
}

int main(void)
{
    static const mica_dtype_t all[8] = {
        MICA_FLOAT32, MICA_FLOAT16, MICA_INT32, MICA_INT8,
        MICA_BOOL, MICA_BFLOAT16, MICA_UINT8, MICA_INT64};
    lines_t p;
    char why[1024], res[32];
    const char *results[3];
    mica_layer_t *l, *again;
    const mica_layer_creator_t *c;
    mica_creator_info_t info;
    unsigned char *s1, *s2;
    size_t n1, n2;
    mica_error_t err;
    int good;

    plan(9);
    th_context();
    if (!th_has_impl("Pointwise", MICA_DEVICE_CUDA, "cuda"))
        skip_all("Pointwise has no CUDA implementation in this build");
    memset(&p, 0, sizeof p);

    /* every op and kind of line: one program, one class */
    every_op(&p);
    snprintf(res, sizeof res, "s%d", p.sum);
    results[0] = res;
    l = th_instance("Pointwise", MICA_DEVICE_CUDA, "cuda",
                    with_weights(th_f_strs(
                        th_f_strs(th_fields(), "program", p.n,
                                  (const char *const *)p.l),
                        "results", 1, results)));
    if (!l)
        bail("cannot make the layer: %s", th_error());
    good = configure(l, 8, all, why, sizeof why);
    if (!ok(good, "every op, every kind of line (%d lines) compiles", p.n))
        diag("%s", why);
    s1 = state(l, &n1);
    ok(good && has(s1, n1, "pw0_flat4") && has(s1, n1, "pw0_gen64") &&
           has(s1, n1, "PWK1"),
       "its state carries the code (%zu bytes)", n1);
    free_lines(&p);

    /* an instance of that state: configured again, the same state */
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (mica_registry_find(th_context(), NULL, "Pointwise", 0, "cuda",
                           MICA_DEVICE_CUDA, &info) != MICA_OK)
        bail("no creator");
    c = info.creator;
    memset(&err, 0, sizeof err);
    again = c->deserialize(c, "again", s1, n1, &err);
    ok(again != NULL, "an instance of the state: %s",
       again ? "made" : err.msg);
    good = again && configure(again, 8, all, why, sizeof why);
    if (!ok(good, "configured again"))
        diag("%s", why);
    s2 = again ? state(again, &n2) : NULL;
    ok(good && s2 && n2 == n1 && !memcmp(s1, s2, n1),
       "with the same state");
    free(s2);
    if (again)
        again->ops->destroy(again);
    l->ops->destroy(l);

    /* a state whose code does not read: compiled anew */
    {
        size_t k;
        for (k = 0; k + 4 <= n1; k++)
            if (!memcmp(s1 + k, "PWK1", 4))
                break;
        if (k + 4 <= n1)
            s1[k] = 'X';
        again = c->deserialize(c, "broken", s1, n1, &err);
        good = again && configure(again, 8, all, why, sizeof why);
        s2 = again ? state(again, &n2) : NULL;
        /* a code that does not read is compiled anew */
        ok(good && s2 && has(s2, n2, "PWK1"), "code that does not read is "
           "made again");
        free(s2);
        if (again)
            again->ops->destroy(again);
    }
    free(s1);

    /* several classes of outputs, every input dtype */
    line(&p, "a = cast(in0, dtype=float16)");
    line(&p, "b = sum(a, in1)");
    line(&p, "c = select(in4, in5, in5)");
    line(&p, "d = cast(in7, dtype=int32)");
    line(&p, "e = prod(d, in2)");
    line(&p, "f = cast(in6, dtype=bool)");
    results[0] = "b";
    results[1] = "c";
    results[2] = "e";
    l = th_instance("Pointwise", MICA_DEVICE_CUDA, "cuda",
                    th_f_strs(th_f_strs(th_fields(), "program", p.n,
                                        (const char *const *)p.l),
                              "results", 3, results));
    if (!l)
        bail("cannot make the layer: %s", th_error());
    good = configure(l, 8, all, why, sizeof why);
    if (!ok(good, "three classes of outputs compile"))
        diag("%s", why);
    s1 = state(l, &n1);
    ok(good && has(s1, n1, "pw0_gen4") && has(s1, n1, "pw1_flat1") &&
           has(s1, n1, "pw2_gen1"),
       "with kernels for each class");
    free(s1);
    l->ops->destroy(l);
    free_lines(&p);

    /* a CPU instance of the same params has no code to make */
    l = th_instance("Pointwise", MICA_DEVICE_CPU, "reference",
                    th_f_strs(th_f_strs(th_fields(), "program", 1,
                                        (const char *const[]){
                                            "a = relu(in0)"}),
                              "results", 1, (const char *const[]){"a"}));
    ok(l && !l->ops->configure, "the CPU implementation compiles nothing");
    if (l)
        l->ops->destroy(l);
    return exit_status();
}
