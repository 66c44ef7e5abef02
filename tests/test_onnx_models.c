/*
 * tests/test_onnx_models.c - whole models: the light_* models that the
 * onnx wheel ships (onnx/backend/test/data/light: AlexNet, DenseNet-121,
 * Inception v1 and v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19,
 * ZFNet-512) imported in memory, built, run and compared with their
 * reference outputs (light_NAME_output_0.pb), as onnx's backend test
 * runner does: its input is arange(n) / n in float32 in the input's shape
 * (runner/__init__.py, generate_dummy_data), its tolerances those of
 * case/model/__init__.py (rtol 1e-3, 2e-3 for DenseNet-121; atol 1e-7).
 *
 * The folder comes from $MICA_ONNX_LIGHT (.ci/run sets it from the onnx
 * of its Python environment); without it the test is skipped, saying so.
 * Devices: the CPU; CUDA in float32 with the same tolerances and in
 * float16 (below), each skipped where no GPU is usable.  Arguments
 * (`cpu`, `cuda`, `fp16`) run only those parts.
 *
 * float16: the light models' weights are constants (every kernel of one
 * value, ConstantOfShape), so in most of them the activations grow layer
 * after layer far beyond float16's largest value, 65504; those models are
 * skipped in float16 with the largest activation onnxruntime computes in
 * float32.  The others run with rtol 1e-2 and atol 1e-5: float16 keeps
 * 11 significant bits (a rounding error of up to 2^-11 = 4.9e-4 per
 * layer), and through DenseNet-121's 120 convolutions (float32
 * accumulation inside each) the errors add up to about 1e-3 to 5e-3
 * relative; the CPU's float16 path gives 5e-4 on DenseNet-121.
 */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "mica/mica.h"

typedef struct model {
    const char *name;
    double rtol;
    const char *no_half;     /* why float16 cannot run it, or NULL */
} model_t;

static const model_t models[] = {
    {"bvlc_alexnet", 1e-3, "activations reach 3.6e12"},
    {"densenet121", 2e-3, NULL},
    {"inception_v1", 1e-3, "activations reach 1.2e21"},
    {"inception_v2", 1e-3, NULL},
    {"resnet50", 1e-3, "activations reach 1.3e19"},
    {"shufflenet", 1e-3, NULL},
    {"squeezenet", 1e-3, "activations reach 1.4e10"},
    {"vgg19", 1e-3, "activations reach 3.7e31"},
    {"zfnet512", 1e-3, "activations reach 4.1e12"},
};
#define NB_MODELS ((int)(sizeof models / sizeof models[0]))

static const double abs_tol = 1e-7, half_rtol = 1e-2, half_atol = 1e-5;

static char why[1024];

static int fail(const char *fmt, ...) TAP_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return -1;
}

/* onnx's dummy input: element i of n is (float)(i / n), computed in
 * double as numpy's arange(n) / n is. */
static float *dummy_input(const mica_dims_t *dims, int64_t *n)
{
    int64_t i, vol = mica_dims_volume(dims);
    float *p = vol > 0 ? malloc((size_t)vol * sizeof *p) : NULL;
    for (i = 0; p && i < vol; i++)
        p[i] = (float)((double)i / (double)vol);
    *n = vol;
    return p;
}

/* Compare as numpy's assert_allclose; the largest error in *maxerr. */
static int compare(const mica_tensor_desc_t *got, const float *g,
                   const mica_tensor_desc_t *want, const float *w,
                   double rtol, double at, double *maxerr)
{
    int64_t i, n = mica_dims_volume(&want->dims);
    *maxerr = 0;
    if (got->dtype != MICA_FLOAT32 || want->dtype != MICA_FLOAT32)
        return fail("the output is %s, the reference %s (float32 wanted)",
                    mica_dtype_name(got->dtype),
                    mica_dtype_name(want->dtype));
    /* A reference [1, 1000, 1, 1] and an output [1, 1000] hold the same
     * values: the volumes must agree, as numpy's reshape would need. */
    if (mica_dims_volume(&got->dims) != n)
        return fail("the output has %lld elements, the reference %lld",
                    (long long)mica_dims_volume(&got->dims), (long long)n);
    for (i = 0; i < n; i++) {
        double a = g[i], b = w[i], e = fabs(a - b);
        if (!(e <= at + rtol * fabs(b)))
            return fail("element %lld is %.9g, the reference %.9g (rtol "
                        "%g, atol %g)", (long long)i, a, b, rtol, at);
        if (e > *maxerr)
            *maxerr = e;
    }
    return 0;
}

/* Import, build, run and compare one model; 0, or -1 with `why`. */
static int run_model(mica_context_t *ctx, const char *dir, const model_t *md,
                     uint32_t device, int half, double *maxerr)
{
    char path[4096];
    mica_onnx_model_t *om = NULL;
    mica_manifest_t *m = NULL;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_build_config_t cfg;
    mica_tensor_info_t info;
    mica_tensor_desc_t ref, d;
    void *ref_data = NULL;
    const void *out;
    float *in = NULL;
    int64_t n;
    int rc = -1;

    snprintf(path, sizeof path, "%s/light_%s_output_0.pb", dir, md->name);
    if (mica_onnx_read_tensor(ctx, path, &ref, &ref_data) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    snprintf(path, sizeof path, "%s/light_%s.onnx", dir, md->name);
    if (mica_onnx_import(ctx, path, NULL, &om) != MICA_OK
        || mica_onnx_manifest(om, &m) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (half)
        cfg.precisions = 1u << MICA_FLOAT16;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &engine)
        != MICA_OK || mica_exec_create(engine, &exec) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    /* The engine holds what it needs: the import's weights can go. */
    mica_manifest_destroy(m);
    m = NULL;
    mica_onnx_destroy(om);
    om = NULL;
    if (mica_engine_nb_inputs(engine) != 1
        || mica_engine_nb_outputs(engine) != 1) {
        fail("the network has %d inputs and %d outputs, not one each",
             (int)mica_engine_nb_inputs(engine),
             (int)mica_engine_nb_outputs(engine));
        goto out;
    }
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    mica_engine_tensor(engine, mica_engine_input(engine, 0), &info);
    if (info.dtype != MICA_FLOAT32) {
        fail("input '%s' is %s, not float32", info.name,
             mica_dtype_name(info.dtype));
        goto out;
    }
    if (!(in = dummy_input(&info.dims, &n))) {
        fail("input '%s': no memory for its %lld elements", info.name,
             (long long)n);
        goto out;
    }
    if (mica_exec_set_input(exec, info.name, &info.dims, in) != MICA_OK
        || mica_exec_infer_shapes(exec) != MICA_OK
        || mica_exec_run(exec) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    mica_engine_tensor(engine, mica_engine_output(engine, 0), &info);
    if (mica_exec_get_output(exec, info.name, &d, &out) != MICA_OK) {
        fail("%s", mica_context_error(ctx));
        goto out;
    }
    if (compare(&d, out, &ref, ref_data, half ? half_rtol : md->rtol,
                half ? half_atol : abs_tol, maxerr) != 0)
        goto out;
    rc = 0;
out:
    if (exec)
        mica_exec_destroy(exec);
    if (engine)
        mica_engine_destroy(engine);
    mica_manifest_destroy(m);
    mica_onnx_destroy(om);
    mica_free(ref_data);
    free(in);
    return rc;
}

static int wanted(int argc, char **argv, const char *part)
{
    int i;
    if (argc < 2)
        return 1;
    for (i = 1; i < argc; i++)
        if (!strcmp(argv[i], part))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("MICA_ONNX_LIGHT");
    const char *preload = getenv("LD_PRELOAD");
    int cpu = wanted(argc, argv, "cpu"), cuda = wanted(argc, argv, "cuda"),
        fp16 = wanted(argc, argv, "fp16"), gpu, i, pass;
    mica_context_t *ctx = NULL;
    char path[4096];

    if (!mica_onnx_available())
        skip_all("this mica was built without the ONNX importer");
    if (!dir || !*dir)
        skip_all("MICA_ONNX_LIGHT is not set: it names the onnx wheel's "
                 "folder onnx/backend/test/data/light (.ci/run sets it "
                 "from its Python environment)");
    snprintf(path, sizeof path, "%s/light_resnet50.onnx", dir);
    if (access(path, R_OK) != 0)
        skip_all("no light_resnet50.onnx in MICA_ONNX_LIGHT=%s", dir);
    /* Under valgrind (make check-valgrind) the models take an hour. */
    if (preload && strstr(preload, "vgpreload"))
        skip_all("under valgrind: nine CNNs at 224x224 take too long");
    if (mica_context_create(&ctx) != MICA_OK
        || mica_context_load_default_modules(ctx) != MICA_OK)
        bail("cannot set up a context: %s", mica_context_error(ctx));
    gpu = mica_device_usable(MICA_DEVICE_CUDA);
    plan(NB_MODELS * (cpu + cuda + fp16));
    for (pass = 0; pass < 3; pass++) {
        static const char *const label[] = {"cpu float32", "cuda float32",
                                            "cuda float16"};
        if (!(pass == 0 ? cpu : pass == 1 ? cuda : fp16))
            continue;
        for (i = 0; i < NB_MODELS; i++) {
            const model_t *md = &models[i];
            double err = 0;
            if (pass > 0 && !gpu) {
                skip("%s %s: no usable GPU", label[pass], md->name);
                continue;
            }
            if (pass == 2 && md->no_half) {
                skip("%s %s: %s in float32, beyond float16's 65504 (its "
                     "weights are constants)", label[pass], md->name,
                     md->no_half);
                continue;
            }
            if (run_model(ctx, dir, md,
                          pass ? MICA_DEVICE_CUDA : MICA_DEVICE_CPU,
                          pass == 2, &err) == 0)
                ok(1, "%s %s (largest error %.3g)", label[pass], md->name,
                   err);
            else
                ok(0, "%s %s: %s", label[pass], md->name, why);
        }
    }
    mica_context_destroy(ctx);
    return exit_status();
}
