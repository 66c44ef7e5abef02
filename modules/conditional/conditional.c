/*
 * modules/conditional/conditional.c - the boundary layers of a conditional
 * (TensorRT's IIfConditional): Condition, IfConditionalInput and
 * IfConditionalOutput.
 *
 *   Condition (cond)      a 0-D bool, no outputs.  READ (enqueue_boundary):
 *                         step->value is 1 if cond is true, else 0.
 *   IfConditionalInput    (x): a plain layer whose output is a copy of x
 *                         (same type and dimensions), through enqueue.
 *   IfConditionalOutput   (true_value, false_value): the output has input
 *                         0's type and dimensions; both inputs must have
 *                         one type, one rank, and the same constant
 *                         dimensions where both are constant.  SELECT
 *                         (enqueue_boundary): output = input step->branch
 *                         (0: the true value, 1: the false value), whose
 *                         run-time dimensions must be the output's.
 *
 * The core runs Condition and IfConditionalOutput through enqueue_boundary
 * only (see mica_step_kind_t in mica/layer.h): their ordinary enqueue
 * refuses.  A step kind that a role does not answer does nothing and
 * succeeds; an unknown step kind is an error.
 *
 * Types: float32, float16, bfloat16, int8, uint8, int32, int64, bool:
 * pure data movement.  LINEAR format.  CUDA: device copies on the stream;
 * a Condition READ copies the byte into a pinned host buffer (allocated
 * by initialize, or on first use) and waits for the stream.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mica/kit.h"
#if MICA_KIT_CUDA
#include "mica/kit_cuda.h"
#endif

typedef struct cond_layer {
    mica_kit_layer_t base;
    int32_t cuda;  /* the CUDA implementation */
    void *pinned;  /* CUDA Condition: READ's host buffer */
} cond_layer_t;

#define C(layer) ((cond_layer_t *)(layer))

static const char *dname(mica_dtype_t t)
{
    return mica_kit_host->dtype_name(t);
}

/* Copy `bytes` on the layer's device. */
static mica_status_t copy(const cond_layer_t *l, void *dst, const void *src,
                          size_t bytes, void *stream, mica_error_t *err)
{
    if (bytes == 0 || dst == src)
        return MICA_OK;
#if MICA_KIT_CUDA
    if (l->cuda)
        return mica_kit_cuda_copy(dst, src, bytes, stream, err);
#else
    (void)l;
#endif
    (void)stream; (void)err;
    memcpy(dst, src, bytes);
    return MICA_OK;
}

/* Input 0 any supported type, the other inputs and the output the same. */
static int32_t same_type_formats(const mica_layer_t *layer, int32_t pos,
                                 const mica_tensor_desc_t *io, int32_t nb_in,
                                 int32_t nb_out)
{
    (void)layer; (void)nb_in; (void)nb_out;
    if (!mica_kit_linear(io, pos) || !mica_kit_any_type(io[pos].dtype))
        return 0;
    return pos == 0 || io[pos].dtype == io[0].dtype;
}

/* ---- Condition ------------------------------------------------------------ */

static mica_status_t condition_output_dtypes(const mica_layer_t *layer,
                                             const mica_dtype_t *in,
                                             int32_t nb_in, mica_dtype_t *out,
                                             int32_t nb_out,
                                             mica_error_t *err)
{
    (void)layer; (void)out;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input (the condition), got %d",
                             (int)nb_in);
    if (nb_out != 0)
        return MICA_KIT_FAIL(err, "has no outputs, got %d", (int)nb_out);
    if (in[0] != MICA_BOOL)
        return MICA_KIT_FAIL(err,
                             "input 0 (the condition) has type %s but must "
                             "be bool",
                             dname(in[0]));
    return MICA_OK;
}

static mica_status_t condition_rank(const mica_dims_t *d, mica_error_t *err)
{
    if (d->nb_dims != 0)
        return MICA_KIT_FAIL(err, "the condition has rank %d but must be 0-D",
                             (int)d->nb_dims);
    return MICA_OK;
}

static mica_status_t condition_configure(mica_layer_t *layer,
                                         const mica_dyn_desc_t *in,
                                         int32_t nb_in,
                                         const mica_dyn_desc_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    (void)layer; (void)nb_in; (void)out; (void)nb_out;
    return condition_rank(&in[0].desc.dims, err);
}

static mica_status_t condition_boundary(mica_layer_t *layer,
                                        mica_step_t *step,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs, void *workspace,
                                        void *stream, mica_error_t *err)
{
    cond_layer_t *l = C(layer);
    const unsigned char *p = inputs[0];
    mica_status_t st;
    (void)out; (void)nb_out; (void)outputs; (void)workspace;

    if (step->kind > MICA_STEP_SELECT)
        return MICA_KIT_FAIL(err, "unknown step kind %u", (unsigned)step->kind);
    if (step->kind != MICA_STEP_READ)
        return MICA_OK;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input (the condition), got %d",
                             (int)nb_in);
    if (in[0].dtype != MICA_BOOL)
        return MICA_KIT_FAIL(err,
                             "input 0 (the condition) has type %s but must "
                             "be bool",
                             dname(in[0].dtype));
    if ((st = condition_rank(&in[0].dims, err)) != MICA_OK)
        return st;
#if MICA_KIT_CUDA
    if (l->cuda) {
        if ((st = mica_kit_cuda_fetch(&l->pinned, inputs[0], 1, stream,
                                      err)) != MICA_OK)
            return st;
        p = l->pinned;
    }
#else
    (void)l; (void)stream;
#endif
    step->value = p[0] != 0;
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t condition_initialize(mica_layer_t *layer, void *stream,
                                          mica_error_t *err)
{
    cond_layer_t *l = C(layer);
    (void)stream;
    if (l->pinned)
        return MICA_OK;
    return mica_kit_cuda_host_alloc(&l->pinned, err);
}

static void condition_terminate(mica_layer_t *layer)
{
    cond_layer_t *l = C(layer);
    mica_kit_cuda_host_free(l->pinned);
    l->pinned = NULL;
}

/* destroy without terminate (the buffer was allocated on first use). */
static void condition_fini(mica_kit_layer_t *base)
{
    condition_terminate(&base->layer);
}
#endif

/* ---- IfConditionalInput --------------------------------------------------- */

static mica_status_t input_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in, int32_t nb_in,
                                         mica_dtype_t *out, int32_t nb_out,
                                         mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "input 0 has type %s, which is not supported",
                             dname(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t input_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    int32_t k;
    (void)layer; (void)eb;
    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    out->nb_dims = in[0].nb_dims;
    for (k = 0; k < in[0].nb_dims; k++)
        out->d[k] = in[0].d[k];
    return MICA_OK;
}

static mica_status_t input_enqueue(mica_layer_t *layer,
                                   const mica_tensor_desc_t *in, int32_t nb_in,
                                   const mica_tensor_desc_t *out,
                                   int32_t nb_out, const void *const *inputs,
                                   void *const *outputs, void *workspace,
                                   void *stream, mica_error_t *err)
{
    int64_t n = mica_dims_volume(&out[0].dims);
    (void)nb_in; (void)nb_out; (void)workspace;
    if (in[0].dtype != out[0].dtype || mica_dims_volume(&in[0].dims) != n)
        return MICA_KIT_FAIL(err,
                             "the input (%s, %lld elements) does not match "
                             "the output (%s, %lld elements)",
                             dname(in[0].dtype),
                             (long long)mica_dims_volume(&in[0].dims),
                             dname(out[0].dtype), (long long)n);
    return copy(C(layer), outputs[0], inputs[0],
                (size_t)n * mica_dtype_size(out[0].dtype), stream, err);
}

/* ---- IfConditionalOutput -------------------------------------------------- */

static mica_status_t output_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    if (nb_in != 2)
        return MICA_KIT_FAIL(err,
                             "takes 2 inputs (true_value, false_value), got "
                             "%d",
                             (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "input 0 (the true value) has type %s, which "
                             "is not supported", dname(in[0]));
    if (in[1] != in[0])
        return MICA_KIT_FAIL(err,
                             "true and false values have different types %s "
                             "and %s",
                             dname(in[0]), dname(in[1]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t output_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in, mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int32_t k, same;
    (void)layer; (void)eb;
    if (index != 0 || nb_in != 2)
        return MICA_KIT_FAIL(err,
                             "takes 2 inputs (true_value, false_value) and "
                             "has 1 output");
    same = in[0].nb_dims == in[1].nb_dims;
    for (k = 0; same && k < in[0].nb_dims; k++)
        if (h->expr_is_constant(in[0].d[k]) &&
            h->expr_is_constant(in[1].d[k]) &&
            h->expr_constant_value(in[0].d[k]) !=
            h->expr_constant_value(in[1].d[k]))
            same = 0;
    if (!same) {
        char a[256], b[256];
        mica_kit_exprs_text(in[0].d, in[0].nb_dims, a, sizeof a);
        mica_kit_exprs_text(in[1].d, in[1].nb_dims, b, sizeof b);
        return MICA_KIT_FAIL(err, "true and false values have different shapes "
                             "%s and %s", a, b);
    }
    out->nb_dims = in[0].nb_dims;
    for (k = 0; k < in[0].nb_dims; k++)
        out->d[k] = in[0].d[k];
    return MICA_OK;
}

static int same_dims(const mica_dims_t *a, const mica_dims_t *b)
{
    int32_t k;
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (k = 0; k < a->nb_dims; k++)
        if (a->d[k] != b->d[k])
            return 0;
    return 1;
}

static mica_status_t output_boundary(mica_layer_t *layer, mica_step_t *step,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out, const void *const *inputs,
                                     void *const *outputs, void *workspace,
                                     void *stream, mica_error_t *err)
{
    int32_t b = step->branch;
    (void)workspace;

    if (step->kind > MICA_STEP_SELECT)
        return MICA_KIT_FAIL(err, "unknown step kind %u", (unsigned)step->kind);
    if (step->kind != MICA_STEP_SELECT)
        return MICA_OK;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err,
                             "takes 2 inputs (true_value, false_value) and "
                             "has 1 output");
    if (b != 0 && b != 1)
        return MICA_KIT_FAIL(err, "branch %d is neither 0 (true) nor 1 (false)",
                             (int)b);
    if (in[b].dtype != out[0].dtype || !same_dims(&in[b].dims, &out[0].dims))
        return MICA_KIT_FAIL(err,
                             "the %s value (%s, rank %d, %lld elements) does "
                             "not match the output (%s, rank %d, %lld "
                             "elements)",
                             b ? "false" : "true", dname(in[b].dtype),
                             (int)in[b].dims.nb_dims,
                             (long long)mica_dims_volume(&in[b].dims),
                             dname(out[0].dtype), (int)out[0].dims.nb_dims,
                             (long long)mica_dims_volume(&out[0].dims));
    return copy(C(layer), outputs[0], inputs[b],
                (size_t)mica_dims_volume(&out[0].dims) *
                mica_dtype_size(out[0].dtype), stream, err);
}

/* ---- ops tables and creators ---------------------------------------------- */

static const mica_layer_ops_t condition_ops_cpu =
    MICA_KIT_OPS(mica_kit_boundary_enqueue, .nb_outputs = mica_kit_no_outputs,
                 .output_dtypes = condition_output_dtypes,
                 .output_dims = mica_kit_no_output_dims,
                 .supports_format = mica_kit_bool_input,
                 .configure = condition_configure,
                 .enqueue_boundary = condition_boundary);
static const mica_layer_ops_t input_ops =
    MICA_KIT_OPS(input_enqueue, .nb_outputs = mica_kit_one_output,
                 .output_dtypes = input_output_dtypes,
                 .output_dims = input_output_dims,
                 .supports_format = same_type_formats);
static const mica_layer_ops_t output_ops =
    MICA_KIT_OPS(mica_kit_boundary_enqueue, .nb_outputs = mica_kit_one_output,
                 .output_dtypes = output_output_dtypes,
                 .output_dims = output_output_dims,
                 .supports_format = same_type_formats,
                 .enqueue_boundary = output_boundary);
#if MICA_KIT_CUDA
static const mica_layer_ops_t condition_ops_cuda =
    MICA_KIT_OPS(mica_kit_boundary_enqueue, .nb_outputs = mica_kit_no_outputs,
                 .output_dtypes = condition_output_dtypes,
                 .output_dims = mica_kit_no_output_dims,
                 .supports_format = mica_kit_bool_input,
                 .configure = condition_configure,
                 .initialize = condition_initialize,
                 .terminate = condition_terminate,
                 .enqueue_boundary = condition_boundary);
#endif

static mica_layer_t *cond_create(const mica_layer_creator_t *creator,
                                 const char *name, const mica_fields_t *fields,
                                 mica_error_t *err)
{
    cond_layer_t *l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                                         creator->user_data, creator, name,
                                         fields, err);
    if (!l)
        return NULL;
    l->cuda = (creator->devices & MICA_DEVICE_CUDA) != 0;
#if MICA_KIT_CUDA
    if (l->cuda && creator->role == MICA_ROLE_CONDITION)
        l->base.fini = condition_fini;
#endif
    return &l->base.layer;
}

/* The CUDA creators share the CPU ops but for the Condition's pinned
 * buffer: cond_create marks the layer as a CUDA one from the creator's
 * devices, and the copies follow. */
MICA_KIT_ROLE_PAIR(condition, "Condition", MICA_ROLE_CONDITION, NULL, 0,
                   cond_create, &condition_ops_cpu, &condition_ops_cuda)
MICA_KIT_ROLE_PAIR(input, "IfConditionalInput", MICA_ROLE_IF_INPUT, NULL, 0,
                   cond_create, &input_ops, &input_ops)
MICA_KIT_ROLE_PAIR(output, "IfConditionalOutput", MICA_ROLE_IF_OUTPUT, NULL,
                   0, cond_create, &output_ops, &output_ops)

static const mica_layer_creator_t *const cond_creators[] = {
    MICA_KIT_PAIR(condition), MICA_KIT_PAIR(input), MICA_KIT_PAIR(output)};

MICA_KIT_ENTRY("conditional", PACKAGE_VERSION, "MIT",
               "Conditional boundaries: Condition, IfConditionalInput, "
               "IfConditionalOutput",
               cond_creators)
