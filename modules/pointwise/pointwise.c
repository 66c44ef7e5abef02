/*
 * modules/pointwise/pointwise.c - the Pointwise layer: creators and
 * layer ops (see pointwise.h; docs/manifest.md's Pointwise section for
 * the params and the program's language).
 *
 * Its outputs: one per name of `results`, each of the dtype its program
 * makes and of the broadcast shape of the inputs it reads.  Any memory
 * format, linear or channels last, for each input; the outputs in one.
 *
 * CPU: `reference`, the block evaluator (pw_cpu.c), which computes what
 * the layers of the program compute one by one, bit for bit.  CUDA:
 * `cuda`, kernels generated from the program and compiled with NVRTC in
 * configure (when the engine is built, for the types it runs with), the
 * code then part of the layer's fields (param `code`), so that what the
 * engine saves and every clone share it and loading needs no compiler.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"

#include "pointwise.h"
#if MICA_KIT_CUDA
#include "pw_cuda.h"
#endif

static const mica_field_schema_t pw_fields[] = {
    {"program", MICA_FIELD_STRING, MICA_COUNT_ANY, 1, 0, NULL, NULL,
     "the instructions, one per line: NAME = OP(OPERANDS, PARAM=VALUE...)"},
    {"results", MICA_FIELD_STRING, MICA_COUNT_ANY, 1, 0, NULL, NULL,
     "the value of each output, in order (in0.., or a NAME)"},
    {"weights", MICA_FIELD_WEIGHTS, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "coefficients of scale instructions, named w0, w1... there"},
    {"code", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "the compiled CUDA kernels, made when the engine is built (leave it "
     "out)"},
};

typedef struct pw_layer {
    mica_kit_layer_t base;
    pw_prog_t prog;
    pw_cpu_t *cpu;
    mica_dtype_t *types;            /* per instruction, for typed_in */
    mica_dtype_t typed_in[PW_MAX_INPUTS];
    int32_t nb_typed;               /* -1: not typed yet */
    pw_view_t views[PW_MAX_OUTPUTS];
#if MICA_KIT_CUDA
    pw_gpu_t *gpu;
#endif
} pw_layer_t;

/* ---- types and shapes ----------------------------------------------------- */

static int32_t pw_nb_outputs(const mica_layer_t *layer)
{
    return ((const pw_layer_t *)layer)->prog.nb_out;
}

static mica_status_t pw_output_dtypes(const mica_layer_t *layer,
                                      const mica_dtype_t *in, int32_t nb_in,
                                      mica_dtype_t *out, int32_t nb_out,
                                      mica_error_t *err)
{
    const pw_layer_t *l = (const pw_layer_t *)layer;
    mica_dtype_t *types;
    mica_status_t st;

    if (nb_out != l->prog.nb_out)
        return MICA_KIT_FAIL(err, "Pointwise has %d outputs (param "
                             "'results'), got %d", (int)l->prog.nb_out,
                             (int)nb_out);
    if (!(types = malloc(sizeof *types * (size_t)l->prog.nb_ins)))
        return MICA_KIT_FAIL(err, "out of host memory");
    st = pw_prog_types(&l->prog, in, nb_in, types, out, err);
    free(types);
    return st;
}

static int is_const(const mica_expr_t *e, int64_t *v)
{
    if (!mica_kit_host->expr_is_constant(e))
        return 0;
    *v = mica_kit_host->expr_constant_value(e);
    return 1;
}

static mica_status_t pw_output_dims(const mica_layer_t *layer, int32_t index,
                                    const mica_shape_expr_t *in,
                                    int32_t nb_in, mica_expr_builder_t *eb,
                                    mica_shape_expr_t *out, mica_error_t *err)
{
    const pw_layer_t *l = (const pw_layer_t *)layer;
    const pw_cls_t *c;
    mica_shape_expr_t sel[PW_MAX_INPUTS];
    mica_tensor_desc_t known[PW_MAX_INPUTS];
    int32_t k, j, n = 0, all = 1;
    mica_status_t st;

    if (index < 0 || index >= l->prog.nb_out || nb_in < l->prog.nb_inputs ||
        nb_in > PW_MAX_INPUTS)
        return MICA_KIT_FAIL(err, "Pointwise has %d outputs and reads %d "
                             "inputs, asked for output %d of %d inputs",
                             (int)l->prog.nb_out, (int)l->prog.nb_inputs,
                             (int)index, (int)nb_in);
    /* where every input's dims are known: the program's own checks
     * (inner broadcasts, Scale's counts) at build time */
    memset(known, 0, sizeof known);
    for (k = 0; k < l->prog.nb_inputs && all; k++) {
        known[k].dims.nb_dims = in[k].nb_dims;
        for (j = 0; j < in[k].nb_dims && all; j++)
            all = is_const(in[k].d[j], &known[k].dims.d[j]);
    }
    if (all && (st = pw_shapes_check(&l->prog, known, err)) != MICA_OK)
        return st;
    c = &l->prog.cls[l->prog.out_cls[index]];
    for (k = 0; k < PW_MAX_INPUTS; k++)
        if (c->mask & ((uint64_t)1 << k))
            sel[n++] = in[k];
    return mica_kit_broadcast_dims(sel, n, eb, out, err);
}

/*
 * Linear or channels last for every tensor (a view reads any layout);
 * the outputs in one format, each of the type the program makes of the
 * inputs' types.
 */
static int32_t pw_supports_format(const mica_layer_t *layer, int32_t pos,
                                  const mica_tensor_desc_t *io, int32_t nb_in,
                                  int32_t nb_out)
{
    const pw_layer_t *l = (const pw_layer_t *)layer;
    mica_dtype_t in[PW_MAX_INPUTS], out[PW_MAX_OUTPUTS], *types;
    int32_t k, ok;

    if (pos < 0 || pos >= nb_in + nb_out || nb_in > PW_MAX_INPUTS ||
        nb_out != l->prog.nb_out || !mica_kit_any_type(io[pos].dtype) ||
        (!mica_kit_linear(io, pos) &&
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims)))
        return 0;
    if (pos < nb_in)
        return 1;
    if (pos > nb_in && io[pos].format != io[nb_in].format)
        return 0;
    for (k = 0; k < nb_in; k++)
        in[k] = io[k].dtype;
    if (!(types = malloc(sizeof *types * (size_t)l->prog.nb_ins)))
        return 0;
    /* a refusal is told by output_dtypes; here only whether */
    ok = pw_prog_types(&l->prog, in, nb_in, types, out, NULL) == MICA_OK &&
         out[pos - nb_in] == io[pos].dtype;
    free(types);
    return ok;
}

/* Type the program for the inputs' dtypes, unless it is. */
static mica_status_t typed(pw_layer_t *l, const mica_dtype_t *in,
                           int32_t nb_in, mica_error_t *err)
{
    mica_status_t st;
    int32_t k;

    if (l->nb_typed == nb_in) {
        for (k = 0; k < nb_in && l->typed_in[k] == in[k]; k++)
            ;
        if (k == nb_in)
            return MICA_OK;
    }
    l->nb_typed = -1;
    if ((st = pw_prog_types(&l->prog, in, nb_in, l->types, NULL, err)) !=
        MICA_OK)
        return st;
    memcpy(l->typed_in, in, sizeof *in * (size_t)nb_in);
    l->nb_typed = nb_in;
    return MICA_OK;
}

static mica_status_t typed_descs(pw_layer_t *l, const mica_tensor_desc_t *in,
                                 int32_t nb_in, mica_error_t *err)
{
    mica_dtype_t t[PW_MAX_INPUTS];
    int32_t k;

    if (nb_in > PW_MAX_INPUTS)
        return MICA_KIT_FAIL(err, "Pointwise takes at most %d inputs, got "
                             "%d", PW_MAX_INPUTS, (int)nb_in);
    for (k = 0; k < nb_in; k++)
        t[k] = in[k].dtype;
    return typed(l, t, nb_in, err);
}

/* ---- the CPU -------------------------------------------------------------- */

static size_t pw_workspace_cpu(const mica_layer_t *layer,
                               const mica_dyn_desc_t *in, int32_t nb_in,
                               const mica_dyn_desc_t *out, int32_t nb_out)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return pw_cpu_workspace(((const pw_layer_t *)layer)->cpu);
}

static MICA_KIT_ENQUEUE(pw_enqueue_cpu)
{
    pw_layer_t *l = (pw_layer_t *)layer;
    mica_status_t st;

    if ((st = typed_descs(l, in, nb_in, err)) != MICA_OK ||
        (st = pw_views(&l->prog, in, nb_in, out, nb_out, l->views, err)) !=
            MICA_OK)
        return st;
    if (!workspace)
        return MICA_KIT_FAIL(err, "Pointwise on the CPU needs its "
                             "workspace");
    return pw_cpu_run(l->cpu, &l->prog, l->types, in, out, inputs, outputs,
                      l->views, workspace, err);
}

/* ---- CUDA --------------------------------------------------------------- */

#if MICA_KIT_CUDA
/* The layer's code param, read; 0 when it has none. */
static int code_of(const pw_layer_t *l, pw_code_t *code)
{
    const mica_weights_t *w = mica_kit_weights(
        mica_kit_fields_view(l->base.fields), "code");
    return w && w->count > 0 &&
           pw_code_read(w->values, (size_t)w->count, code);
}

/* The layer's fields with `code` (size bytes) in place of any code. */
static mica_status_t set_code(pw_layer_t *l, const unsigned char *bytes,
                              size_t size, mica_error_t *err)
{
    const mica_fields_t *old = mica_kit_fields_view(l->base.fields);
    mica_field_t f[16];
    mica_fields_t nf;
    mica_weights_t w;
    mica_kit_fields_t *copy;
    int32_t i, n = 0;

    memset(&w, 0, sizeof w);
    w.dtype = MICA_UINT8;
    w.count = (int64_t)size;
    w.values = bytes;
    w.dims.nb_dims = 1;
    w.dims.d[0] = (int64_t)size;
    for (i = 0; i < old->nb_fields && n < 15; i++)
        if (strcmp(old->fields[i].name, "code") != 0)
            f[n++] = old->fields[i];
    f[n].name = "code";
    f[n].type = MICA_FIELD_WEIGHTS;
    f[n].count = 1;
    f[n].data = &w;
    nf.nb_fields = n + 1;
    nf.fields = f;
    if (!(copy = mica_kit_fields_copy(&nf)))
        return MICA_KIT_FAIL(err, "out of host memory");
    mica_kit_fields_free(l->base.fields);
    l->base.fields = copy;
    return MICA_OK;
}

/*
 * The kernels for the inputs' types: the layer's code where it was made
 * from this very source (an engine loaded, a clone), else compiled now
 * (NVRTC) and kept in its fields.
 */
static mica_status_t pw_configure_cuda(mica_layer_t *layer,
                                       const mica_dyn_desc_t *in,
                                       int32_t nb_in,
                                       const mica_dyn_desc_t *out,
                                       int32_t nb_out, mica_error_t *err)
{
    pw_layer_t *l = (pw_layer_t *)layer;
    mica_dtype_t t[PW_MAX_INPUTS];
    unsigned char *bytes = NULL;
    size_t size = 0;
    pw_code_t code;
    char *src;
    mica_status_t st;
    int32_t k;

    (void)out; (void)nb_out;
    if (nb_in > PW_MAX_INPUTS)
        return MICA_KIT_FAIL(err, "Pointwise takes at most %d inputs, got "
                             "%d", PW_MAX_INPUTS, (int)nb_in);
    for (k = 0; k < nb_in; k++)
        t[k] = in[k].desc.dtype;
    if ((st = typed(l, t, nb_in, err)) != MICA_OK)
        return st;
    if (!(src = pw_gen_source(&l->prog, t, nb_in, l->types)))
        return MICA_KIT_FAIL(err, "out of host memory");
    if (code_of(l, &code) && code.hash == pw_cuda_hash(src)) {
        free(src);
        return MICA_OK;
    }
    st = pw_cuda_compile(src, l->base.name, &bytes, &size, err);
    free(src);
    if (st == MICA_OK) {
        /* another code: the context's module, if any, is stale */
        pw_cuda_free(l->gpu);
        l->gpu = NULL;
        st = set_code(l, bytes, size, err);
    }
    free(bytes);
    return st;
}

static mica_status_t pw_initialize_cuda(mica_layer_t *layer, void *stream,
                                        mica_error_t *err)
{
    pw_layer_t *l = (pw_layer_t *)layer;
    pw_code_t code;

    (void)stream;
    if (l->gpu)
        return MICA_OK;
    if (!code_of(l, &code))
        return MICA_KIT_FAIL(err, "Pointwise layer '%s' has no compiled "
                             "kernels (it was never configured)",
                             l->base.name);
    return pw_cuda_init(&l->prog, &code, l->base.name, &l->gpu, err);
}

static void pw_terminate_cuda(mica_layer_t *layer)
{
    pw_layer_t *l = (pw_layer_t *)layer;
    pw_cuda_free(l->gpu);
    l->gpu = NULL;
}

static MICA_KIT_ENQUEUE(pw_enqueue_cuda)
{
    pw_layer_t *l = (pw_layer_t *)layer;
    mica_status_t st;

    if ((st = typed_descs(l, in, nb_in, err)) != MICA_OK ||
        (st = pw_initialize_cuda(layer, stream, err)) != MICA_OK ||
        (st = pw_views(&l->prog, in, nb_in, out, nb_out, l->views, err)) !=
            MICA_OK)
        return st;
    return pw_cuda_run(l->gpu, &l->prog, in, out, inputs, outputs, l->views,
                       stream, err);
}
#endif

/* ---- creators ------------------------------------------------------------- */

static void pw_fini(mica_kit_layer_t *self)
{
    pw_layer_t *l = (pw_layer_t *)self;
#if MICA_KIT_CUDA
    pw_cuda_free(l->gpu);
    l->gpu = NULL;
#endif
    pw_cpu_free(l->cpu);
    free(l->types);
    pw_prog_free(&l->prog);
}

static mica_layer_t *pw_create(const mica_layer_creator_t *creator,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    const mica_weights_t *code = mica_kit_weights(fields, "code");
    pw_layer_t *l;

    if (code && (code->dtype != MICA_UINT8 || code->count < 0)) {
        mica_kit_host->set_error(err, "param 'code' must be uint8 weights, "
                                 "got %s", mica_kit_host->dtype_name(
                                               code->dtype));
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->base.fini = pw_fini;
    l->nb_typed = -1;
    if (pw_prog_parse(mica_kit_fields_view(l->base.fields), &l->prog, err) !=
            MICA_OK ||
        !(l->cpu = pw_cpu_new(&l->prog, err)))
        goto fail;
    if (!(l->types = malloc(sizeof *l->types * (size_t)l->prog.nb_ins))) {
        mica_kit_host->set_error(err, "out of host memory");
        goto fail;
    }
    return &l->base.layer;
fail:
    mica_kit_layer_destroy(&l->base.layer);
    return NULL;
}

#define PW_OPS(...)                                                         \
    MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = pw_nb_outputs,                  \
                 .output_dtypes = pw_output_dtypes,                         \
                 .output_dims = pw_output_dims,                             \
                 .supports_format = pw_supports_format)

static const mica_layer_ops_t pw_ops_cpu =
    PW_OPS(pw_enqueue_cpu, .workspace_size = pw_workspace_cpu);
#if MICA_KIT_CUDA
static const mica_layer_ops_t pw_ops_cuda =
    PW_OPS(pw_enqueue_cuda, .configure = pw_configure_cuda,
           .initialize = pw_initialize_cuda,
           .terminate = pw_terminate_cuda);
#endif

MICA_KIT_CREATOR_PAIR(pw, "Pointwise", pw_fields, MICA_KIT_COUNT(pw_fields),
                      pw_create, &pw_ops_cpu, &pw_ops_cuda)

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(pw)};

MICA_KIT_ENTRY("pointwise", PACKAGE_VERSION, "MIT",
               "Pointwise: a program of element-by-element operations, "
               "generated kernels", creators)
