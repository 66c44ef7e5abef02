/*
 * modules/common/kit.c - the module kit (<mica/kit.h>): the host table,
 * field access, and the ready-made layer callbacks.
 */
#include <config.h>

#include "mica/kit.h"

#include <pthread.h>
#include <stdio.h>

const mica_host_t *mica_kit_host;

static pthread_mutex_t fini_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*fini_fns[MICA_KIT_MAX_FINI])(void);
static int nb_fini;

mica_status_t mica_kit_init(const mica_host_t *host, mica_error_t *err)
{
    if (!host || host->abi_version < 1 ||
        host->struct_size < offsetof(mica_host_t, status_name) +
                                sizeof(host->status_name)) {
        if (host && host->set_error)
            host->set_error(err, "host ABI version %u is older than 1",
                            (unsigned)host->abi_version);
        return MICA_ERR_ABI;
    }
    mica_kit_host = host;
    return MICA_OK;
}

int mica_kit_at_fini(void (*fn)(void))
{
    int r = -1;

    pthread_mutex_lock(&fini_lock);
    if (nb_fini < MICA_KIT_MAX_FINI) {
        fini_fns[nb_fini++] = fn;
        r = 0;
    }
    pthread_mutex_unlock(&fini_lock);
    return r;
}

/* Each function is taken off the list under the lock and called after
 * it: a function registered while its caller holds a lock of its own
 * (kit_onednn's engine) takes that lock again, and holding both in the
 * two orders could deadlock. */
void mica_kit_fini(void)
{
    for (;;) {
        void (*fn)(void) = NULL;
        pthread_mutex_lock(&fini_lock);
        if (nb_fini > 0)
            fn = fini_fns[--nb_fini];
        pthread_mutex_unlock(&fini_lock);
        if (!fn)
            break;
        fn();
    }
}

/* ---- fields ----------------------------------------------------------- */

/* Numeric fields hold int64 values (INT, BOOL, ENUM, DTYPE) or doubles. */

int64_t mica_kit_int(const mica_fields_t *f, const char *name, int64_t dflt)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->count < 1)
        return dflt;
    if (x->type == MICA_FIELD_FLOAT)
        return (int64_t)((const double *)x->data)[0];
    if (x->type == MICA_FIELD_STRING || x->type == MICA_FIELD_WEIGHTS)
        return dflt;
    return ((const int64_t *)x->data)[0];
}

double mica_kit_float(const mica_fields_t *f, const char *name, double dflt)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->count < 1)
        return dflt;
    if (x->type == MICA_FIELD_FLOAT)
        return ((const double *)x->data)[0];
    if (x->type == MICA_FIELD_STRING || x->type == MICA_FIELD_WEIGHTS)
        return dflt;
    return (double)((const int64_t *)x->data)[0];
}

int32_t mica_kit_count(const mica_fields_t *f, const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    return x ? x->count : -1;
}

const int64_t *mica_kit_ints(const mica_fields_t *f, const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->type == MICA_FIELD_FLOAT || x->type == MICA_FIELD_STRING ||
        x->type == MICA_FIELD_WEIGHTS)
        return NULL;
    return (const int64_t *)x->data;
}

const mica_weights_t *mica_kit_weights(const mica_fields_t *f,
                                       const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->type != MICA_FIELD_WEIGHTS || x->count < 1)
        return NULL;
    return (const mica_weights_t *)x->data;
}

const char *mica_kit_string(const mica_fields_t *f, const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->type != MICA_FIELD_STRING || x->count < 1)
        return NULL;
    return ((const char *const *)x->data)[0];
}

/* ---- ready-made callbacks --------------------------------------------- */

int32_t mica_kit_linear(const mica_tensor_desc_t *io, int32_t pos)
{
    return io[pos].format == MICA_FORMAT_LINEAR;
}

mica_format_t mica_kit_channels_last(int32_t rank)
{
    return rank == 4 ? MICA_FORMAT_HWC
                     : rank == 5 ? MICA_FORMAT_DHWC : MICA_FORMAT_LINEAR;
}

int mica_kit_strides(const mica_tensor_desc_t *d,
                     int64_t strides[MICA_MAX_DIMS])
{
    int32_t r = d->dims.nb_dims, k;
    int64_t s = 1;

    if (d->format == MICA_FORMAT_LINEAR) {
        for (k = r - 1; k >= 0; k--) {
            strides[k] = s;
            s *= d->dims.d[k];
        }
        return 1;
    }
    if (d->format != mica_kit_channels_last(r) || r < 4)
        return 0;
    /* memory order: N, the spatial dims in order, C last */
    strides[1] = 1;
    s = d->dims.d[1];
    for (k = r - 1; k >= 2; k--) {
        strides[k] = s;
        s *= d->dims.d[k];
    }
    strides[0] = s;
    return 1;
}

int mica_kit_any_type(mica_dtype_t t)
{
    switch (t) {
    case MICA_FLOAT32: case MICA_FLOAT16: case MICA_BFLOAT16: case MICA_INT8:
    case MICA_UINT8: case MICA_INT32: case MICA_INT64: case MICA_BOOL:
        return 1;
    default:
        return 0;
    }
}

int32_t mica_kit_one_output(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

int32_t mica_kit_no_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 0;
}

mica_status_t mica_kit_no_output_dims(const mica_layer_t *layer,
                                      int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      mica_shape_expr_t *out,
                                      mica_error_t *err)
{
    (void)layer; (void)in; (void)nb_in; (void)eb; (void)out;
    return MICA_KIT_FAIL(err, "has no outputs, asked for output %d",
                         (int)index);
}

mica_status_t mica_kit_same_dtypes(const mica_layer_t *layer,
                                  const mica_dtype_t *in, int32_t nb_in,
                                  mica_dtype_t *out, int32_t nb_out,
                                  mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "expected 1 input and 1 output, got %d "
                             "and %d", (int)nb_in, (int)nb_out);
    out[0] = in[0];
    return MICA_OK;
}

mica_status_t mica_kit_same_dims(const mica_layer_t *layer, int32_t index,
                                const mica_shape_expr_t *in, int32_t nb_in,
                                mica_expr_builder_t *eb,
                                mica_shape_expr_t *out, mica_error_t *err)
{
    int32_t k;

    (void)layer;
    (void)eb;
    if (index != 0 || nb_in < 1)
        return MICA_KIT_FAIL(err, "asked for output %d of a layer with %d "
                             "inputs and 1 output", (int)index, (int)nb_in);
    out->nb_dims = in[0].nb_dims;
    for (k = 0; k < in[0].nb_dims; k++)
        out->d[k] = in[0].d[k];
    return MICA_OK;
}

int32_t mica_kit_float_linear(const mica_layer_t *layer, int32_t pos,
                             const mica_tensor_desc_t *io, int32_t nb_in,
                             int32_t nb_out)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 1)
        return io[1].dtype == io[0].dtype;
    return io[0].dtype == MICA_FLOAT32 || io[0].dtype == MICA_FLOAT16;
}

int32_t mica_kit_bool_input(const mica_layer_t *layer, int32_t pos,
                            const mica_tensor_desc_t *io, int32_t nb_in,
                            int32_t nb_out)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 0 || pos != 0 || !mica_kit_linear(io, pos))
        return 0;
    return io[0].dtype == MICA_BOOL;
}

mica_status_t mica_kit_boundary_enqueue(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs,
                                        void *workspace, void *stream,
                                        mica_error_t *err)
{
    (void)layer; (void)in; (void)nb_in; (void)out; (void)nb_out;
    (void)inputs; (void)outputs; (void)workspace; (void)stream;
    return MICA_KIT_FAIL(err, "boundary layer: run by the core through "
                         "enqueue_boundary");
}

/* ---- text for messages ------------------------------------------------ */

/* Append to buf at *pos what snprintf writes, within len. */
#define APPEND(...)                                                         \
    do {                                                                    \
        if (pos < len)                                                      \
            pos += (size_t)snprintf(buf + pos, len - pos, __VA_ARGS__);     \
    } while (0)

const char *mica_kit_ints_text(const int64_t *v, int32_t n, char *buf,
                               size_t len)
{
    size_t pos = 0;
    int32_t i;

    APPEND("[");
    for (i = 0; i < n; i++)
        APPEND("%s%lld", i ? ", " : "", (long long)v[i]);
    APPEND("]");
    return buf;
}

const char *mica_kit_exprs_text(const mica_expr_t *const *v, int32_t n,
                                char *buf, size_t len)
{
    const mica_host_t *h = mica_kit_host;
    size_t pos = 0;
    int32_t i;

    APPEND("[");
    for (i = 0; i < n; i++) {
        if (h->expr_is_constant(v[i]))
            APPEND("%s%lld", i ? ", " : "",
                   (long long)h->expr_constant_value(v[i]));
        else
            APPEND("%s?", i ? ", " : "");
    }
    APPEND("]");
    return buf;
}
