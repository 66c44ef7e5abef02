/*
 * modules/convolution/convolution.c - the Convolution and Deconvolution
 * layers (TensorRT's IConvolutionLayer and IDeconvolutionLayer): params,
 * shapes and the creators of their implementations.
 *
 * One input [..., C, (D,) H, W] (float32 or float16; the dimensions
 * before C are batch dimensions), one output [..., M, (D',) H', W'] of
 * its type.  Without the kernel param, the kernel is input 1 and a bias
 * input 2, of the input's type (TensorRT 10's kernel input): the
 * reference and cuda implementations take them, the others do not.  The kernel's rank (kernel_size: 2 or 3 values) decides 2D or
 * 3D.  Weights (float32 or float16) are read as floats; see conv.h for
 * their layouts and conv_ref.c for the arithmetic.
 *
 * Implementations, for both types: "reference" (CPU, 0, conv_ref.c),
 * "onednn" (CPU, 5, conv_onednn.c, when configure found oneDNN), "cuda"
 * (CUDA, 10, hand-written kernels in conv_cuda.cu) and "cudnn" (CUDA, 20,
 * conv_cudnn.c, when configure found cuDNN).  The layer code itself is
 * conv_layer.c; this file holds what is the types' own.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "conv.h"
#include "conv_layer.h"
#include "fused_conv.h"

mica_status_t mica__conv_params_read(const mica_fields_t *f, int deconv,
                                     mica__conv_params_t *p,
                                     mica_error_t *err)
{
    const char *type = deconv ? "Deconvolution" : "Convolution";
    int64_t count, per, mpg, i;
    mica_status_t st;
    char buf[128];

    memset(p, 0, sizeof *p);
    p->deconv = deconv;
    if ((st = mica__window_read(f, "kernel_size", 1, deconv, &p->win, err)) !=
        MICA_OK)
        return st;
    p->m = mica_kit_int(f, "num_output_maps", 0);
    p->groups = mica_kit_int(f, "groups", 1);
    p->kernel = mica_kit_weights(f, "kernel");
    p->bias = mica_kit_weights(f, "bias");
    if (p->m < 1)
        return MICA_KIT_FAIL(err, "num_output_maps is %lld: it must be >= 1",
                             (long long)p->m);
    if (p->groups < 1 || p->m % p->groups != 0)
        return MICA_KIT_FAIL(err, "groups is %lld: it must be >= 1 and "
                             "divide num_output_maps (%lld)",
                             (long long)p->groups, (long long)p->m);
    /* kernel_size values are below 2^31 (kit_window.c) but three of them,
     * times num_output_maps, can leave 64 bits: every product is checked,
     * and a kernel has at least that many values, so that the products of
     * these factors made later stay below its count */
    mica__window_text(&p->win, p->win.k, buf, sizeof buf);
    p->kvol = 1;
    for (i = 0; i < 3; i++)
        if (__builtin_mul_overflow(p->kvol, p->win.k[i], &p->kvol))
            break;
    mpg = p->m / p->groups;
    if (i < 3 ||
        __builtin_mul_overflow(deconv ? mpg : p->m, p->kvol, &per))
        return MICA_KIT_FAIL(err, "%s (%lld) x kernel_size %s is more than "
                             "2^63 - 1 kernel values: no kernel has that "
                             "many", deconv ? "num_output_maps / groups"
                                            : "num_output_maps",
                             (long long)(deconv ? mpg : p->m), buf);
    if (!p->kernel) {
        /* The kernel (and a bias) as inputs: checked by shape inference
         * and configure, the input channels known from the kernel's. */
        if (p->bias)
            return MICA_KIT_FAIL(err, "a bias given as weights with the "
                                 "kernel as an input: give the bias as "
                                 "input 2 too");
        return MICA_OK;
    }
    if (p->kernel->dtype != MICA_FLOAT32 && p->kernel->dtype != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "kernel is %s: give float32 or float16 "
                             "weights",
                             mica_kit_host->dtype_name(p->kernel->dtype));
    if (p->bias && p->bias->dtype != MICA_FLOAT32 &&
        p->bias->dtype != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "bias is %s: give float32 or float16 "
                             "weights",
                             mica_kit_host->dtype_name(p->bias->dtype));
    if (p->bias && p->bias->count != p->m)
        return MICA_KIT_FAIL(err, "bias has %lld values but num_output_maps "
                             "is %lld", (long long)p->bias->count,
                             (long long)p->m);
    count = p->kernel->count;
    if (count % per != 0)
        return MICA_KIT_FAIL(err, "kernel has %lld values, not a multiple of "
                             "%s (%lld) x kernel_size %s: %s expects a "
                             "kernel %s", (long long)count,
                             deconv ? "num_output_maps / groups"
                                    : "num_output_maps",
                             (long long)(deconv ? mpg : p->m), buf, type,
                             deconv ? "[C, M/groups, kernel...]"
                                    : "[M, C/groups, kernel...]");
    p->c = deconv ? count / per : count / per * p->groups;
    if (deconv && p->c % p->groups != 0)
        return MICA_KIT_FAIL(err, "kernel has %lld values, so %lld input "
                             "channels, which groups (%lld) does not divide",
                             (long long)count, (long long)p->c,
                             (long long)p->groups);
    return MICA_OK;
}

mica_status_t mica__conv_check_input(const mica__conv_params_t *p,
                                     int32_t rank, int64_t channels,
                                     int known, mica_error_t *err)
{
    const char *type = p->deconv ? "Deconvolution" : "Convolution";
    int32_t nd = p->win.nd;

    if (rank < nd + 2)
        return MICA_KIT_FAIL(err, "input has rank %d but a %dD %s needs rank "
                             ">= %d (%s)", (int)rank, (int)nd, type,
                             (int)(nd + 2),
                             nd == 2 ? "[N, C, H, W]" : "[N, C, D, H, W]");
    if (known && p->kernel && channels != p->c)
        return MICA_KIT_FAIL(err, "input has %lld channels (dimension %d) "
                             "but the kernel (%lld values) is made for %lld "
                             "with num_output_maps %lld and groups %lld",
                             (long long)channels, (int)(rank - nd - 1),
                             (long long)p->kernel->count, (long long)p->c,
                             (long long)p->m, (long long)p->groups);
    return MICA_OK;
}

/* ---- the creators ------------------------------------------------------- */

static const int64_t one = 1;

static const mica_field_schema_t conv_fields[] = {
    MICA__CONV_FIELDS(&one, "weights [M, C/groups, (kD,) kH, kW], float32 "
                            "or float16")};
static const mica_field_schema_t deconv_fields[] = {
    MICA__CONV_FIELDS(&one, "weights [C, M/groups, (kD,) kH, kW], float32 "
                            "or float16")};

#define CREATOR(type_, impl_, dev_, prio_, fields_, info_)                  \
    MICA_KIT_CREATOR(type_, impl_, dev_, prio_, MICA_ROLE_NONE, fields_,    \
                     MICA_KIT_COUNT(fields_), mica__conv_create, &(info_))

/* One implementation of both types: the creators creator_conv_<id_> and
 * creator_deconv_<id_>, whose user_data name `ops_` and `kind_`. */
#define IMPL(id_, ops_, kind_, impl_, dev_, prio_)                          \
    static const mica__conv_impl_t conv_##id_ = {&(ops_), 0, (kind_)};      \
    static const mica__conv_impl_t deconv_##id_ = {&(ops_), 1, (kind_)};    \
    static const mica_layer_creator_t creator_conv_##id_ = CREATOR(         \
        "Convolution", impl_, dev_, prio_, conv_fields, conv_##id_);        \
    static const mica_layer_creator_t creator_deconv_##id_ = CREATOR(       \
        "Deconvolution", impl_, dev_, prio_, deconv_fields, deconv_##id_)

IMPL(ref, mica__conv_ops_ref, MICA__CONV_REFERENCE, "reference",
     MICA_DEVICE_CPU, 0);

#ifdef MICA_HAVE_ONEDNN
IMPL(dnnl, mica__conv_ops_dnnl, MICA__CONV_ONEDNN, "onednn", MICA_DEVICE_CPU,
     5);
#define DNNL_CREATORS , &creator_conv_dnnl, &creator_deconv_dnnl
#else
#define DNNL_CREATORS
#endif

#if MICA_KIT_CUDA
IMPL(cuda, mica__conv_ops_gpu, MICA__CONV_CUDA, "cuda", MICA_DEVICE_CUDA, 10);
#define CUDA_CREATORS , &creator_conv_cuda, &creator_deconv_cuda
#else
#define CUDA_CREATORS
#endif

#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
IMPL(cudnn, mica__conv_ops_cudnn, MICA__CONV_CUDNN, "cudnn", MICA_DEVICE_CUDA,
     20);
#define CUDNN_CREATORS , &creator_conv_cudnn, &creator_deconv_cudnn
#else
#define CUDNN_CREATORS
#endif

static const mica_layer_creator_t *const conv_creators[] = {
    &creator_conv_ref, &creator_deconv_ref DNNL_CREATORS CUDA_CREATORS
        CUDNN_CREATORS MICA__FUSED_CONV_CREATORS};

MICA_KIT_ENTRY_FUSION("convolution", PACKAGE_VERSION, "MIT",
                      "Convolution and Deconvolution, 2D and 3D; "
                      "FusedConvolution and its fusion rules",
                      conv_creators, mica__fused_conv_rules)
