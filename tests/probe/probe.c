/*
 * tests/probe/probe.c - a test module whose layers say how they were
 * made, so that tests/test_engine_load.c can see what the host tells a
 * creator when it loads an engine.
 *
 * "Probe" (no inputs) outputs int64 [3]: the flags its deserialize_ex was
 * given (-1: made by create, -2: by deserialize, which has none), the
 * address of the state bytes it was given (0 for create), and which call
 * made it (0 create, 1 deserialize, 2 deserialize_ex).  "ProbeOld" is the
 * same layer behind a creator built before deserialize_ex existed: its
 * struct_size ends before that member, which is set anyway, as a trap a
 * host that ignores struct_size would fall into.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"

#define PROBE_STATE "PROBEST" /* 8 bytes with its NUL */

typedef struct probe {
    mica_layer_t layer;
    int64_t info[3];
} probe_t;

static int32_t probe_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

static mica_status_t probe_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in, int32_t nb_in,
                                         mica_dtype_t *out, int32_t nb_out,
                                         mica_error_t *err)
{
    (void)layer;
    (void)in;
    if (nb_in != 0 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Probe takes no input and gives 1 output");
    out[0] = MICA_INT64;
    return MICA_OK;
}

static mica_status_t probe_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    (void)layer;
    (void)index;
    (void)in;
    (void)nb_in;
    out->nb_dims = 1;
    out->d[0] = mica_kit_host->expr_constant(eb, 3);
    return out->d[0] ? MICA_OK : MICA_KIT_FAIL(err, "out of host memory");
}

static int32_t probe_supports_format(const mica_layer_t *layer, int32_t pos,
                                     const mica_tensor_desc_t *io,
                                     int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return mica_kit_linear(io, pos) && io[pos].dtype == MICA_INT64;
}

static mica_status_t probe_enqueue(mica_layer_t *layer,
                                   const mica_tensor_desc_t *in, int32_t nb_in,
                                   const mica_tensor_desc_t *out,
                                   int32_t nb_out, const void *const *inputs,
                                   void *const *outputs, void *workspace,
                                   void *stream, mica_error_t *err)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out; (void)inputs;
    (void)workspace; (void)stream; (void)err;
    memcpy(outputs[0], ((const probe_t *)layer)->info, sizeof(int64_t) * 3);
    return MICA_OK;
}

static mica_status_t probe_serialize(const mica_layer_t *layer, void *buf,
                                     size_t *size)
{
    (void)layer;
    if (buf && *size < sizeof PROBE_STATE)
        return MICA_ERR_INVALID;
    if (buf)
        memcpy(buf, PROBE_STATE, sizeof PROBE_STATE);
    *size = sizeof PROBE_STATE;
    return MICA_OK;
}

static mica_layer_t *probe_clone(const mica_layer_t *layer, mica_error_t *err);

static void probe_destroy(mica_layer_t *layer)
{
    free(layer);
}

static const mica_layer_ops_t probe_ops = {
    .struct_size = sizeof(mica_layer_ops_t),
    .nb_outputs = probe_nb_outputs,
    .output_dtypes = probe_output_dtypes,
    .output_dims = probe_output_dims,
    .supports_format = probe_supports_format,
    .enqueue = probe_enqueue,
    .serialize = probe_serialize,
    .clone = probe_clone,
    .destroy = probe_destroy,
};

/* A probe saying (flags, address, which); NULL and err on failure. */
static mica_layer_t *probe_new(int64_t flags, const void *data, int64_t which,
                               mica_error_t *err)
{
    probe_t *p = calloc(1, sizeof *p);
    if (!p) {
        mica_kit_host->set_error(err, "out of host memory");
        return NULL;
    }
    p->layer.ops = &probe_ops;
    p->info[0] = flags;
    p->info[1] = (int64_t)(uintptr_t)data;
    p->info[2] = which;
    return &p->layer;
}

static mica_layer_t *probe_clone(const mica_layer_t *layer, mica_error_t *err)
{
    const probe_t *p = (const probe_t *)layer;
    probe_t *c = (probe_t *)probe_new(0, NULL, 0, err);
    if (c)
        memcpy(c->info, p->info, sizeof c->info);
    return c ? &c->layer : NULL;
}

static mica_layer_t *probe_create(const mica_layer_creator_t *creator,
                                  const char *name,
                                  const mica_fields_t *fields,
                                  mica_error_t *err)
{
    (void)creator;
    (void)name;
    (void)fields;
    return probe_new(-1, NULL, 0, err);
}

/* The state must be what probe_serialize wrote. */
static int probe_state_ok(const void *data, size_t size, mica_error_t *err)
{
    if (size == sizeof PROBE_STATE && memcmp(data, PROBE_STATE, size) == 0)
        return 1;
    mica_kit_host->set_error(err, "probe state is corrupt (%zu bytes)",
                             size);
    return 0;
}

static mica_layer_t *probe_deserialize(const mica_layer_creator_t *creator,
                                       const char *name, const void *data,
                                       size_t size, mica_error_t *err)
{
    (void)creator;
    (void)name;
    return probe_state_ok(data, size, err) ? probe_new(-2, data, 1, err)
                                           : NULL;
}

static mica_layer_t *probe_deserialize_ex(const mica_layer_creator_t *creator,
                                          const char *name, const void *data,
                                          size_t size, uint32_t flags,
                                          mica_error_t *err)
{
    (void)creator;
    (void)name;
    return probe_state_ok(data, size, err)
               ? probe_new((int64_t)flags, data, 2, err)
               : NULL;
}

static const mica_layer_creator_t probe_creator = {
    .struct_size = sizeof(mica_layer_creator_t),
    .type = "Probe",
    .version = 1,
    .ns = "",
    .implementation = "reference",
    .devices = MICA_DEVICE_CPU,
    .create = probe_create,
    .deserialize = probe_deserialize,
    .deserialize_ex = probe_deserialize_ex,
};

static const mica_layer_creator_t probe_old_creator = {
    .struct_size = offsetof(mica_layer_creator_t, deserialize_ex),
    .type = "ProbeOld",
    .version = 1,
    .ns = "",
    .implementation = "reference",
    .devices = MICA_DEVICE_CPU,
    .create = probe_create,
    .deserialize = probe_deserialize,
    .deserialize_ex = probe_deserialize_ex, /* past struct_size: unread */
};

static const mica_layer_creator_t *const probe_creators[] = {
    &probe_creator,
    &probe_old_creator,
};

MICA_KIT_ENTRY("probe", PACKAGE_VERSION, "MIT",
               "test layers that report how they were made",
               probe_creators)
