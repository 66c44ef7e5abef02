/*
 * tests/abi2/abi2.c - a test module of the ABI's capabilities appended
 * after version 1's first members (mica/layer.h), written with the module
 * kit as a third party would, CPU only.  Its layer types:
 *
 *   TacticAdd  y = x + the tactic it was told (float32).  Implementation
 *              "reference" (priority 0) offers tactics 2 then 1, tactic 2
 *              taking at least 20 ms a run; "plain" (priority 5) offers
 *              none, adds 100 and takes at least 20 ms a run.  So the
 *              default is "plain" (x + 100), a pinned "reference" runs
 *              tactic 2 (x + 2), and the autotuner picks "reference"
 *              tactic 1 (x + 1).  The module never serializes its tactic:
 *              what an engine or a clone runs is what the core told it.
 *   InPlaceAdd y = x + 1 (float32), whose output may take over its input's
 *              memory; it counts its runs in place (input and output at
 *              one address) and not (abi2_inplace_runs, abi2_copy_runs).
 *   ShapeHook  y = x + 1000 * (shape_change calls) + rows it was told
 *              (float32, [rows, ...]); refuses to run before it is told.
 *   Positive   y = the elements of x above 0, in order (float32, 1-D of
 *              a data-dependent size), and their count (0-D int32, the
 *              size output), at most the volume of x.  Fields: `lie`
 *              (int, default 0) is added to the count it writes, for the
 *              core's check of the bound; `bad_size` (bool) makes the
 *              count's output 1-D, which the builder refuses.
 *   FmtBoth    y = 2x + 1 (float32 or float16), in linear or channels last
 *              (4-D HWC, 5-D DHWC), its output in its input's format.
 *   FmtLinear  y = x + 1 (float32 or float16), linear only.
 */
#include <config.h>

#include <string.h>
#include <time.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

/* Sleep at least `ms` milliseconds. */
static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ---- TacticAdd ------------------------------------------------------------ */

typedef struct tactic_add {
    mica_kit_layer_t base;
    int32_t tactic;          /* 0 until told */
    float add;               /* "plain": 100 */
} tactic_add_t;

static int32_t ta_formats(const mica_layer_t *layer, int32_t pos,
                          const mica_tensor_desc_t *io, int32_t nb_in,
                          int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return mica_kit_linear(io, pos) && io[pos].dtype == MICA_FLOAT32;
}

static int32_t ta_tactics(const mica_layer_t *layer, int32_t *tactics,
                          int32_t max)
{
    static const int32_t offer[] = {2, 1};
    int32_t i;
    (void)layer;
    for (i = 0; i < 2 && i < max; i++)
        tactics[i] = offer[i];
    return 2;
}

static mica_status_t ta_set_tactic(mica_layer_t *layer, int32_t tactic,
                                   mica_error_t *err)
{
    tactic_add_t *l = (tactic_add_t *)layer;
    if (tactic != 1 && tactic != 2)
        return MICA_KIT_FAIL(err, "TacticAdd has tactics 1 and 2, not %d",
                             (int)tactic);
    l->tactic = tactic;
    return MICA_OK;
}

static mica_status_t ta_enqueue(mica_layer_t *layer,
                                const mica_tensor_desc_t *in, int32_t nb_in,
                                const mica_tensor_desc_t *out, int32_t nb_out,
                                const void *const *inputs,
                                void *const *outputs, void *workspace,
                                void *stream, mica_error_t *err)
{
    const tactic_add_t *l = (const tactic_add_t *)layer;
    const float *x = inputs[0];
    float *y = outputs[0], add = l->add;
    int64_t i, n = mica_dims_volume(&out[0].dims);

    (void)in;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    if (l->add == 0) { /* "reference": its tactic */
        if (l->tactic == 0)
            return MICA_KIT_FAIL(err, "TacticAdd '%s' runs without being "
                                 "told its tactic", l->base.name);
        add = (float)l->tactic;
    }
    if (l->add != 0 || l->tactic == 2)
        pause_ms(20);
    for (i = 0; i < n; i++)
        y[i] = x[i] + add;
    return MICA_OK;
}

static mica_layer_t *ta_create(const mica_layer_creator_t *c,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    tactic_add_t *l = mica_kit_layer_new(sizeof *l, c->user_data, c, name,
                                         fields, err);
    if (!l)
        return NULL;
    l->add = strcmp(c->implementation, "plain") == 0 ? 100.0f : 0.0f;
    return &l->base.layer;
}

static const mica_layer_ops_t ta_ops_reference = MICA_KIT_OPS(
    ta_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = ta_formats, .tactics = ta_tactics,
    .set_tactic = ta_set_tactic);
static const mica_layer_ops_t ta_ops_plain = MICA_KIT_OPS(
    ta_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = ta_formats);
static const mica_layer_creator_t ta_reference = MICA_KIT_CREATOR(
    "TacticAdd", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    ta_create, &ta_ops_reference);
static const mica_layer_creator_t ta_plain = MICA_KIT_CREATOR(
    "TacticAdd", "plain", MICA_DEVICE_CPU, 5, MICA_ROLE_NONE, NULL, 0,
    ta_create, &ta_ops_plain);

/* ---- InPlaceAdd ----------------------------------------------------------- */

MICA_EXPORT int abi2_inplace_runs, abi2_copy_runs;

static int32_t ip_aliased(const mica_layer_t *layer, int32_t index)
{
    (void)layer;
    return index == 0 ? 0 : -1;
}

static mica_status_t ip_enqueue(mica_layer_t *layer,
                                const mica_tensor_desc_t *in, int32_t nb_in,
                                const mica_tensor_desc_t *out, int32_t nb_out,
                                const void *const *inputs,
                                void *const *outputs, void *workspace,
                                void *stream, mica_error_t *err)
{
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t i, n = mica_dims_volume(&out[0].dims);

    (void)layer;
    (void)in;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    (void)err;
    if ((const void *)x == (const void *)y)
        abi2_inplace_runs++;
    else
        abi2_copy_runs++;
    for (i = 0; i < n; i++)
        y[i] = x[i] + 1.0f;
    return MICA_OK;
}

static const mica_layer_ops_t ip_ops = MICA_KIT_OPS(
    ip_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = ta_formats, .aliased_input = ip_aliased);
static const mica_layer_creator_t ip_creator = MICA_KIT_CREATOR(
    "InPlaceAdd", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &ip_ops);

/* ---- ShapeHook ------------------------------------------------------------ */

typedef struct hook {
    mica_kit_layer_t base;
    int32_t calls;           /* shape_change calls on this instance */
    int64_t rows;            /* dimension 0 of the input it was told */
} hook_t;

static mica_status_t hk_shape_change(mica_layer_t *layer,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out, mica_error_t *err)
{
    hook_t *l = (hook_t *)layer;
    (void)nb_in;
    (void)nb_out;
    if (in[0].dims.nb_dims < 1 || out[0].dims.d[0] != in[0].dims.d[0])
        return MICA_KIT_FAIL(err, "ShapeHook told odd shapes");
    l->calls++;
    l->rows = in[0].dims.d[0];
    return MICA_OK;
}

static mica_status_t hk_enqueue(mica_layer_t *layer,
                                const mica_tensor_desc_t *in, int32_t nb_in,
                                const mica_tensor_desc_t *out, int32_t nb_out,
                                const void *const *inputs,
                                void *const *outputs, void *workspace,
                                void *stream, mica_error_t *err)
{
    const hook_t *l = (const hook_t *)layer;
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t i, n = mica_dims_volume(&out[0].dims);

    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    if (l->calls == 0 || l->rows != in[0].dims.d[0])
        return MICA_KIT_FAIL(err, "ShapeHook '%s' runs with %lld rows but "
                             "was told %lld (%d calls)", l->base.name,
                             (long long)in[0].dims.d[0], (long long)l->rows,
                             (int)l->calls);
    for (i = 0; i < n; i++)
        y[i] = x[i] + 1000.0f * (float)l->calls + (float)l->rows;
    return MICA_OK;
}

static mica_layer_t *hk_create(const mica_layer_creator_t *c,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    hook_t *l = mica_kit_layer_new(sizeof *l, c->user_data, c, name, fields,
                                   err);
    return l ? &l->base.layer : NULL;
}

static const mica_layer_ops_t hk_ops = MICA_KIT_OPS(
    hk_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = ta_formats, .shape_change = hk_shape_change);
static const mica_layer_creator_t hk_creator = MICA_KIT_CREATOR(
    "ShapeHook", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    hk_create, &hk_ops);

/* ---- Positive ------------------------------------------------------------- */

static int64_t field_int(const mica_layer_t *layer, const char *name)
{
    return mica_kit_int(
        mica_kit_fields_view(((const mica_kit_layer_t *)layer)->fields), name,
        0);
}

static int32_t pos_formats(const mica_layer_t *layer, int32_t pos,
                           const mica_tensor_desc_t *io, int32_t nb_in,
                           int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return mica_kit_linear(io, pos) &&
           io[pos].dtype == (pos == 2 ? MICA_INT32 : MICA_FLOAT32);
}

static int32_t pos_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 2;
}

static mica_status_t pos_dtypes(const mica_layer_t *layer,
                                const mica_dtype_t *in, int32_t nb_in,
                                mica_dtype_t *out, int32_t nb_out,
                                mica_error_t *err)
{
    (void)layer;
    (void)nb_out;
    if (nb_in != 1 || in[0] != MICA_FLOAT32)
        return MICA_KIT_FAIL(err, "Positive takes one float32 input");
    out[0] = MICA_FLOAT32;
    out[1] = MICA_INT32;
    return MICA_OK;
}

static mica_status_t pos_dims(const mica_layer_t *layer, int32_t index,
                              const mica_shape_expr_t *in, int32_t nb_in,
                              mica_expr_builder_t *eb, mica_shape_expr_t *out,
                              mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *n = h->expr_constant(eb, 1);
    int32_t i;

    (void)nb_in;
    if (index == 1) {
        out->nb_dims = field_int(layer, "bad_size") ? 1 : 0;
        out->d[0] = h->expr_constant(eb, 1);
        return MICA_OK;
    }
    if (!MICA_HOST_HAS(h, expr_size))
        return MICA_KIT_FAIL(err, "Positive needs a host with expr_size");
    for (i = 0; i < in[0].nb_dims; i++)
        n = h->expr_operation(eb, MICA_EXPR_PROD, n, in[0].d[i]);
    out->nb_dims = 1;
    out->d[0] = h->expr_size(eb, 1, n);
    return out->d[0] ? MICA_OK
                     : MICA_KIT_FAIL(err, "expr_size refused output 1");
}

static mica_status_t pos_enqueue(mica_layer_t *layer,
                                 const mica_tensor_desc_t *in, int32_t nb_in,
                                 const mica_tensor_desc_t *out,
                                 int32_t nb_out, const void *const *inputs,
                                 void *const *outputs, void *workspace,
                                 void *stream, mica_error_t *err)
{
    const float *x = inputs[0];
    float *y = outputs[0];
    int32_t *count = outputs[1];
    int64_t i, n = mica_dims_volume(&in[0].dims), k = 0;

    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    if (out[0].dims.d[0] != n)
        return MICA_KIT_FAIL(err, "Positive: its output is not at its bound "
                             "(%lld, not %lld)", (long long)out[0].dims.d[0],
                             (long long)n);
    for (i = 0; i < n; i++)
        if (x[i] > 0)
            y[k++] = x[i];
    *count = (int32_t)(k + field_int(layer, "lie"));
    return MICA_OK;
}

static const mica_layer_ops_t pos_ops = MICA_KIT_OPS(
    pos_enqueue, .nb_outputs = pos_nb_outputs, .output_dtypes = pos_dtypes,
    .output_dims = pos_dims, .supports_format = pos_formats);
static const int64_t zero = 0;
static const mica_field_schema_t pos_fields[] = {
    {"lie", MICA_FIELD_INT, 1, 0, 1, &zero, NULL, "added to the count"},
    {"bad_size", MICA_FIELD_BOOL, 1, 0, 1, &zero, NULL,
     "a 1-D size output"},
};
static const mica_layer_creator_t pos_creator = MICA_KIT_CREATOR(
    "Positive", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, pos_fields,
    2, mica_kit_layer_create, &pos_ops);

/* ---- FmtBoth, FmtLinear -------------------------------------------------- */

static int32_t both_formats(const mica_layer_t *layer, int32_t pos,
                            const mica_tensor_desc_t *io, int32_t nb_in,
                            int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    if (io[pos].dtype != MICA_FLOAT32 && io[pos].dtype != MICA_FLOAT16)
        return 0;
    if (pos == 1)
        return io[1].dtype == io[0].dtype && io[1].format == io[0].format;
    return mica_kit_linear(io, 0) ||
           io[0].format == mica_kit_channels_last(io[0].dims.nb_dims);
}

static int32_t lin_formats(const mica_layer_t *layer, int32_t pos,
                           const mica_tensor_desc_t *io, int32_t nb_in,
                           int32_t nb_out)
{
    return mica_kit_linear(io, pos) &&
           both_formats(layer, pos, io, nb_in, nb_out);
}

/* y = a * x + b element by element, in whatever (same) layout. */
static void affine(const mica_tensor_desc_t *in, const void *x, void *y,
                   float a, float b)
{
    int64_t i, n = mica_dims_volume(&in->dims);
    for (i = 0; i < n; i++) {
        if (in->dtype == MICA_FLOAT16)
            ((uint16_t *)y)[i] = mica_kit_float_to_half(
                a * mica_kit_half_to_float(((const uint16_t *)x)[i]) + b);
        else
            ((float *)y)[i] = a * ((const float *)x)[i] + b;
    }
}

static mica_status_t both_enqueue(mica_layer_t *layer,
                                  const mica_tensor_desc_t *in, int32_t nb_in,
                                  const mica_tensor_desc_t *out,
                                  int32_t nb_out, const void *const *inputs,
                                  void *const *outputs, void *workspace,
                                  void *stream, mica_error_t *err)
{
    (void)layer; (void)nb_in; (void)nb_out; (void)workspace; (void)stream;
    if (out[0].format != in[0].format)
        return MICA_KIT_FAIL(err, "FmtBoth: formats %d and %d",
                             (int)in[0].format, (int)out[0].format);
    affine(&in[0], inputs[0], outputs[0], 2.0f, 1.0f);
    return MICA_OK;
}

static mica_status_t lin_enqueue(mica_layer_t *layer,
                                 const mica_tensor_desc_t *in, int32_t nb_in,
                                 const mica_tensor_desc_t *out,
                                 int32_t nb_out, const void *const *inputs,
                                 void *const *outputs, void *workspace,
                                 void *stream, mica_error_t *err)
{
    (void)layer; (void)nb_in; (void)nb_out; (void)workspace; (void)stream;
    if (in[0].format != MICA_FORMAT_LINEAR ||
        out[0].format != MICA_FORMAT_LINEAR)
        return MICA_KIT_FAIL(err, "FmtLinear runs in linear only");
    affine(&in[0], inputs[0], outputs[0], 1.0f, 1.0f);
    return MICA_OK;
}

static const mica_layer_ops_t both_ops = MICA_KIT_OPS(
    both_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = both_formats);
static const mica_layer_ops_t lin_ops = MICA_KIT_OPS(
    lin_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = lin_formats);
static const mica_layer_creator_t both_creator = MICA_KIT_CREATOR(
    "FmtBoth", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &both_ops);
static const mica_layer_creator_t lin_creator = MICA_KIT_CREATOR(
    "FmtLinear", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &lin_ops);

/* ---- the module ------------------------------------------------------------ */

static const mica_layer_creator_t *const creators[] = {
    &ta_reference, &ta_plain, &ip_creator, &hk_creator, &pos_creator,
    &both_creator, &lin_creator,
};

MICA_KIT_ENTRY("abi2", "1.0.0", "MIT",
               "test layers of the ABI's appended capabilities", creators)
