/*
 * tests/test_mod_fused_conv.c - FusedConvolution (modules/convolution/
 * fused_conv.c): y = act(conv(x) * scale + shift + a + b) against a
 * direct convolution computed here in double, with each part alone and
 * together (bias, a batch norm of M values or of one, a bias tensor
 * broadcast, a residual, ReLU), strides, groups, float16, a runtime
 * batch; oneDNN's sum post-op and its host epilogue against the same; the
 * oneDNN and CUDA implementations against the reference; the
 * formats each takes (channels last on CUDA) and NHWC runs; and the
 * errors.  CUDA runs skip where no GPU is usable.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnn_cases.h"
#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

/* What a case has besides the convolution. */
enum { BIAS = 1, BN = 2, BN1 = 4, ADD_A = 8, ADD_B = 16, RELU = 32 };

typedef struct conv_case {
    int64_t n, c, h, w, m, k, stride, pad, groups;
} conv_case_t;

static int64_t out_len(const conv_case_t *cc, int64_t len)
{
    return (len + 2 * cc->pad - cc->k) / cc->stride + 1;
}

/* A value of a pattern that is exact in float16. */
static double pat(int64_t i, int a, int b)
{
    return (double)((i * a + b) % 9 - 4) * 0.125;
}

/* y[n, o, i, j] of the direct convolution, with bias bv (NULL: none). */
static double conv_at(const conv_case_t *cc, const th_tensor_t *x,
                      const th_tensor_t *w, const th_tensor_t *bv, int64_t n,
                      int64_t o, int64_t i, int64_t j)
{
    int64_t cpg = cc->c / cc->groups, g = o / (cc->m / cc->groups), c, p, q;
    double s = bv ? th_get(bv, o) : 0.0;

    for (c = 0; c < cpg; c++)
        for (p = 0; p < cc->k; p++)
            for (q = 0; q < cc->k; q++) {
                int64_t yy = i * cc->stride - cc->pad + p;
                int64_t xx = j * cc->stride - cc->pad + q;
                if (yy < 0 || yy >= cc->h || xx < 0 || xx >= cc->w)
                    continue;
                s += th_get(x, ((n * cc->c + g * cpg + c) * cc->h + yy) *
                                       cc->w + xx) *
                     th_get(w, ((o * cpg + c) * cc->k + p) * cc->k + q);
            }
    return s;
}

/* One case: `what` of cc in `type`, the parts `parts` (BIAS, ...). */
static void check(const char *what, const conv_case_t *cc, int parts,
                  mica_dtype_t type, unsigned runtime)
{
    int64_t ho = out_len(cc, cc->h), wo = out_len(cc, cc->w), i, j, o, n;
    int64_t nk = cc->m * (cc->c / cc->groups) * cc->k * cc->k;
    th_tensor_t x = th_t(type, NULL, 4, (int)cc->n, (int)cc->c, (int)cc->h,
                         (int)cc->w);
    th_tensor_t w = th_t(F32, NULL, 4, (int)cc->m,
                         (int)(cc->c / cc->groups), (int)cc->k, (int)cc->k);
    int64_t nbn = parts & BN1 ? 1 : cc->m;
    th_tensor_t bias = th_t(F32, NULL, 1, (int)cc->m);
    th_tensor_t sc = th_t(F32, NULL, 1, (int)nbn);
    th_tensor_t sh = th_t(F32, NULL, 1, (int)nbn);
    th_tensor_t in[3], y;
    th_fields_t *f = th_fields();
    int64_t ks[2] = {cc->k, cc->k}, st[2] = {cc->stride, cc->stride};
    int64_t pd[2] = {cc->pad, cc->pad};
    int nb_in = 1;
    char label[200];

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, pat(i, 5, 2));
    for (i = 0; i < nk; i++)
        th_set(&w, i, pat(i, 7, 1) * 0.5);
    for (o = 0; o < cc->m; o++)
        th_set(&bias, o, pat(o, 3, 5));
    for (o = 0; o < nbn; o++) {
        th_set(&sc, o, 0.5 + 0.25 * (double)o);
        th_set(&sh, o, pat(o, 2, 7) * 0.5);
    }
    th_f_int(f, "num_output_maps", cc->m);
    th_f_ints(f, "kernel_size", 2, ks);
    th_f_ints(f, "stride", 2, st);
    th_f_ints(f, "padding", 2, pd);
    th_f_int(f, "groups", cc->groups);
    th_f_weights(f, "kernel", &w);
    if (parts & BIAS)
        th_f_weights(f, "bias", &bias);
    if (parts & (BN | BN1)) {
        th_f_weights(f, "scale", &sc);
        th_f_weights(f, "shift", &sh);
    }
    if (parts & RELU)
        th_f_str(f, "activation", "relu");
    in[0] = x;
    if (parts & (ADD_A | ADD_B)) {
        /* a: a bias tensor [1, M, 1, 1]; b: a residual of y's shape */
        in[1] = parts & ADD_A ? th_t(type, NULL, 4, 1, (int)cc->m, 1, 1)
                              : th_t(type, NULL, 4, (int)cc->n, (int)cc->m,
                                     (int)ho, (int)wo);
        for (i = 0; i < th_volume(&in[1]); i++)
            th_set(&in[1], i, pat(i, 4, 3));
        nb_in = 2;
        if ((parts & ADD_A) && (parts & ADD_B)) {
            in[2] = th_t(type, NULL, 4, (int)cc->n, (int)cc->m, (int)ho,
                         (int)wo);
            for (i = 0; i < th_volume(&in[2]); i++)
                th_set(&in[2], i, pat(i, 4, 3));
            nb_in = 3;
        }
    }
    y = th_t(type, NULL, 4, (int)cc->n, (int)cc->m, (int)ho, (int)wo);
    for (n = 0; n < cc->n; n++)
        for (o = 0; o < cc->m; o++)
            for (i = 0; i < ho; i++)
                for (j = 0; j < wo; j++) {
                    int64_t at = ((n * cc->m + o) * ho + i) * wo + j;
                    int64_t bn = parts & BN1 ? 0 : o;
                    double v = conv_at(cc, &x, &w,
                                       parts & BIAS ? &bias : NULL, n, o, i,
                                       j);
                    if (parts & (BN | BN1))
                        v = v * th_get(&sc, bn) + th_get(&sh, bn);
                    if (parts & ADD_A)
                        v += th_get(&in[1], o);
                    if (parts & ADD_B)
                        v += th_get(&in[nb_in - 1], at);
                    if ((parts & RELU) && v < 0)
                        v = 0;
                    th_set(&y, at, v);
                }
    if (runtime)
        in[0] = th_runtime(in[0], runtime);
    snprintf(label, sizeof label, "%s (%s)", what, mica_dtype_name(type));
    th_check(label, "FusedConvolution", f, nb_in, in, 1, &y,
             type == F16 ? 2e-2 : 1e-5);
    for (i = 0; i < nb_in; i++)
        th_free(&in[i]);
    th_free(&w);
    th_free(&bias);
    th_free(&sc);
    th_free(&sh);
    th_free(&y);
}

/* The fields of a 1-output-map 3x3 FusedConvolution on 1 channel. */
static th_fields_t *small(th_tensor_t *w)
{
    int64_t ks[2] = {3, 3};
    *w = th_t(F32, NULL, 4, 1, 1, 3, 3);
    return th_f_weights(th_f_ints(th_f_int(th_fields(), "num_output_maps",
                                           1),
                                  "kernel_size", 2, ks),
                        "kernel", w);
}

/* The other implementations against the reference: all parts on. */
static void impls(void)
{
    static const struct {
        uint32_t dev;
        const char *impl;
    } v[] = {{MICA_DEVICE_CPU, "onednn"},
             {MICA_DEVICE_CUDA, "cuda"},
             {MICA_DEVICE_CUDA, "cudnn"}};
    th_tensor_t x = th_t(F32, NULL, 4, 2, 4, 7, 7);
    th_tensor_t r = th_t(F32, NULL, 4, 2, 4, 7, 7);
    th_tensor_t a = th_t(F32, NULL, 4, 1, 4, 1, 1);
    th_tensor_t w = th_t(F32, NULL, 4, 4, 2, 3, 3);
    th_tensor_t s = th_t(F32, NULL, 1, 4), in[3];
    int64_t ks[2] = {3, 3}, pd[2] = {1, 1}, i;
    size_t k;

    for (i = 0; i < th_volume(&x); i++) {
        th_set(&x, i, pat(i, 5, 1));
        th_set(&r, i, pat(i, 2, 3));
    }
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, pat(i, 7, 2));
    for (i = 0; i < 4; i++) {
        th_set(&a, i, pat(i, 3, 1));
        th_set(&s, i, 0.75 + 0.125 * (double)i);
    }
    in[0] = x;
    in[1] = a;
    in[2] = r;
    for (k = 0; k < sizeof v / sizeof v[0]; k++) {
        th_fields_t *f = th_fields();
        char label[100];
        th_f_int(f, "num_output_maps", 4);
        th_f_ints(f, "kernel_size", 2, ks);
        th_f_ints(f, "padding", 2, pd);
        th_f_int(f, "groups", 2);
        th_f_weights(f, "kernel", &w);
        th_f_weights(f, "bias", &s);
        th_f_weights(f, "scale", &s);
        th_f_weights(f, "shift", &a);
        th_f_str(f, "activation", "relu");
        snprintf(label, sizeof label, "%s against the reference", v[k].impl);
        th_check_impl(label, "FusedConvolution", f, 3, in, 1, v[k].dev,
                      v[k].impl, 1e-4);
    }
    th_free(&x);
    th_free(&r);
    th_free(&a);
    th_free(&w);
    th_free(&s);
}

/* The fields of the 4->4 3x3 FusedConvolution of impls() (groups 2),
 * `depth` 3 for a 3D one. */
static th_fields_t *four(int depth)
{
    int64_t ks[3] = {3, 3, 3}, pd[3] = {1, 1, 1}, i;
    th_tensor_t w = depth == 3 ? th_t(F32, NULL, 5, 4, 2, 3, 3, 3)
                               : th_t(F32, NULL, 4, 4, 2, 3, 3);
    th_fields_t *f = th_fields();
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, pat(i, 7, 2));
    th_f_int(f, "num_output_maps", 4);
    th_f_ints(f, "kernel_size", depth == 3 ? 3 : 2, ks);
    th_f_ints(f, "padding", depth == 3 ? 3 : 2, pd);
    th_f_int(f, "groups", 2);
    th_f_weights(f, "kernel", &w);
    th_f_str(f, "activation", "relu");
    th_free(&w);
    return f;
}

/* NaN and infinities through oneDNN's sum post-op and the ReLU as
 * through the reference: NaN stays NaN, -inf becomes 0. */
static void special_values(void)
{
    th_tensor_t in[2];
    int64_t i;

    in[0] = th_t(F32, NULL, 4, 2, 4, 7, 7);
    in[1] = th_t(F32, NULL, 4, 2, 4, 7, 7);
    for (i = 0; i < th_volume(&in[0]); i++) {
        th_set(&in[0], i, pat(i, 5, 1));
        th_set(&in[1], i, i % 29 == 3 ? NAN : i % 31 == 5 ? -INFINITY
                          : i % 37 == 7 ? INFINITY : pat(i, 2, 3));
    }
    th_set(&in[0], 17, NAN);
    th_set(&in[0], 120, -INFINITY);
    th_check_impl("onednn: NaN and infinities, residual and relu",
                  "FusedConvolution", four(2), 2, in, 1, MICA_DEVICE_CPU,
                  "onednn", 1e-4);
    th_check_impl("onednn: NaN and infinities, relu alone",
                  "FusedConvolution", four(2), 1, in, 1, MICA_DEVICE_CPU,
                  "onednn", 1e-4);
    th_free(&in[0]);
    th_free(&in[1]);
}

/*
 * supports_format, asked of instances without a GPU: the CUDA
 * implementations of a 2D layer take channels last (HWC) as Convolution
 * does, every input and the output alike; never 3D, nor formats that
 * differ; on the CPU oneDNN's too, the reference linear only.  Then both
 * CUDA implementations (where a GPU is usable) and oneDNN's run in NHWC
 * against the reference, with a bias tensor and a residual (in NHWC
 * too, reordered by the harness).
 */
static void channels_last(void)
{
    static const int64_t x4[] = {2, 4, 7, 7}, x5[] = {2, 4, 3, 7, 7};
    const uint32_t L = MICA_FORMAT_LINEAR, H = MICA_FORMAT_HWC,
                   D = MICA_FORMAT_DHWC;
    const char *const gpu[] = {"cuda", "cudnn"}, *t = "FusedConvolution";
    uint32_t cu = MICA_DEVICE_CUDA, cpu = MICA_DEVICE_CPU;
    th_tensor_t x = th_t(F16, NULL, 4, 2, 4, 7, 7), in[3];
    int k;

    for (k = 0; k < 2; k++) {
        const char *g = gpu[k];
        mica_layer_t *l;
        mica_tensor_desc_t io[4];
        int i, got;

        th_check_formats("2D", t, cu, g, four(2), F16, 4, x4, H, H, 1);
        th_check_formats("2D", t, cu, g, four(2), F32, 4, x4, H, H, 1);
        th_check_formats("2D", t, cu, g, four(2), F16, 4, x4, L, L, 1);
        th_check_formats("2D, formats differ", t, cu, g, four(2), F16, 4, x4,
                         H, L, 0);
        th_check_formats("3D", t, cu, g, four(3), F16, 5, x5, D, D, 0);
        /* x, a bias tensor and a residual, then y: one format for all */
        if (!th_has_impl(t, cu, g)) {
            skip("addends: cuda %s: not in this build", g);
            continue;
        }
        if (!(l = th_instance(t, cu, g, four(2))))
            bail("cuda %s: no instance: %s", g, th_error());
        memset(io, 0, sizeof io);
        for (i = 0; i < 4; i++) {
            io[i].dtype = F16;
            io[i].scale = 1.0f;
            io[i].format = MICA_FORMAT_HWC;
            io[i].dims.nb_dims = 4;
            memcpy(io[i].dims.d, x4, sizeof x4);
        }
        io[1].dims.d[0] = io[1].dims.d[2] = io[1].dims.d[3] = 1;
        got = 1;
        for (i = 0; i < 4; i++)
            got &= l->ops->supports_format(l, i, io, 3, 1) != 0;
        io[2].format = MICA_FORMAT_LINEAR;
        got &= !l->ops->supports_format(l, 2, io, 3, 1);
        ok(got, "addends: cuda %s: HWC for all accepted, a linear addend "
           "among them refused", g);
        l->ops->destroy(l);
    }
    th_check_formats("2D", t, cpu, "reference", four(2), F16, 4, x4, H, H, 0);
    th_check_formats("2D", t, cpu, "onednn", four(2), F16, 4, x4, H, H, 1);
    th_check_formats("2D", t, cpu, "onednn", four(2), F32, 4, x4, H, H, 1);
    th_check_formats("2D, formats differ", t, cpu, "onednn", four(2), F32, 4,
                     x4, H, L, 0);
    th_check_formats("3D", t, cpu, "onednn", four(3), F32, 5, x5, D, D, 0);

    th_channels_last(1);
    th_channels_last_cpu(1);
    in[0] = x;
    in[1] = th_t(F16, NULL, 4, 1, 4, 1, 1);
    in[2] = th_t(F16, NULL, 4, 2, 4, 7, 7);
    for (k = 0; k < 3; k++) {
        int64_t i;
        for (i = 0; i < th_volume(&in[k]); i++)
            th_set(&in[k], i, pat(i, 3 + k, 1));
    }
    for (k = 0; k < 2; k++) {
        char label[100];
        snprintf(label, sizeof label, "channels last float16: bias tensor, "
                 "residual, relu (%s)", gpu[k]);
        th_check_impl(label, t, four(2), 3, in, 1, cu, gpu[k], 2e-2);
        snprintf(label, sizeof label, "channels last float16: relu alone "
                 "(%s)", gpu[k]);
        th_check_impl(label, t, four(2), 1, in, 1, cu, gpu[k], 2e-2);
    }
    /* oneDNN in NHWC: float16 through the host epilogue (both
     * addends), float32 with the residual as a post-op, the ReLU after */
    th_check_impl("channels last float16: bias tensor, residual, relu "
                  "(onednn)", t, four(2), 3, in, 1, cpu, "onednn", 2e-2);
    for (k = 0; k < 3; k++) {
        int64_t i;
        th_tensor_t f = th_tensor(F32, 4, in[k].dims.d, NULL);
        for (i = 0; i < th_volume(&f); i++)
            th_set(&f, i, th_get(&in[k], i));
        th_free(&in[k]);
        in[k] = f;
    }
    th_free(&in[1]);
    in[1] = in[2]; /* the residual alone */
    th_check_impl("channels last float32: residual and relu (onednn)", t,
                  four(2), 2, in, 1, cpu, "onednn", 1e-4);
    th_check_impl("channels last float32: relu alone (onednn)", t, four(2),
                  1, in, 1, cpu, "onednn", 1e-4);
    in[1] = th_none();
    th_channels_last(0);
    th_channels_last_cpu(0);
    for (k = 0; k < 3; k++)
        th_free(&in[k]);
}

static void errors(void)
{
    th_tensor_t w, s = th_t(F32, NULL, 1, 2), x = th_t(F32, NULL, 4, 1, 1, 5, 5);
    th_tensor_t bad = th_t(F32, NULL, 4, 1, 1, 2, 1);
    th_tensor_t half = th_t(F16, NULL, 4, 1, 1, 3, 3);
    th_tensor_t x5 = th_t(F32, NULL, 5, 1, 1, 1, 5, 5), in[2];

    th_check_error("scale of 2 values for 1 map",
                   "FusedConvolution", th_f_weights(small(&w), "scale", &s),
                   1, &x, 1, "scale has 2 values: give 1 or num_output_maps "
                   "(1)");
    th_free(&w);
    in[0] = x;
    in[1] = bad;
    th_check_error("an addend that does not broadcast", "FusedConvolution",
                   small(&w), 2, in, 1,
                   "dimension 2 of input 1 is 2, which does not broadcast "
                   "to the output's 3");
    th_free(&w);
    in[1] = half;
    th_check_error("an addend of another type", "FusedConvolution",
                   small(&w), 2, in, 1,
                   "input 1 is float16 but input 0 is float32");
    th_free(&w);
    th_free(&s);
    s = th_t(F32, NULL, 1, 1);
    th_check_error("a batch norm on a rank-5 input of a 2D convolution",
                   "FusedConvolution", th_f_weights(small(&w), "scale", &s),
                   1, &x5, 1, "scale and shift apply along axis 1: the "
                   "input needs rank 4, got 5");
    th_free(&w);
    th_free(&s);
    th_free(&x);
    th_free(&bad);
    th_free(&half);
    th_free(&x5);
}

/* A 32->64 3x3 FusedConvolution with a batch norm and ReLU: cuDNN's
 * fused graph configurations, its plain ones (the convolution, then the
 * epilogue kernel) and the legacy algorithms, each computing the
 * reference (gc_every_tactic), float16 channels last and float32. */
static void every_tactic(void)
{
    int64_t ks[2] = {3, 3}, pd[2] = {1, 1}, i;
    th_tensor_t x = th_t(F32, NULL, 4, 1, 32, 14, 14);
    int h;

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, pat(i, 5, 1));
    for (h = 1; h >= 0; h--) {
        th_tensor_t w = th_t(F32, NULL, 4, 64, 32, 3, 3);
        th_tensor_t s = th_t(F32, NULL, 1, 64), b = th_t(F32, NULL, 1, 64);
        th_fields_t *f = th_fields();
        for (i = 0; i < th_volume(&w); i++)
            th_set(&w, i, pat(i, 7, 2) / 8);
        for (i = 0; i < 64; i++) {
            th_set(&s, i, 0.75 + 0.0078125 * (double)i);
            th_set(&b, i, pat(i, 3, 1));
        }
        th_f_int(f, "num_output_maps", 64);
        th_f_ints(f, "kernel_size", 2, ks);
        th_f_ints(f, "padding", 2, pd);
        th_f_weights(f, "kernel", &w);
        th_f_weights(f, "scale", &s);
        th_f_weights(f, "shift", &b);
        th_f_str(f, "activation", "relu");
        gc_every_tactic(h ? "tactics: batch norm and relu, float16"
                          : "tactics: batch norm and relu, float32",
                        "FusedConvolution", f, &x, h, h ? 2e-2 : 1e-4);
        th_free(&w);
        th_free(&s);
        th_free(&b);
    }
    th_free(&x);
}

int main(void)
{
    static const conv_case_t basic = {1, 2, 5, 5, 3, 3, 1, 1, 1};
    static const conv_case_t strided = {2, 3, 7, 6, 2, 3, 2, 0, 1};
    static const conv_case_t grouped = {2, 4, 5, 5, 4, 3, 1, 1, 2};

    plan_lazy();
    th_pin("reference", NULL); /* the reference against the hand's */
    check("convolution alone", &basic, 0, F32, 0);
    check("bias and relu", &basic, BIAS | RELU, F32, 0);
    check("bias, batch norm, relu", &basic, BIAS | BN | RELU, F32, 0);
    check("batch norm without bias", &basic, BN, F32, 0);
    check("uniform scale and shift, strided", &strided, BIAS | BN1, F32, 0);
    check("bias tensor and relu", &strided, ADD_A | RELU, F32, 0);
    check("residual and relu", &basic, BIAS | ADD_B | RELU, F32, 0);
    check("batch norm, bias tensor, residual, relu", &grouped,
          BN | ADD_A | ADD_B | RELU, F32, 0);
    check("bias, batch norm, residual, relu", &grouped,
          BIAS | BN | ADD_B | RELU, F16, 0);
    check("bias tensor, runtime batch", &strided, BIAS | ADD_A | RELU, F32,
          1u);
    th_pin(NULL, NULL);
    /* oneDNN: the residual as its primitive's sum post-op (float32, at
     * most a residual of y's shape), else its convolution and the
     * epilogue on the host (a broadcast addend, float16, two addends) */
    if (th_has_impl("FusedConvolution", MICA_DEVICE_CPU, "onednn")) {
        th_pin("onednn", NULL);
        check("onednn: convolution alone", &basic, 0, F32, 0);
        check("onednn: bias and relu", &basic, BIAS | RELU, F32, 0);
        check("onednn: residual and relu", &basic, BIAS | ADD_B | RELU, F32,
              0);
        check("onednn: batch norm and residual, grouped", &grouped,
              BN | ADD_B, F32, 0);
        check("onednn: residual and relu, runtime batch", &strided,
              BIAS | ADD_B | RELU, F32, 1u);
        check("onednn: bias tensor and relu", &strided, ADD_A | RELU, F32,
              0);
        check("onednn: bias tensor, residual, relu", &grouped,
              BN | ADD_A | ADD_B | RELU, F32, 0);
        check("onednn: residual and relu", &grouped,
              BIAS | BN | ADD_B | RELU, F16, 0);
        th_pin(NULL, NULL);
    }
    impls();
    every_tactic();
    special_values();
    channels_last();
    errors();
    return exit_status();
}
