/*
 * tests/hostile/null_ops.c - creators whose instances are broken: create
 * returns an instance with NULL ops (NullOps), or with ops lacking a
 * required callback (NoEnqueue), and an instance whose clone returns
 * one with NULL ops (BadClone).  The host must refuse each where it first
 * sees it, in one line naming the module file.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/module.h"

static const mica_host_t *host_;

typedef struct inst {
    mica_layer_t base;
} inst_t;

static int32_t one_output(const mica_layer_t *l)
{
    (void)l;
    return 1;
}

static mica_status_t same_dtypes(const mica_layer_t *l, const mica_dtype_t *in,
                                 int32_t nb_in, mica_dtype_t *out,
                                 int32_t nb_out, mica_error_t *err)
{
    (void)l;
    (void)nb_in;
    (void)nb_out;
    (void)err;
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t same_dims(const mica_layer_t *l, int32_t index,
                               const mica_shape_expr_t *in, int32_t nb_in,
                               mica_expr_builder_t *eb,
                               mica_shape_expr_t *out, mica_error_t *err)
{
    int32_t i;
    (void)l;
    (void)index;
    (void)nb_in;
    (void)eb;
    (void)err;
    out->nb_dims = in[0].nb_dims;
    for (i = 0; i < in[0].nb_dims; i++)
        out->d[i] = in[0].d[i];
    return MICA_OK;
}

static int32_t any_format(const mica_layer_t *l, int32_t pos,
                          const mica_tensor_desc_t *io, int32_t nb_in,
                          int32_t nb_out)
{
    (void)l;
    (void)nb_in;
    (void)nb_out;
    return io[pos].dtype == MICA_FLOAT32;
}

static mica_status_t copy(mica_layer_t *l, const mica_tensor_desc_t *in,
                          int32_t nb_in, const mica_tensor_desc_t *out,
                          int32_t nb_out, const void *const *inputs,
                          void *const *outputs, void *ws, void *stream,
                          mica_error_t *err)
{
    int64_t n = mica_dims_volume(&in[0].dims);
    (void)l;
    (void)nb_in;
    (void)out;
    (void)nb_out;
    (void)ws;
    (void)stream;
    (void)err;
    memcpy(outputs[0], inputs[0], (size_t)n * sizeof(float));
    return MICA_OK;
}

static mica_status_t no_state(const mica_layer_t *l, void *buf, size_t *size)
{
    (void)l;
    (void)buf;
    *size = 0;
    return MICA_OK;
}

static void destroy(mica_layer_t *l)
{
    free(l);
}

/* What the broken creators and clones return: no ops, so nothing can
 * release it; static, so that nothing leaks either. */
static inst_t no_ops;

static mica_layer_t *clone_bad(const mica_layer_t *l, mica_error_t *err)
{
    (void)l;
    (void)err;
    return &no_ops.base;
}

static const mica_layer_ops_t no_enqueue_ops = {
    .struct_size = sizeof(mica_layer_ops_t), .nb_outputs = one_output,
    .output_dtypes = same_dtypes, .output_dims = same_dims,
    .supports_format = any_format, .serialize = no_state,
    .clone = clone_bad, .destroy = destroy};

static const mica_layer_ops_t bad_clone_ops = {
    .struct_size = sizeof(mica_layer_ops_t), .nb_outputs = one_output,
    .output_dtypes = same_dtypes, .output_dims = same_dims,
    .supports_format = any_format, .enqueue = copy, .serialize = no_state,
    .clone = clone_bad, .destroy = destroy};

static mica_layer_t *create(const mica_layer_creator_t *c, const char *name,
                            const mica_fields_t *fields, mica_error_t *err)
{
    inst_t *x;
    (void)name;
    (void)fields;
    if (!strcmp(c->type, "NullOps"))
        return &no_ops.base;
    x = calloc(1, sizeof *x);
    if (!x) {
        host_->set_error(err, "out of memory");
        return NULL;
    }
    x->base.ops = !strcmp(c->type, "NoEnqueue") ? &no_enqueue_ops
                                                : &bad_clone_ops;
    return &x->base;
}

#define CREATOR(t) \
    static const mica_layer_creator_t t##_c = { \
        .struct_size = sizeof(mica_layer_creator_t), .type = #t, \
        .version = 1, .implementation = "reference", \
        .devices = MICA_DEVICE_CPU, .create = create}
CREATOR(NullOps);
CREATOR(NoEnqueue);
CREATOR(BadClone);

static const mica_layer_creator_t *const creators[] = {&NullOps_c,
                                                       &NoEnqueue_c,
                                                       &BadClone_c};

static const mica_module_desc_t desc = {
    .struct_size = sizeof(mica_module_desc_t),
    .abi_version = MICA_ABI_VERSION, .name = "null_ops", .version = "1",
    .creators = creators, .nb_creators = 3};

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)err;
    host_ = host;
    *out = &desc;
    return MICA_OK;
}
