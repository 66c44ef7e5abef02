/*
 * bar.c - an out-of-tree mica module: the layer type BarPlugin.
 *
 * BarPlugin (after TensorRT's sample BarPlugin) takes two inputs a and b
 * of one element type and produces two outputs:
 *
 *   out0 = a copy of b
 *   out1 = a and b concatenated along their first dimension
 *
 * a and b must have the same rank (at least 1) and agree on every
 * dimension but the first.  Any element type; row-major only.  No params.
 * The first dimensions may be runtime dimensions: the output's is their
 * sum, as an expression, and configure() receives each one's range from
 * the optimization profile (checked again by enqueue, as a plugin that
 * sized buffers at configure time would rely on it).
 *
 * It is built against the installed headers alone, as a third party
 * would (see Makefile):
 *
 *   cc -std=c99 -pedantic -Wall -Wextra $(pkg-config --cflags mica-module) \
 *      -shared -fPIC -o bar.so bar.c
 *
 * and found at run time through MICA_MODULE_PATH.  A module never links
 * libmica: everything it needs from the host comes through the host table
 * passed to mica_module_init.
 */
#include <stdlib.h>
#include <string.h>

#include <mica/module.h>

static const mica_host_t *host;

typedef struct bar_layer {
    mica_layer_t base; /* first: the host sees a mica_layer_t */
    char name[128];    /* for messages */
    int configured;
    int64_t lo[2], hi[2]; /* range of each input's first dimension */
} bar_layer_t;

/* ---- layer callbacks ---------------------------------------------------- */

static int32_t bar_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 2;
}

static mica_status_t bar_output_dtypes(const mica_layer_t *layer,
                                       const mica_dtype_t *in, int32_t nb_in,
                                       mica_dtype_t *out, int32_t nb_out,
                                       mica_error_t *err)
{
    const bar_layer_t *self = (const bar_layer_t *)layer;

    if (nb_in != 2 || nb_out != 2) {
        host->set_error(err, "BarPlugin '%s': takes 2 inputs and gives 2 "
                        "outputs, not %d and %d", self->name, (int)nb_in,
                        (int)nb_out);
        return MICA_ERR_INVALID;
    }
    if (in[0] != in[1]) {
        host->set_error(err, "BarPlugin '%s': inputs have different types "
                        "(%s and %s)", self->name, host->dtype_name(in[0]),
                        host->dtype_name(in[1]));
        return MICA_ERR_INVALID;
    }
    out[0] = in[1];
    out[1] = in[0];
    return MICA_OK;
}

static mica_status_t bar_output_dims(const mica_layer_t *layer, int32_t index,
                                     const mica_shape_expr_t *in,
                                     int32_t nb_in, mica_expr_builder_t *eb,
                                     mica_shape_expr_t *out,
                                     mica_error_t *err)
{
    const bar_layer_t *self = (const bar_layer_t *)layer;
    int32_t i;

    if (nb_in != 2 || index < 0 || index > 1) {
        host->set_error(err, "BarPlugin '%s': bad output index %d",
                        self->name, (int)index);
        return MICA_ERR_INVALID;
    }
    if (index == 0) { /* the copy of input 1 */
        out->nb_dims = in[1].nb_dims;
        for (i = 0; i < in[1].nb_dims; i++)
            out->d[i] = in[1].d[i];
        return MICA_OK;
    }
    if (in[0].nb_dims < 1 || in[0].nb_dims != in[1].nb_dims) {
        host->set_error(err, "BarPlugin '%s': inputs must have the same "
                        "rank, at least 1 (got %d and %d)", self->name,
                        (int)in[0].nb_dims, (int)in[1].nb_dims);
        return MICA_ERR_INVALID;
    }
    for (i = 1; i < in[0].nb_dims; i++) {
        const mica_expr_t *a = in[0].d[i], *b = in[1].d[i];
        if (host->expr_is_constant(a) && host->expr_is_constant(b) &&
            host->expr_constant_value(a) != host->expr_constant_value(b)) {
            host->set_error(err, "BarPlugin '%s': dimension %d differs "
                            "between the inputs (%lld and %lld)", self->name,
                            (int)i, (long long)host->expr_constant_value(a),
                            (long long)host->expr_constant_value(b));
            return MICA_ERR_INVALID;
        }
    }
    out->nb_dims = in[0].nb_dims;
    out->d[0] = host->expr_operation(eb, MICA_EXPR_SUM, in[0].d[0],
                                     in[1].d[0]);
    if (!out->d[0]) {
        host->set_error(err, "BarPlugin '%s': out of memory", self->name);
        return MICA_ERR_NOMEM;
    }
    for (i = 1; i < in[0].nb_dims; i++)
        out->d[i] = in[0].d[i];
    return MICA_OK;
}

/* Row-major, and every tensor of the element type of the first input. */
static int32_t bar_supports_format(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (pos < 0 || pos >= nb_in + nb_out || io[pos].format !=
        MICA_FORMAT_LINEAR || mica_dtype_size(io[pos].dtype) == 0)
        return 0;
    return io[pos].dtype == io[0].dtype;
}

/* Remember the range of each input's first dimension in this profile. */
static mica_status_t bar_configure(mica_layer_t *layer,
                                   const mica_dyn_desc_t *in, int32_t nb_in,
                                   const mica_dyn_desc_t *out, int32_t nb_out,
                                   mica_error_t *err)
{
    bar_layer_t *self = (bar_layer_t *)layer;
    int32_t i;

    (void)out;
    (void)nb_out;
    if (nb_in != 2) {
        host->set_error(err, "BarPlugin '%s': takes 2 inputs", self->name);
        return MICA_ERR_INVALID;
    }
    for (i = 0; i < 2; i++) {
        if (in[i].min.nb_dims < 1 || in[i].min.d[0] > in[i].max.d[0]) {
            host->set_error(err, "BarPlugin '%s': input %d has no valid "
                            "range", self->name, (int)i);
            return MICA_ERR_INVALID;
        }
        self->lo[i] = in[i].min.d[0];
        self->hi[i] = in[i].max.d[0];
    }
    self->configured = 1;
    return MICA_OK;
}

static mica_status_t bar_enqueue(mica_layer_t *layer,
                                 const mica_tensor_desc_t *in, int32_t nb_in,
                                 const mica_tensor_desc_t *out,
                                 int32_t nb_out, const void *const *inputs,
                                 void *const *outputs, void *workspace,
                                 void *stream, mica_error_t *err)
{
    const bar_layer_t *self = (const bar_layer_t *)layer;
    size_t elem, bytes0, bytes1;
    int32_t i;

    (void)workspace;
    (void)stream; /* a CPU implementation: finished when it returns */
    if (nb_in != 2 || nb_out != 2) {
        host->set_error(err, "BarPlugin '%s': takes 2 inputs and gives 2 "
                        "outputs", self->name);
        return MICA_ERR_INVALID;
    }
    for (i = 0; i < 2; i++)
        if (!self->configured || in[i].dims.d[0] < self->lo[i] ||
            in[i].dims.d[0] > self->hi[i]) {
            host->set_error(err, "BarPlugin '%s': input %d has %lld rows, "
                            "outside the configured %lld..%lld", self->name,
                            (int)i, (long long)in[i].dims.d[0],
                            (long long)self->lo[i], (long long)self->hi[i]);
            return MICA_ERR_INVALID;
        }
    elem = mica_dtype_size(in[0].dtype);
    bytes0 = (size_t)mica_dims_volume(&in[0].dims) * elem;
    bytes1 = (size_t)mica_dims_volume(&in[1].dims) * elem;
    if ((size_t)mica_dims_volume(&out[1].dims) * elem != bytes0 + bytes1 ||
        (size_t)mica_dims_volume(&out[0].dims) * elem != bytes1) {
        host->set_error(err, "BarPlugin '%s': output sizes do not match the "
                        "inputs", self->name);
        return MICA_ERR_INVALID;
    }
    /* Concatenating along the first dimension of row-major tensors is
     * appending b's bytes to a's. */
    if (bytes1)
        memcpy(outputs[0], inputs[1], bytes1);
    if (bytes0)
        memcpy(outputs[1], inputs[0], bytes0);
    if (bytes1)
        memcpy((char *)outputs[1] + bytes0, inputs[1], bytes1);
    return MICA_OK;
}

/* No state to save: the layer has no params. */
static mica_status_t bar_serialize(const mica_layer_t *layer, void *buf,
                                   size_t *size)
{
    (void)layer;
    (void)buf;
    *size = 0;
    return MICA_OK;
}

static mica_layer_t *bar_new(const char *name, mica_error_t *err);

static mica_layer_t *bar_clone(const mica_layer_t *layer, mica_error_t *err)
{
    return bar_new(((const bar_layer_t *)layer)->name, err);
}

static void bar_destroy(mica_layer_t *layer)
{
    free(layer);
}

/* Designated initializers: members added to the ABI later stay NULL. */
static const mica_layer_ops_t bar_ops = {
    .struct_size = sizeof(mica_layer_ops_t),
    .nb_outputs = bar_nb_outputs,
    .output_dtypes = bar_output_dtypes,
    .output_dims = bar_output_dims,
    .supports_format = bar_supports_format,
    .configure = bar_configure,
    .enqueue = bar_enqueue,
    .serialize = bar_serialize,
    .clone = bar_clone,
    .destroy = bar_destroy,
};

static mica_layer_t *bar_new(const char *name, mica_error_t *err)
{
    bar_layer_t *self = calloc(1, sizeof(*self));
    size_t n = name ? strlen(name) : 0;

    if (!self) {
        host->set_error(err, "BarPlugin '%s': out of memory", name);
        return NULL;
    }
    self->base.ops = &bar_ops;
    if (n >= sizeof(self->name))
        n = sizeof(self->name) - 1; /* a long name is cut for messages */
    if (n)
        memcpy(self->name, name, n);
    return &self->base;
}

/* ---- the creator and the module ----------------------------------------- */

static mica_layer_t *bar_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    (void)creator;
    (void)fields;
    return bar_new(name, err);
}

static mica_layer_t *bar_deserialize(const mica_layer_creator_t *creator,
                                     const char *name, const void *data,
                                     size_t size, mica_error_t *err)
{
    (void)creator;
    (void)data;
    (void)size;
    return bar_new(name, err);
}

/* Members by name: those the ABI appends later stay NULL. */
static const mica_layer_creator_t bar_creator = {
    .struct_size = sizeof(mica_layer_creator_t),
    .type = "BarPlugin",
    .version = 1,
    .priority = 0,
    .ns = "",
    .implementation = "reference",
    .devices = MICA_DEVICE_CPU,
    .role = MICA_ROLE_NONE,
    .fields = NULL, /* no fields */
    .nb_fields = 0,
    .create = bar_create,
    .deserialize = bar_deserialize,
};

static const mica_layer_creator_t *const bar_creators[] = {&bar_creator};

static const mica_module_desc_t bar_module = {
    sizeof(mica_module_desc_t),
    MICA_ABI_VERSION,
    "bar",
    "1.0.0",
    "MIT",
    "BarPlugin: a copy of input 1 and the concatenation of both inputs",
    bar_creators,
    1, 0,
    NULL, /* fini */
    {NULL, NULL, NULL, NULL},
    NULL, 0, 0, /* no fusion rules */
};

MICA_EXPORT mica_status_t mica_module_init(const mica_host_t *h,
                                           const mica_module_desc_t **desc,
                                           mica_error_t *err)
{
    if (h->abi_version < MICA_ABI_VERSION_MIN) {
        h->set_error(err, "host ABI version %u is older than %d",
                     (unsigned)h->abi_version, MICA_ABI_VERSION_MIN);
        return MICA_ERR_ABI;
    }
    host = h;
    *desc = &bar_module;
    return MICA_OK;
}
