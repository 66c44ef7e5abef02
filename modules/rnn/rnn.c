/*
 * modules/rnn/rnn.c - the RNNv2 layer (TensorRT's IRNNv2Layer): params,
 * creators, shapes and types.  The params are checked in rnn_params.c,
 * the CPU reference is in rnn_ref.c, the cuDNN implementation in
 * rnn_cudnn.c, oneDNN's (the CPU's default where built) in rnn_onednn.c.
 *
 * Inputs: x [N..., T, E], then optional hidden [N..., L*D, H], cell (LSTM
 * only, as hidden) and seq_lengths [N...] (int32).  Outputs: y [N..., T,
 * D*H], the final hidden state [N..., L*D, H] and, for LSTM, the final
 * cell state.  T is at most max_seq_length and may be a runtime
 * dimension; every length is within 1..T.
 *
 * Weights: four lists, one entry per layer and direction (entry 2l + d
 * with two directions); `weights` has none for layer 0 in skip mode.  An
 * entry packs its gates one after the other in TensorRT's order, each a
 * row-major [H, in] matrix (weights) or [H] vector (biases): [G*H, in]
 * and [G*H].  Biases may be left out (zeros).  float32 or float16.
 */
#include <config.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mica/kit.h"

#include "rnn.h"

static const char *const op_names[] = {"relu", "tanh", "lstm", "gru", NULL};
static const char *const dir_names[] = {"unidirection", "bidirection", NULL};
static const char *const mode_names[] = {"linear", "skip", NULL};
static const int64_t zero[] = {0};

static const mica_field_schema_t rnn_fields[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, op_names,
     "the cell (TensorRT's RNNOperation)"},
    {"layers", MICA_FIELD_INT, 1, 1, 0, NULL, NULL, "number of layers L"},
    {"hidden_size", MICA_FIELD_INT, 1, 1, 0, NULL, NULL, "hidden size H"},
    {"max_seq_length", MICA_FIELD_INT, 1, 1, 0, NULL, NULL,
     "the longest sequence: T of input 0 is at most this"},
    {"direction", MICA_FIELD_ENUM, 1, 0, 1, zero, dir_names,
     "unidirection, or bidirection (forward and backward concatenated)"},
    {"input_mode", MICA_FIELD_ENUM, 1, 0, 1, zero, mode_names,
     "linear, or skip (layer 0's input matrices are the identity)"},
    {"weights", MICA_FIELD_WEIGHTS, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "input weights per layer and direction, [G*H, in] in TensorRT's gate "
     "order (none for layer 0 in skip mode)"},
    {"recurrent_weights", MICA_FIELD_WEIGHTS, MICA_COUNT_ANY, 1, 0, NULL,
     NULL, "recurrent weights per layer and direction, [G*H, H]"},
    {"biases", MICA_FIELD_WEIGHTS, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "input biases per layer and direction, [G*H] (absent: zeros)"},
    {"recurrent_biases", MICA_FIELD_WEIGHTS, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "recurrent biases per layer and direction, [G*H] (absent: zeros)"},
};

typedef struct rnn_layer {
    mica_kit_layer_t base;
    mica__rnn_t p;
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    mica__rnn_cudnn_t *cudnn;
#endif
#ifdef MICA_HAVE_ONEDNN
    mica__rnn_dnnl_t *dnnl;
#endif
} rnn_layer_t;

/* ---- create ------------------------------------------------------------ */

#if (MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)) || defined(MICA_HAVE_ONEDNN)
#define RNN_FINI 1
static void rnn_fini(mica_kit_layer_t *self)
{
    rnn_layer_t *l = (rnn_layer_t *)self;
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    mica__rnn_cudnn_destroy(l->cudnn);
    l->cudnn = NULL;
#endif
#ifdef MICA_HAVE_ONEDNN
    mica__rnn_dnnl_free(l->dnnl, &l->p);
    l->dnnl = NULL;
#endif
}
#endif

static mica_layer_t *rnn_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    rnn_layer_t *l;
    mica__rnn_t p;

    if (!mica__rnn_read_params(fields, &p, err))
        return NULL;
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    /* The weights of the layer's own copy of the fields. */
    if (!mica__rnn_read_params(mica_kit_fields_view(l->base.fields), &l->p,
                               err)) {
        mica_kit_layer_destroy(&l->base.layer);
        return NULL;
    }
#ifdef RNN_FINI
    l->base.fini = rnn_fini;
#endif
    return &l->base.layer;
}

/* ---- outputs: count, types, shapes -------------------------------------- */

static int32_t rnn_nb_outputs(const mica_layer_t *layer)
{
    const rnn_layer_t *l = (const rnn_layer_t *)layer;
    return l->p.op == MICA__RNN_LSTM ? 3 : 2;
}

static mica_status_t rnn_output_dtypes(const mica_layer_t *layer,
                                       const mica_dtype_t *in, int32_t nb_in,
                                       mica_dtype_t *out, int32_t nb_out,
                                       mica_error_t *err)
{
    int32_t i;
    (void)layer;
    /* Only x's type: an input left out reads as float32 here. */
    if (nb_in < 1 || nb_in > 4)
        return MICA_KIT_FAIL(err, "RNNv2 takes 1 to 4 inputs (x, hidden, "
                             "cell, seq_lengths), got %d", (int)nb_in);
    if (in[0] != MICA_FLOAT32 && in[0] != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "input 0 (x) is %s; RNNv2 takes float32 "
                             "or float16",
                             mica_kit_host->dtype_name(in[0]));
    for (i = 0; i < nb_out; i++)
        out[i] = in[0];
    return MICA_OK;
}

#define IS_C(e) mica_kit_host->expr_is_constant(e)
#define C_VAL(e) mica_kit_host->expr_constant_value(e)

/* Whether dimension expression e is a constant other than v. */
static int differs(const mica_expr_t *e, int64_t v)
{
    return IS_C(e) && C_VAL(e) != v;
}

/* Check optional input i (hidden or cell) against x's shape at build time. */
static mica_status_t check_state_dims(const mica__rnn_t *p, int32_t i,
                                      const mica_shape_expr_t *x,
                                      const mica_shape_expr_t *s,
                                      mica_error_t *err)
{
    const char *name = i == MICA__RNN_IN_H ? "hidden" : "cell";
    int32_t r = x->nb_dims, k;

    if (s->nb_dims != r)
        return MICA_KIT_FAIL(err, "input %d (%s) has rank %d; it must be "
                             "[N..., L*D, H] of rank %d like input 0",
                             (int)i, name, (int)s->nb_dims, (int)r);
    for (k = 0; k < r - 2; k++)
        if (IS_C(x->d[k]) && IS_C(s->d[k]) &&
            C_VAL(x->d[k]) != C_VAL(s->d[k]))
            return MICA_KIT_FAIL(err, "input %d (%s) has %" PRId64 " along "
                                 "axis %d but input 0 has %" PRId64, (int)i,
                                 name, C_VAL(s->d[k]), (int)k,
                                 C_VAL(x->d[k]));
    if (differs(s->d[r - 2], (int64_t)p->layers * p->dirs) ||
        differs(s->d[r - 1], p->hidden))
        return MICA_KIT_FAIL(err, "input %d (%s) must end in [%d, %d] "
                             "(layers x directions, hidden_size)", (int)i,
                             name, (int)(p->layers * p->dirs),
                             (int)p->hidden);
    return MICA_OK;
}

static mica_status_t rnn_output_dims(const mica_layer_t *layer, int32_t index,
                                     const mica_shape_expr_t *in,
                                     int32_t nb_in, mica_expr_builder_t *eb,
                                     mica_shape_expr_t *out,
                                     mica_error_t *err)
{
    const mica__rnn_t *p = &((const rnn_layer_t *)layer)->p;
    const mica_shape_expr_t *x = &in[0];
    int32_t r = x->nb_dims, i, k;
    mica_status_t st;

    if (nb_in < 1 || r < 2)
        return MICA_KIT_FAIL(err, "input 0 (x) must be [N..., T, E] of rank "
                             "2 or more, got rank %d", nb_in < 1 ? 0 : (int)r);
    if (differs(x->d[r - 1], p->input_size))
        return MICA_KIT_FAIL(err, p->skip
                             ? "input 0 (x) has %" PRId64 " values per step "
                               "but input_mode 'skip' needs hidden_size (%"
                               PRId64 ")"
                             : "input 0 (x) has %" PRId64 " values per step "
                               "but weights[0] is for %" PRId64,
                             C_VAL(x->d[r - 1]), p->input_size);
    if (IS_C(x->d[r - 2]) && C_VAL(x->d[r - 2]) > p->max_seq)
        return MICA_KIT_FAIL(err, "input 0 (x) has %" PRId64 " steps, more "
                             "than max_seq_length (%d)", C_VAL(x->d[r - 2]),
                             (int)p->max_seq);
    for (i = MICA__RNN_IN_H; i <= MICA__RNN_IN_C && i < nb_in; i++) {
        if (in[i].nb_dims < 0)
            continue;
        if (i == MICA__RNN_IN_C && p->op != MICA__RNN_LSTM)
            return MICA_KIT_FAIL(err, "input 2 (cell) is for op 'lstm' only");
        if ((st = check_state_dims(p, i, x, &in[i], err)) != MICA_OK)
            return st;
    }
    if (nb_in > MICA__RNN_IN_LENS && in[MICA__RNN_IN_LENS].nb_dims >= 0) {
        const mica_shape_expr_t *s = &in[MICA__RNN_IN_LENS];
        if (s->nb_dims != r - 2)
            return MICA_KIT_FAIL(err, "input 3 (seq_lengths) has rank %d; it "
                                 "must be [N...] of rank %d", (int)s->nb_dims,
                                 (int)(r - 2));
        for (k = 0; k < r - 2; k++)
            if (IS_C(x->d[k]) && differs(s->d[k], C_VAL(x->d[k])))
                return MICA_KIT_FAIL(err, "input 3 (seq_lengths) has %"
                                     PRId64 " along axis %d but input 0 has %"
                                     PRId64, C_VAL(s->d[k]), (int)k,
                                     C_VAL(x->d[k]));
    }
    if (index < 0 || index >= rnn_nb_outputs(layer))
        return MICA_KIT_FAIL(err, "has no output %d", (int)index);
    out->nb_dims = r;
    for (k = 0; k < r - 2; k++)
        out->d[k] = x->d[k];
    if (index == 0) {
        out->d[r - 2] = x->d[r - 2];
        out->d[r - 1] = mica_kit_host->expr_constant(
            eb, (int64_t)p->dirs * p->hidden);
    } else {
        out->d[r - 2] = mica_kit_host->expr_constant(
            eb, (int64_t)p->layers * p->dirs);
        out->d[r - 1] = mica_kit_host->expr_constant(eb, p->hidden);
    }
    for (k = 0; k < r; k++)
        if (!out->d[k])
            return MICA_KIT_FAIL(err, "out of memory for output shapes");
    return MICA_OK;
}

static int32_t rnn_supports_format(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    (void)nb_out;
    if (!mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return io[0].dtype == MICA_FLOAT32 || io[0].dtype == MICA_FLOAT16;
    if (pos == MICA__RNN_IN_LENS && pos < nb_in)
        return io[pos].dtype == MICA_INT32;
    return io[pos].dtype == io[0].dtype;
}

/* ---- the CPU implementation -------------------------------------------- */

/* The profile's largest x: rank 2 or more, at most max_seq_length steps
 * (so that the workspace, sized for them, stays small). */
static mica_status_t check_max_steps(const rnn_layer_t *l,
                                     const mica_dims_t *mx, mica_error_t *err)
{
    if (mx->nb_dims < 2)
        return MICA_KIT_FAIL(err, "input 0 (x) has rank %d, not 2 or more",
                             (int)mx->nb_dims);
    if (mx->d[mx->nb_dims - 2] > l->p.max_seq)
        return MICA_KIT_FAIL(err, "input 0 (x) has up to %" PRId64 " steps, "
                             "more than max_seq_length (%d)",
                             mx->d[mx->nb_dims - 2], (int)l->p.max_seq);
    return MICA_OK;
}

static mica_status_t rnn_configure_cpu(mica_layer_t *layer,
                                       const mica_dyn_desc_t *in,
                                       int32_t nb_in,
                                       const mica_dyn_desc_t *out,
                                       int32_t nb_out, mica_error_t *err)
{
    (void)nb_in; (void)out; (void)nb_out;
    return check_max_steps((const rnn_layer_t *)layer, &in[0].max, err);
}

static size_t rnn_workspace_cpu(const mica_layer_t *layer,
                                const mica_dyn_desc_t *in, int32_t nb_in,
                                const mica_dyn_desc_t *out, int32_t nb_out)
{
    const rnn_layer_t *l = (const rnn_layer_t *)layer;
    const mica_dims_t *mx = &in[0].max;
    (void)nb_in; (void)out; (void)nb_out;
    return mica__rnn_ref_workspace(&l->p, mx->nb_dims >= 2
                                              ? mx->d[mx->nb_dims - 2] : 0);
}

static MICA_KIT_ENQUEUE(rnn_enqueue_cpu)
{
    const rnn_layer_t *l = (const rnn_layer_t *)layer;
    mica__rnn_run_t run;
    mica_status_t st;

    if ((st = mica__rnn_check_run(&l->p, in, nb_in, inputs, &run, err)) !=
        MICA_OK)
        return st;
    if (run.has_lens &&
        (st = mica__rnn_check_lens(inputs[MICA__RNN_IN_LENS], run.batch,
                                   run.steps, err)) != MICA_OK)
        return st;
    return mica__rnn_reference(&l->p, &run, inputs, outputs, workspace, err);
}

#ifdef MICA_HAVE_ONEDNN
/* oneDNN where it computes the run (rnn_onednn.c), else the reference. */
static MICA_KIT_ENQUEUE(rnn_enqueue_dnnl)
{
    rnn_layer_t *l = (rnn_layer_t *)layer;
    mica__rnn_run_t run;
    mica_status_t st;
    int taken = 0;

    if ((st = mica__rnn_check_run(&l->p, in, nb_in, inputs, &run, err)) !=
        MICA_OK)
        return st;
    if (run.has_lens &&
        (st = mica__rnn_check_lens(inputs[MICA__RNN_IN_LENS], run.batch,
                                   run.steps, err)) != MICA_OK)
        return st;
    if ((st = mica__rnn_dnnl_run(&l->dnnl, l->base.name, &l->p, &run,
                                 inputs, outputs, &taken, err)) != MICA_OK ||
        taken)
        return st;
    return mica__rnn_reference(&l->p, &run, inputs, outputs, workspace, err);
}
#endif

#define RNN_OPS(enqueue_, ...)                                              \
    MICA_KIT_OPS(enqueue_, .nb_outputs = rnn_nb_outputs,                    \
                 .output_dtypes = rnn_output_dtypes,                        \
                 .output_dims = rnn_output_dims,                            \
                 .supports_format = rnn_supports_format, __VA_ARGS__)

static const mica_layer_ops_t rnn_ops_cpu =
    RNN_OPS(rnn_enqueue_cpu, .configure = rnn_configure_cpu,
            .workspace_size = rnn_workspace_cpu);
#ifdef MICA_HAVE_ONEDNN
static const mica_layer_ops_t rnn_ops_dnnl =
    RNN_OPS(rnn_enqueue_dnnl, .configure = rnn_configure_cpu,
            .workspace_size = rnn_workspace_cpu);
#endif

/* ---- the cuDNN implementation -------------------------------------------- */

#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
static mica_status_t rnn_configure_cudnn(mica_layer_t *layer,
                                         const mica_dyn_desc_t *in,
                                         int32_t nb_in,
                                         const mica_dyn_desc_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    rnn_layer_t *l = (rnn_layer_t *)layer;
    const mica_dims_t *mx = &in[0].max;
    int64_t batch = 1;
    int32_t k;
    mica_status_t st;
    (void)nb_in; (void)out; (void)nb_out;

    if ((st = check_max_steps(l, mx, err)) != MICA_OK)
        return st;
    for (k = 0; k < mx->nb_dims - 2; k++)
        batch *= mx->d[k];
    return mica__rnn_cudnn_configure(&l->cudnn, &l->p, in[0].desc.dtype,
                                     batch, mx->d[mx->nb_dims - 2], err);
}

static size_t rnn_workspace_cudnn(const mica_layer_t *layer,
                                  const mica_dyn_desc_t *in, int32_t nb_in,
                                  const mica_dyn_desc_t *out, int32_t nb_out)
{
    const rnn_layer_t *l = (const rnn_layer_t *)layer;
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return mica__rnn_cudnn_workspace(l->cudnn, &l->p);
}

static mica_status_t rnn_initialize_cudnn(mica_layer_t *layer, void *stream,
                                          mica_error_t *err)
{
    rnn_layer_t *l = (rnn_layer_t *)layer;
    if (!l->cudnn)
        return MICA_KIT_FAIL(err, "initialized before configure");
    return mica__rnn_cudnn_initialize(l->cudnn, &l->p, stream, err);
}

static MICA_KIT_ENQUEUE(rnn_enqueue_cudnn)
{
    rnn_layer_t *l = (rnn_layer_t *)layer;
    mica__rnn_run_t run;
    mica_status_t st;

    if (!l->cudnn)
        return MICA_KIT_FAIL(err, "enqueued before configure");
    if ((st = mica__rnn_check_run(&l->p, in, nb_in, inputs, &run, err)) !=
        MICA_OK)
        return st;
    return mica__rnn_cudnn_enqueue(l->cudnn, &l->p, &run, inputs, outputs,
                                   workspace, stream, err);
}

static const mica_layer_ops_t rnn_ops_cudnn =
    RNN_OPS(rnn_enqueue_cudnn, .configure = rnn_configure_cudnn,
            .workspace_size = rnn_workspace_cudnn,
            .initialize = rnn_initialize_cudnn);
#endif

/* ---- creators ------------------------------------------------------------ */

static const mica_layer_creator_t rnn_reference = MICA_KIT_CREATOR(
    "RNNv2", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, rnn_fields,
    MICA_KIT_COUNT(rnn_fields), rnn_create, &rnn_ops_cpu);
#ifdef MICA_HAVE_ONEDNN
static const mica_layer_creator_t rnn_onednn = MICA_KIT_CREATOR(
    "RNNv2", "onednn", MICA_DEVICE_CPU, 5, MICA_ROLE_NONE, rnn_fields,
    MICA_KIT_COUNT(rnn_fields), rnn_create, &rnn_ops_dnnl);
#endif
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
static const mica_layer_creator_t rnn_cudnn = MICA_KIT_CREATOR(
    "RNNv2", "cudnn", MICA_DEVICE_CUDA, 20, MICA_ROLE_NONE, rnn_fields,
    MICA_KIT_COUNT(rnn_fields), rnn_create, &rnn_ops_cudnn);
#endif

static const mica_layer_creator_t *const rnn_creators[] = {
    &rnn_reference,
#ifdef MICA_HAVE_ONEDNN
    &rnn_onednn,
#endif
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    &rnn_cudnn,
#endif
};

MICA_KIT_ENTRY("rnn", PACKAGE_VERSION, "MIT",
               "RNNv2: relu, tanh, LSTM and GRU layers (cuDNN on CUDA)",
               rnn_creators)
