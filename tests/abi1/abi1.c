/*
 * tests/abi1/abi1.c - a module built against the ABI as it was before
 * any member was appended to version 1's structs: the headers beside
 * this file (tests/abi1/mica/, copies of abi/mica/types.h, layer.h and
 * module.h of that release, never to be changed) come first on its
 * include path.  It uses the raw ABI, no kit, as a module compiled then
 * would, and it is what tests/test_abi_compat runs on today's host.
 *
 * Layer "AbiOne": y = x * factor (float32, field `factor`, default 3),
 * computed through its workspace, with a state of its own (not the
 * kit's fields form) and a configure that records what it was told.
 *
 * Its ops table and creator are followed in memory by pointers that must
 * never be called (MICA_POISON): a host that read a member past the
 * struct_size this module declares would jump there and crash.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/module.h"

#if !defined(MICA_MAX_DIMS) || defined(MICA_MAX_TACTICS)
#error "tests/abi1 must build against its own copies of the old headers"
#endif

#define MICA_POISON ((void *)(uintptr_t)0xdead)

static const mica_host_t *host;

typedef struct one {
    mica_layer_t base;
    float factor;
    int configured;
} one_t;

static int32_t one_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

static mica_status_t one_dtypes(const mica_layer_t *layer,
                                const mica_dtype_t *in, int32_t nb_in,
                                mica_dtype_t *out, int32_t nb_out,
                                mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1 || in[0] != MICA_FLOAT32) {
        host->set_error(err, "AbiOne takes one float32 input");
        return MICA_ERR_INVALID;
    }
    out[0] = MICA_FLOAT32;
    return MICA_OK;
}

static mica_status_t one_dims(const mica_layer_t *layer, int32_t index,
                              const mica_shape_expr_t *in, int32_t nb_in,
                              mica_expr_builder_t *eb, mica_shape_expr_t *out,
                              mica_error_t *err)
{
    int32_t i;
    (void)layer;
    (void)index;
    (void)nb_in;
    (void)eb;
    (void)err;
    out->nb_dims = in[0].nb_dims;
    for (i = 0; i < in[0].nb_dims; i++)
        out->d[i] = in[0].d[i];
    return MICA_OK;
}

/* What a module of this release was promised: linear only. */
static int32_t one_formats(const mica_layer_t *layer, int32_t pos,
                           const mica_tensor_desc_t *io, int32_t nb_in,
                           int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    if (io[pos].format != MICA_FORMAT_LINEAR)
        abort(); /* never asked of a module built before other formats */
    return io[pos].dtype == MICA_FLOAT32;
}

static mica_status_t one_configure(mica_layer_t *layer,
                                   const mica_dyn_desc_t *in, int32_t nb_in,
                                   const mica_dyn_desc_t *out, int32_t nb_out,
                                   mica_error_t *err)
{
    (void)in;
    (void)nb_in;
    (void)out;
    (void)nb_out;
    (void)err;
    ((one_t *)layer)->configured = 1;
    return MICA_OK;
}

static size_t one_workspace(const mica_layer_t *layer,
                            const mica_dyn_desc_t *in, int32_t nb_in,
                            const mica_dyn_desc_t *out, int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)out;
    (void)nb_out;
    return sizeof(float) * (size_t)mica_dims_volume(&in[0].max);
}

static mica_status_t one_enqueue(mica_layer_t *layer,
                                 const mica_tensor_desc_t *in, int32_t nb_in,
                                 const mica_tensor_desc_t *out,
                                 int32_t nb_out, const void *const *inputs,
                                 void *const *outputs, void *workspace,
                                 void *stream, mica_error_t *err)
{
    const one_t *l = (const one_t *)layer;
    const float *x = inputs[0];
    float *w = workspace, *y = outputs[0];
    int64_t i, n = mica_dims_volume(&in[0].dims);

    (void)nb_in;
    (void)out;
    (void)nb_out;
    (void)stream;
    if (!l->configured || !w) {
        host->set_error(err, "AbiOne runs unconfigured or without its "
                        "workspace");
        return MICA_ERR_INVALID;
    }
    for (i = 0; i < n; i++)
        w[i] = x[i] * l->factor;
    memcpy(y, w, sizeof(float) * (size_t)n);
    return MICA_OK;
}

static mica_status_t one_serialize(const mica_layer_t *layer, void *buf,
                                   size_t *size)
{
    static const char tag[4] = {'O', 'N', 'E', '1'};
    if (buf) {
        if (*size < 8)
            return MICA_ERR_INVALID;
        memcpy(buf, tag, 4);
        memcpy((char *)buf + 4, &((const one_t *)layer)->factor, 4);
    }
    *size = 8;
    return MICA_OK;
}

static mica_layer_t *one_new(float factor, mica_error_t *err);

static mica_layer_t *one_clone(const mica_layer_t *layer, mica_error_t *err)
{
    return one_new(((const one_t *)layer)->factor, err);
}

static void one_destroy(mica_layer_t *layer)
{
    free(layer);
}

/* Version 1's ops, then what a newer host must never read. */
static const struct {
    mica_layer_ops_t ops;
    void *poison[16];
} one_ops = {
    {
        .struct_size = sizeof(mica_layer_ops_t),
        .nb_outputs = one_nb_outputs,
        .output_dtypes = one_dtypes,
        .output_dims = one_dims,
        .supports_format = one_formats,
        .configure = one_configure,
        .workspace_size = one_workspace,
        .enqueue = one_enqueue,
        .serialize = one_serialize,
        .clone = one_clone,
        .destroy = one_destroy,
    },
    {MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON,
     MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON,
     MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON,
     MICA_POISON},
};

static mica_layer_t *one_new(float factor, mica_error_t *err)
{
    one_t *l = calloc(1, sizeof *l);
    if (!l) {
        host->set_error(err, "out of memory");
        return NULL;
    }
    l->base.ops = &one_ops.ops;
    l->factor = factor;
    return &l->base;
}

static mica_layer_t *one_create(const mica_layer_creator_t *c,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    const mica_field_t *f = mica_fields_find(fields, "factor");
    (void)c;
    (void)name;
    return one_new(f ? (float)((const double *)f->data)[0] : 3.0f, err);
}

static mica_layer_t *one_deserialize(const mica_layer_creator_t *c,
                                     const char *name, const void *data,
                                     size_t size, mica_error_t *err)
{
    float factor;
    (void)c;
    if (size != 8 || memcmp(data, "ONE1", 4) != 0) {
        host->set_error(err, "AbiOne '%s': state is not mine", name);
        return NULL;
    }
    memcpy(&factor, (const char *)data + 4, 4);
    return one_new(factor, err);
}

static const double factor_default = 3.0;
static const mica_field_schema_t one_fields[] = {
    {"factor", MICA_FIELD_FLOAT, 1, 0, 1, &factor_default, NULL,
     "the factor"},
};

static const struct {
    mica_layer_creator_t creator;
    void *poison[16];
} one_creator = {
    {
        .struct_size = sizeof(mica_layer_creator_t),
        .type = "AbiOne",
        .version = 1,
        .ns = "",
        .implementation = "reference",
        .devices = MICA_DEVICE_CPU,
        .role = MICA_ROLE_NONE,
        .fields = one_fields,
        .nb_fields = 1,
        .create = one_create,
        .deserialize = one_deserialize,
    },
    {MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON,
     MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON,
     MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON, MICA_POISON,
     MICA_POISON},
};

static const mica_layer_creator_t *const creators[] = {&one_creator.creator};

static const mica_module_desc_t desc = {
    .struct_size = sizeof(mica_module_desc_t),
    .abi_version = MICA_ABI_VERSION,
    .name = "abi1",
    .version = "1.0.0",
    .license = "MIT",
    .description = "a module built against ABI version 1's first headers",
    .creators = creators,
    .nb_creators = 1,
};

MICA_EXPORT mica_status_t mica_module_init(const mica_host_t *h,
                                           const mica_module_desc_t **out,
                                           mica_error_t *err)
{
    (void)err;
    host = h;
    *out = &desc;
    return MICA_OK;
}
