/*
 * tests/harness.c - one-layer networks on the CPU and CUDA (see harness.h).
 */
#include <config.h>

#include "harness.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "../modules/identity/identity.h"
#include "mica_int.h" /* struct mica_error, for th_instance */

/* ---- tensors ---------------------------------------------------------- */

int64_t th_volume(const th_tensor_t *t)
{
    return mica_dims_volume(&t->dims);
}

double th_get(const th_tensor_t *t, int64_t i)
{
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case MICA_FLOAT32: return ((const float *)p)[i];
    case MICA_FLOAT16: return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    case MICA_BFLOAT16: return mica_kit_bf16_to_float(((const uint16_t *)p)[i]);
    case MICA_INT8: return ((const int8_t *)p)[i];
    case MICA_UINT8: return ((const uint8_t *)p)[i];
    case MICA_BOOL: return p[i] != 0;
    case MICA_INT32: return ((const int32_t *)p)[i];
    case MICA_INT64: return (double)((const int64_t *)p)[i];
    case MICA_FLOAT64: return ((const double *)p)[i];
    case MICA_UINT16: return ((const uint16_t *)p)[i];
    case MICA_INT16: return ((const int16_t *)p)[i];
    case MICA_UINT32: return ((const uint32_t *)p)[i];
    case MICA_UINT64: return (double)((const uint64_t *)p)[i];
    case MICA_INT4: return ((const int8_t *)p)[i];
    case MICA_UINT4: return ((const uint8_t *)p)[i];
    case MICA_FP8E4M3: case MICA_FP8E4M3FNUZ: case MICA_FP8E5M2:
    case MICA_FP8E5M2FNUZ: case MICA_FP4E2M1: case MICA_FP8E8M0:
        return mica__identity_load(p, t->dtype, i);
    default: return NAN;
    }
}

void th_set(th_tensor_t *t, int64_t i, double v)
{
    unsigned char *p = t->data;
    switch (t->dtype) {
    case MICA_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MICA_FLOAT16:
        ((uint16_t *)p)[i] = mica_kit_float_to_half((float)v);
        break;
    case MICA_BFLOAT16:
        ((uint16_t *)p)[i] = mica_kit_float_to_bf16((float)v);
        break;
    /* through int64 (defined for the values tests use), then narrowed
     * modulo 2^n: a double out of a small type's range converts to it
     * with undefined behaviour */
    case MICA_INT8: ((int8_t *)p)[i] = (int8_t)(int64_t)v; break;
    case MICA_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)v; break;
    case MICA_BOOL: p[i] = v != 0; break;
    case MICA_INT32: ((int32_t *)p)[i] = (int32_t)(int64_t)v; break;
    case MICA_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case MICA_FLOAT64: ((double *)p)[i] = v; break;
    case MICA_UINT16: ((uint16_t *)p)[i] = (uint16_t)(int64_t)v; break;
    case MICA_INT16: ((int16_t *)p)[i] = (int16_t)(int64_t)v; break;
    case MICA_UINT32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)v; break;
    case MICA_UINT64:
        ((uint64_t *)p)[i] = v >= 9223372036854775808.0
                             ? (uint64_t)(v - 9223372036854775808.0) +
                                   ((uint64_t)1 << 63)
                             : (uint64_t)(int64_t)v;
        break;
    case MICA_INT4: case MICA_UINT4: case MICA_FP8E4M3: case MICA_FP8E4M3FNUZ:
    case MICA_FP8E5M2: case MICA_FP8E5M2FNUZ: case MICA_FP4E2M1:
    case MICA_FP8E8M0:
        mica__identity_store(p, t->dtype, i, v);
        break;
    default: break;
    }
}

th_tensor_t th_tensor(mica_dtype_t dtype, int nb_dims, const int64_t *dims,
                      const double *values)
{
    th_tensor_t t;
    int64_t i, n;

    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.dims.nb_dims = nb_dims;
    for (i = 0; i < nb_dims; i++)
        t.dims.d[i] = dims[i];
    n = th_volume(&t);
    t.data = calloc((size_t)(n > 0 ? n : 1), mica_dtype_size(dtype));
    if (!t.data)
        bail("out of memory");
    for (i = 0; values && i < n; i++)
        th_set(&t, i, values[i]);
    return t;
}

th_tensor_t th_t(mica_dtype_t dtype, const double *values, int nb_dims, ...)
{
    int64_t dims[MICA_MAX_DIMS];
    va_list ap;
    int i;

    va_start(ap, nb_dims);
    for (i = 0; i < nb_dims && i < MICA_MAX_DIMS; i++)
        dims[i] = va_arg(ap, int);
    va_end(ap);
    return th_tensor(dtype, nb_dims, dims, values);
}

th_tensor_t th_shape(th_tensor_t t)
{
    t.is_shape = 1;
    return t;
}

th_tensor_t th_runtime(th_tensor_t t, unsigned mask)
{
    t.runtime = mask;
    return t;
}

th_tensor_t th_none(void)
{
    th_tensor_t t;
    memset(&t, 0, sizeof t);
    return t;
}

void th_free(th_tensor_t *t)
{
    free(t->data);
    t->data = NULL;
}

/* ---- fields ----------------------------------------------------------- */

struct th_fields {
    mica_fields_t view;
    mica_field_t items[32];
    void *owned[64];
    int nb_owned;
};

static void *keep(th_fields_t *f, size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p || f->nb_owned == 64)
        bail("th_fields: out of room");
    f->owned[f->nb_owned++] = p;
    return p;
}

static th_fields_t *add(th_fields_t *f, const char *name, mica_field_type_t type,
                        int count, const void *data, size_t bytes)
{
    mica_field_t *it;
    void *copy;
    if (f->view.nb_fields == 32)
        bail("th_fields: too many fields");
    copy = keep(f, bytes);
    if (bytes)
        memcpy(copy, data, bytes);
    it = &f->items[f->view.nb_fields++];
    it->name = name;
    it->type = type;
    it->count = count;
    it->data = copy;
    return f;
}

th_fields_t *th_fields(void)
{
    th_fields_t *f = calloc(1, sizeof *f);
    if (!f)
        bail("out of memory");
    f->view.fields = f->items;
    return f;
}

th_fields_t *th_f_int(th_fields_t *f, const char *name, int64_t v)
{
    return add(f, name, MICA_FIELD_INT, 1, &v, sizeof v);
}

th_fields_t *th_f_ints(th_fields_t *f, const char *name, int n,
                       const int64_t *v)
{
    return add(f, name, MICA_FIELD_INT, n, v, sizeof *v * (size_t)n);
}

th_fields_t *th_f_float(th_fields_t *f, const char *name, double v)
{
    return add(f, name, MICA_FIELD_FLOAT, 1, &v, sizeof v);
}

th_fields_t *th_f_floats(th_fields_t *f, const char *name, int n,
                         const double *v)
{
    return add(f, name, MICA_FIELD_FLOAT, n, v, sizeof *v * (size_t)n);
}

th_fields_t *th_f_bool(th_fields_t *f, const char *name, int v)
{
    int64_t b = v != 0;
    return add(f, name, MICA_FIELD_BOOL, 1, &b, sizeof b);
}

th_fields_t *th_f_str(th_fields_t *f, const char *name, const char *v)
{
    size_t n = strlen(v) + 1;
    char *s = keep(f, n);
    memcpy(s, v, n);
    return add(f, name, MICA_FIELD_STRING, 1, &s, sizeof s);
}

th_fields_t *th_f_strs(th_fields_t *f, const char *name, int n,
                       const char *const *v)
{
    size_t total = 0, at = 0, k;
    char **list = keep(f, sizeof *list * (size_t)(n > 0 ? n : 1)), *text;
    int i;
    for (i = 0; i < n; i++)
        total += strlen(v[i]) + 1;
    text = keep(f, total);
    for (i = 0; i < n; i++) {
        k = strlen(v[i]) + 1;
        memcpy(text + at, v[i], k);
        list[i] = text + at;
        at += k;
    }
    return add(f, name, MICA_FIELD_STRING, n, list, sizeof *list * (size_t)n);
}

th_fields_t *th_f_weights(th_fields_t *f, const char *name,
                          const th_tensor_t *t)
{
    mica_weights_t w;
    size_t bytes = (size_t)th_volume(t) * mica_dtype_size(t->dtype);
    void *copy = keep(f, bytes);
    memcpy(copy, t->data, bytes);
    memset(&w, 0, sizeof w);
    w.dtype = t->dtype;
    w.count = th_volume(t);
    w.values = copy;
    w.dims = t->dims;
    return add(f, name, MICA_FIELD_WEIGHTS, 1, &w, sizeof w);
}

th_fields_t *th_f_weights_list(th_fields_t *f, const char *name, int n,
                               const th_tensor_t *t)
{
    mica_weights_t *w = keep(f, sizeof *w * (size_t)(n > 0 ? n : 1));
    int i;
    for (i = 0; i < n; i++) {
        size_t bytes = (size_t)th_volume(&t[i]) * mica_dtype_size(t[i].dtype);
        void *copy = keep(f, bytes);
        memcpy(copy, t[i].data, bytes);
        w[i].dtype = t[i].dtype;
        w[i].count = th_volume(&t[i]);
        w[i].values = copy;
        w[i].dims = t[i].dims;
    }
    return add(f, name, MICA_FIELD_WEIGHTS, n, w, sizeof *w * (size_t)n);
}

const mica_fields_t *th_fields_view(th_fields_t *f)
{
    return f ? &f->view : NULL;
}

void th_fields_free(th_fields_t *f)
{
    int i;
    if (!f)
        return;
    for (i = 0; i < f->nb_owned; i++)
        free(f->owned[i]);
    free(f);
}

/* ---- running ---------------------------------------------------------- */

static mica_context_t *shared_ctx;
static char last_error[2048];

/* th_pin's, th_dynamic's and th_channels_last's settings. */
static const char *pin_cpu, *pin_cuda;
static int dyn_index = -1;
static mica_dims_t dyn_min, dyn_max;
static int chans_last, chans_last_cpu;

void th_channels_last(int on)
{
    chans_last = on != 0;
}

void th_channels_last_cpu(int on)
{
    chans_last_cpu = on != 0;
}

/* The channels-last format th_channels_last gives a tensor of `dtype`
 * and rank r, LINEAR where it gives none. */
static uint32_t cl_format(mica_dtype_t dtype, int32_t r)
{
    if (dtype != MICA_FLOAT32 && dtype != MICA_FLOAT16)
        return MICA_FORMAT_LINEAR;
    return r == 4 ? MICA_FORMAT_HWC
                  : r == 5 ? MICA_FORMAT_DHWC : MICA_FORMAT_LINEAR;
}

/* A malloc'd copy of the n(d)hw data at src (dims d, NC... order)
 * reordered into channels last (to_cl), or from channels last into
 * NC... order. */
static void *reorder(const void *src, mica_dtype_t dtype,
                     const mica_dims_t *d, int to_cl)
{
    size_t es = mica_dtype_size(dtype);
    int64_t n = d->d[0], c = d->d[1], sp = 1, i, j, k;
    unsigned char *out;
    int32_t r;

    for (r = 2; r < d->nb_dims; r++)
        sp *= d->d[r];
    if (!(out = malloc((size_t)(n * c * sp > 0 ? n * c * sp : 1) * es)))
        bail("out of memory");
    for (i = 0; i < n; i++)
        for (j = 0; j < c; j++)
            for (k = 0; k < sp; k++) {
                int64_t lin = (i * c + j) * sp + k, cl = (i * sp + k) * c + j;
                memcpy(out + (size_t)(to_cl ? cl : lin) * es,
                       (const unsigned char *)src +
                           (size_t)(to_cl ? lin : cl) * es,
                       es);
            }
    return out;
}

void th_pin(const char *cpu, const char *cuda)
{
    pin_cpu = cpu;
    pin_cuda = cuda;
}

void th_dynamic(int index, int nd, const int64_t *min, const int64_t *max)
{
    int i;
    assert(index < 0 || (nd > 0 && nd <= MICA_MAX_DIMS));
    dyn_index = index;
    memset(&dyn_min, 0, sizeof dyn_min);
    memset(&dyn_max, 0, sizeof dyn_max);
    for (i = 0; index >= 0 && i < nd; i++) {
        dyn_min.d[i] = min[i];
        dyn_max.d[i] = max[i];
    }
}

int th_has_impl(const char *type, uint32_t device, const char *impl)
{
    mica_creator_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    return mica_registry_find(th_context(), NULL, type, 0, impl, device,
                              &info) == MICA_OK;
}

static void free_ctx(void)
{
    mica_context_destroy(shared_ctx);
}

mica_context_t *th_context(void)
{
    if (shared_ctx)
        return shared_ctx;
    if (mica_context_create(&shared_ctx) != MICA_OK)
        bail("cannot create a context");
    atexit(free_ctx);
    if (mica_context_load_default_modules(shared_ctx) != MICA_OK ||
        mica_registry_count(shared_ctx) == 0)
        bail("no module could be loaded (MICA_MODULE_DIR=%s): %s",
             getenv("MICA_MODULE_DIR") ? getenv("MICA_MODULE_DIR") : "unset",
             mica_context_error(shared_ctx));
    return shared_ctx;
}

int th_cuda(void)
{
    return mica_device_usable(MICA_DEVICE_CUDA);
}

const char *th_error(void)
{
    return last_error;
}

static mica_status_t failed(mica_status_t st, mica_context_t *ctx)
{
    snprintf(last_error, sizeof last_error, "%s", mica_context_error(ctx));
    return st;
}

void th_add_layer(mica_network_t *net, const char *name, const char *type,
                  const char *key, const char *value, const char *a,
                  const char *b, const char *out)
{
    mica_field_t f;
    mica_fields_t fields = {key ? 1 : 0, &f};
    const char *ins[2] = {a, b}, *outs[1] = {out};
    mica_layer_spec_t spec;

    f.name = key;
    f.type = MICA_FIELD_STRING;
    f.count = 1;
    f.data = &value;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.nb_inputs = b ? 2 : 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("layer %s: %s", name, mica_context_error(th_context()));
}

/* A shape-tensor input whose one profile admits exactly its values. */
static mica_status_t add_shape_input(mica_network_t *net, const char *name,
                                     const th_tensor_t *t)
{
    int32_t profile, n = (int32_t)th_volume(t);
    mica_status_t st;

    if (t->dtype != MICA_INT32)
        bail("th_shape: shape-tensor inputs are int32");
    if ((st = mica_network_add_shape_input(net, name, &t->dims, NULL)) != MICA_OK)
        return st;
    if (mica_network_nb_profiles(net) == 0 &&
        (st = mica_network_add_profile(net, &profile)) != MICA_OK)
        return st;
    return mica_network_set_profile_values(net, 0, name, n, t->data, t->data,
                                           t->data, NULL);
}

/* An input of t's dtype whose dimension k is a runtime one (-1) where
 * bit k of `mask` is set, with its range in profile 0: lo, t's dims as
 * opt, hi. */
static mica_status_t add_ranged_input(mica_network_t *net, const char *name,
                                      const th_tensor_t *t, unsigned mask,
                                      const mica_dims_t *lo,
                                      const mica_dims_t *hi)
{
    mica_dims_t d = t->dims;
    int32_t profile, k;
    mica_status_t st;

    for (k = 0; k < d.nb_dims; k++)
        if (mask & (1u << k))
            d.d[k] = -1;
    if ((st = mica_network_add_input(net, name, t->dtype, &d, NULL)) != MICA_OK)
        return st;
    if (mica_network_nb_profiles(net) == 0 &&
        (st = mica_network_add_profile(net, &profile)) != MICA_OK)
        return st;
    return mica_network_set_profile_dims(net, 0, name, lo, &t->dims, hi,
                                         NULL);
}

/* An input with runtime dimensions (bit k of t->runtime: dimension k):
 * min 1 (0 for an empty dimension), opt the tensor's length, max twice it
 * (a length of 1 keeps it: a broadcast stays one at the maximum). */
static mica_status_t add_runtime_input(mica_network_t *net, const char *name,
                                       const th_tensor_t *t)
{
    mica_dims_t lo = t->dims, hi = t->dims;
    int32_t k;

    for (k = 0; k < lo.nb_dims; k++)
        if (t->runtime & (1u << k)) {
            lo.d[k] = t->dims.d[k] ? 1 : 0;
            hi.d[k] = t->dims.d[k] > 1 ? 2 * t->dims.d[k] : t->dims.d[k];
        }
    return add_ranged_input(net, name, t, t->runtime, &lo, &hi);
}

/* The input of th_dynamic: its min and max, t's dims as opt. */
static mica_status_t add_dynamic_input(mica_network_t *net, const char *name,
                                       const th_tensor_t *t)
{
    mica_dims_t lo = dyn_min, hi = dyn_max;
    unsigned mask = 0;
    int32_t k;

    lo.nb_dims = hi.nb_dims = t->dims.nb_dims;
    for (k = 0; k < lo.nb_dims; k++)
        if (lo.d[k] != hi.d[k])
            mask |= 1u << k;
    return add_ranged_input(net, name, t, mask, &lo, &hi);
}

mica_status_t th_run(uint32_t device, const char *type, th_fields_t *fields,
                     int nb_in, const th_tensor_t *in, int nb_out,
                     th_tensor_t *out)
{
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    char names[2][16][16];
    const char *in_names[16], *out_names[16];
    void *moved[16] = {NULL}; /* channels-last copies, read by the run */
    mica_status_t st;
    int i, cl = device == MICA_DEVICE_CUDA
                    ? chans_last
                    : chans_last_cpu && pin_cpu &&
                          strcmp(pin_cpu, "reference") != 0;

    last_error[0] = '\0';
    for (i = 0; i < nb_out; i++)
        memset(&out[i], 0, sizeof out[i]);
    if (nb_in > 16 || nb_out > 16)
        bail("th_run: too many tensors");
    if ((st = mica_network_create(ctx, &net)) != MICA_OK)
        return failed(st, ctx);
    for (i = 0; i < nb_in; i++) {
        snprintf(names[0][i], sizeof names[0][i], "in%d", i);
        in_names[i] = in[i].data ? names[0][i] : NULL;
        if (in[i].data && !in[i].is_shape && i == dyn_index) {
            if ((st = add_dynamic_input(net, names[0][i], &in[i])) != MICA_OK)
                goto done;
        } else if (in[i].data && !in[i].is_shape && !in[i].runtime &&
                   (st = mica_network_add_input(net, names[0][i], in[i].dtype,
                                                &in[i].dims, NULL)) != MICA_OK)
            goto done;
        if (in[i].data && !in[i].is_shape && in[i].runtime &&
            i != dyn_index &&
            (st = add_runtime_input(net, names[0][i], &in[i])) != MICA_OK)
            goto done;
        if (in[i].data && in[i].is_shape &&
            (st = add_shape_input(net, names[0][i], &in[i])) != MICA_OK)
            goto done;
    }
    for (i = 0; i < nb_out; i++) {
        snprintf(names[1][i], sizeof names[1][i], "out%d", i);
        out_names[i] = names[1][i];
    }
    /* th_channels_last: inputs, then outputs in input 0's rank. */
    for (i = 0; cl && i < nb_in + nb_out; i++) {
        const th_tensor_t *t = i < nb_in ? &in[i] : &in[0];
        uint32_t f = cl_format(t->dtype, t->dims.nb_dims);
        if ((i >= nb_in || (t->data && !t->is_shape)) &&
            f != MICA_FORMAT_LINEAR &&
            (st = mica_network_set_format(
                 net, i < nb_in ? names[0][i] : out_names[i - nb_in], f,
                 NULL)) != MICA_OK)
            goto done;
    }
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "layer";
    spec.type = type;
    spec.implementation = device == MICA_DEVICE_CUDA ? pin_cuda : pin_cpu;
    spec.nb_inputs = nb_in;
    spec.inputs = in_names;
    spec.nb_outputs = nb_out;
    spec.outputs = out_names;
    spec.fields = th_fields_view(fields);
    if ((st = mica_network_add_layer(net, &spec)) != MICA_OK)
        goto done;
    for (i = 0; i < nb_out; i++)
        if ((st = mica_network_mark_output(net, out_names[i], NULL)) != MICA_OK)
            goto done;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if ((st = mica_engine_build(net, &cfg, &engine)) != MICA_OK ||
        (st = mica_exec_create(engine, &exec)) != MICA_OK)
        goto done;
    if (cl && mica_engine_nb_layers(engine) != 1) {
        snprintf(last_error, sizeof last_error, "channels last: the layer "
                 "did not take it, the build has %d layers (reorders "
                 "inserted)", (int)mica_engine_nb_layers(engine));
        st = MICA_ERR_UNSUPPORTED;
        goto done;
    }
    /* mica_exec_set_input keeps the pointer until the run: the
     * channels-last copies live until done. */
    for (i = 0; i < nb_in; i++) {
        if (!in[i].data)
            continue;
        if (cl && !in[i].is_shape &&
            cl_format(in[i].dtype, in[i].dims.nb_dims) != MICA_FORMAT_LINEAR)
            moved[i] = reorder(in[i].data, in[i].dtype, &in[i].dims, 1);
        if ((st = mica_exec_set_input(exec, names[0][i], &in[i].dims,
                                      moved[i] ? moved[i] : in[i].data)) !=
            MICA_OK)
            goto done;
    }
    if ((st = mica_exec_run(exec)) != MICA_OK)
        goto done;
    for (i = 0; i < nb_out; i++) {
        mica_tensor_desc_t d;
        const void *data;
        size_t bytes;
        if ((st = mica_exec_get_output(exec, out_names[i], &d, &data)) != MICA_OK)
            goto done;
        out[i] = th_tensor(d.dtype, d.dims.nb_dims, d.dims.d, NULL);
        bytes = (size_t)th_volume(&out[i]) * mica_dtype_size(d.dtype);
        if (d.format != MICA_FORMAT_LINEAR) {
            void *back = reorder(data, d.dtype, &d.dims, 0);
            memcpy(out[i].data, back, bytes);
            free(back);
        } else {
            memcpy(out[i].data, data, bytes);
        }
    }
done:
    if (st != MICA_OK) {
        if (!last_error[0]) /* else said already */
            failed(st, ctx);
        for (i = 0; i < nb_out; i++)
            th_free(&out[i]);
    }
    for (i = 0; i < nb_in; i++)
        free(moved[i]);
    mica_exec_destroy(exec);
    mica_engine_destroy(engine);
    mica_network_destroy(net);
    return st;
}

/* ---- comparing -------------------------------------------------------- */

static void dims_text(const mica_dims_t *d, char *buf, size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    int i;
    for (i = 0; i < d->nb_dims && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", i ? "," : "",
                                (long long)d->d[i]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
}

int th_same(const th_tensor_t *want, const th_tensor_t *got, double rtol,
            double atol, char *why, size_t whylen)
{
    char a[128], b[128];
    int64_t i, n;
    int k;

    if (want->dtype != got->dtype) {
        snprintf(why, whylen, "dtype %s, expected %s",
                 mica_dtype_name(got->dtype), mica_dtype_name(want->dtype));
        return 0;
    }
    dims_text(&want->dims, a, sizeof a);
    dims_text(&got->dims, b, sizeof b);
    if (want->dims.nb_dims != got->dims.nb_dims) {
        snprintf(why, whylen, "shape %s, expected %s", b, a);
        return 0;
    }
    for (k = 0; k < want->dims.nb_dims; k++)
        if (want->dims.d[k] != got->dims.d[k]) {
            snprintf(why, whylen, "shape %s, expected %s", b, a);
            return 0;
        }
    n = th_volume(want);
    for (i = 0; i < n; i++) {
        double w = th_get(want, i), g = th_get(got, i);
        if (isnan(w) && isnan(g))
            continue;
        if (isinf(w) && w == g)
            continue;
        if (!(fabs(w - g) <= atol + rtol * fabs(w))) {
            snprintf(why, whylen, "element %lld is %.9g, expected %.9g",
                     (long long)i, g, w);
            return 0;
        }
    }
    return 1;
}

int th_check(const char *label, const char *type, th_fields_t *fields,
             int nb_in, const th_tensor_t *in, int nb_out,
             const th_tensor_t *expect, double tol)
{
    th_tensor_t cpu[16], gpu[16];
    char why[512] = "";
    int i, good = 1, gpu_good = 1, cpu_ran;
    mica_status_t st;

    st = th_run(MICA_DEVICE_CPU, type, fields, nb_in, in, nb_out, cpu);
    cpu_ran = st == MICA_OK;
    if (!cpu_ran) {
        ok(0, "%s: cpu", label);
        diag("%s", th_error());
        good = 0;
    } else {
        for (i = 0; i < nb_out && good; i++)
            if (expect && !th_same(&expect[i], &cpu[i], tol, tol, why, sizeof why)) {
                good = 0;
                diag("%s: output %d: %s", label, i, why);
            }
        ok(good, "%s: cpu", label);
    }
    if (!th_cuda()) {
        skip("%s: cuda: no usable GPU", label);
    } else if (!good) {
        ok(0, "%s: cuda (no cpu reference)", label);
        gpu_good = 0;
    } else {
        st = th_run(MICA_DEVICE_CUDA, type, fields, nb_in, in, nb_out, gpu);
        if (st != MICA_OK) {
            gpu_good = 0;
            diag("%s", th_error());
        }
        for (i = 0; i < nb_out && gpu_good; i++)
            if (!th_same(&cpu[i], &gpu[i], tol, tol, why, sizeof why)) {
                gpu_good = 0;
                diag("%s: cuda output %d: %s", label, i, why);
            }
        ok(gpu_good, "%s: cuda", label);
        for (i = 0; i < nb_out && st == MICA_OK; i++)
            th_free(&gpu[i]);
    }
    for (i = 0; cpu_ran && i < nb_out; i++)
        th_free(&cpu[i]);
    th_fields_free(fields);
    return good && gpu_good;
}

int th_check_cpu(const char *label, const char *type, th_fields_t *fields,
                 int nb_in, const th_tensor_t *in, const th_tensor_t *want,
                 double rtol, double atol)
{
    th_tensor_t got;
    char why[512] = "";
    int good;

    good = th_run(MICA_DEVICE_CPU, type, fields, nb_in, in, 1, &got) ==
           MICA_OK;
    th_fields_free(fields);
    if (!good)
        return ok(0, "%s: cpu: %s", label, th_error());
    good = th_same(want, &got, rtol, atol, why, sizeof why);
    th_free(&got);
    return ok(good, "%s: cpu%s%s", label, good ? "" : ": ", why);
}

void th_refused(const char *label, const char *type, uint32_t device,
                const char *impl, th_fields_t *fields, mica_dtype_t t,
                int nb_in)
{
    mica_tensor_desc_t io[17];
    mica_layer_t *l;
    int k;

    if (nb_in < 1 || nb_in > 16)
        bail("th_refused: %d inputs", nb_in);
    if (!th_has_impl(type, device, impl)) {
        th_fields_free(fields);
        skip("%s: refused: %s is not in this build", label, impl);
        return;
    }
    if (!(l = th_instance(type, device, impl, fields)))
        bail("%s: no instance: %s", label, th_error());
    memset(io, 0, sizeof io);
    for (k = 0; k <= nb_in; k++) {
        io[k].dtype = t;
        io[k].scale = 1.0f;
        io[k].dims.nb_dims = 1;
        io[k].dims.d[0] = 3;
    }
    ok(l->ops->supports_format(l, 0, io, nb_in, 1) == 0, "%s: refused",
       label);
    l->ops->destroy(l);
}

int th_check_error(const char *label, const char *type, th_fields_t *fields,
                   int nb_in, const th_tensor_t *in, int nb_out,
                   const char *needle)
{
    return th_check_error_on(MICA_DEVICE_CPU, label, type, fields, nb_in, in,
                             nb_out, needle);
}

int th_check_error_on(uint32_t device, const char *label, const char *type,
                      th_fields_t *fields, int nb_in, const th_tensor_t *in,
                      int nb_out, const char *needle)
{
    th_tensor_t out[16];
    mica_status_t st;
    int i, good;

    if (device == MICA_DEVICE_CUDA && !th_cuda()) {
        th_fields_free(fields);
        skip("%s: fails on cuda: no usable GPU", label);
        return 1;
    }
    st = th_run(device, type, fields, nb_in, in, nb_out, out);
    if (st == MICA_OK) {
        for (i = 0; i < nb_out; i++)
            th_free(&out[i]);
        good = ok(0, "%s: fails", label);
        diag("expected an error containing '%s'", needle);
    } else {
        good = ok(strstr(th_error(), needle) != NULL, "%s: fails", label);
        if (!good)
            diag("message '%s' lacks '%s'", th_error(), needle);
    }
    th_fields_free(fields);
    return good;
}

int th_check_impl(const char *label, const char *type, th_fields_t *fields,
                  int nb_in, const th_tensor_t *in, int nb_out,
                  uint32_t device, const char *impl, double tol)
{
    const char *save_cpu = pin_cpu, *save_cuda = pin_cuda;
    const char *dev = device == MICA_DEVICE_CUDA ? "cuda" : "cpu";
    th_tensor_t ref[16], got[16];
    char why[512] = "";
    mica_status_t st;
    int i, good = 1;

    if (device == MICA_DEVICE_CUDA && !th_cuda()) {
        th_fields_free(fields);
        skip("%s: %s %s: no usable GPU", label, dev, impl);
        return 1;
    }
    if (!th_has_impl(type, device, impl)) {
        th_fields_free(fields);
        skip("%s: %s %s: not in this build", label, dev, impl);
        return 1;
    }
    pin_cpu = "reference";
    st = th_run(MICA_DEVICE_CPU, type, fields, nb_in, in, nb_out, ref);
    if (st != MICA_OK) {
        diag("%s: reference: %s", label, th_error());
        good = 0;
    }
    if (device == MICA_DEVICE_CUDA)
        pin_cuda = impl;
    else
        pin_cpu = impl;
    if (good) {
        st = th_run(device, type, fields, nb_in, in, nb_out, got);
        if (st != MICA_OK) {
            diag("%s: %s: %s", label, impl, th_error());
            good = 0;
            for (i = 0; i < nb_out; i++)
                th_free(&ref[i]);
        }
    }
    pin_cpu = save_cpu;
    pin_cuda = save_cuda;
    for (i = 0; good && i < nb_out; i++)
        if (!th_same(&ref[i], &got[i], tol, tol, why, sizeof why)) {
            diag("%s: %s output %d: %s", label, impl, i, why);
            good = 0;
        }
    if (st == MICA_OK)
        for (i = 0; i < nb_out; i++) {
            th_free(&ref[i]);
            th_free(&got[i]);
        }
    th_fields_free(fields);
    return ok(good, "%s: %s %s", label, dev, impl);
}

/* ---- instances without a build -------------------------------------- */

mica_layer_t *th_instance(const char *type, uint32_t device,
                          const char *impl, th_fields_t *fields)
{
    mica_creator_info_t info;
    mica_error_t err;
    mica_layer_t *l = NULL;

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    memset(&err, 0, sizeof err);
    last_error[0] = '\0';
    if (mica_registry_find(th_context(), NULL, type, 0, impl, device,
                           &info) != MICA_OK) {
        failed(MICA_ERR_NOT_FOUND, th_context());
    } else {
        l = info.creator->create(info.creator, type, th_fields_view(fields),
                                 &err);
        if (!l)
            snprintf(last_error, sizeof last_error, "%s",
                     err.set ? err.msg : "create failed");
    }
    th_fields_free(fields);
    return l;
}

mica_status_t th_set_tactic(mica_layer_t *layer, int32_t tactic)
{
    mica_error_t err;
    mica_status_t st;

    memset(&err, 0, sizeof err);
    last_error[0] = '\0';
    if (layer->ops->struct_size <= offsetof(mica_layer_ops_t, set_tactic) ||
        !layer->ops->set_tactic) {
        snprintf(last_error, sizeof last_error, "no set_tactic");
        return MICA_ERR_UNSUPPORTED;
    }
    st = layer->ops->set_tactic(layer, tactic, &err);
    if (st != MICA_OK)
        snprintf(last_error, sizeof last_error, "%s",
                 err.set ? err.msg : "set_tactic failed");
    return st;
}

void th_check_formats(const char *label, const char *type,
                      uint32_t device, const char *impl, th_fields_t *fields,
                      mica_dtype_t dtype, int r, const int64_t *x,
                      uint32_t fin, uint32_t fout, int want)
{
    static const char *const fmt[] = {"linear", "hwc", "dhwc"};
    const char *dev = device == MICA_DEVICE_CUDA ? "cuda" : "cpu";
    mica_tensor_desc_t io[2];
    mica_layer_t *l;
    int got, i;

    if (!th_has_impl(type, device, impl)) {
        th_fields_free(fields);
        skip("%s: %s %s: formats: not in this build", label, dev, impl);
        return;
    }
    if (!(l = th_instance(type, device, impl, fields)))
        bail("%s: %s %s: no instance: %s", label, dev, impl, th_error());
    memset(io, 0, sizeof io);
    for (i = 0; i < 2; i++) {
        io[i].dtype = dtype;
        io[i].scale = 1.0f;
        io[i].dims.nb_dims = r;
        memcpy(io[i].dims.d, x, sizeof *x * (size_t)r);
    }
    io[0].format = (mica_format_t)fin;
    io[1].format = (mica_format_t)fout;
    got = l->ops->supports_format(l, 0, io, 1, 1) &&
          l->ops->supports_format(l, 1, io, 1, 1);
    ok(got == want, "%s: %s %s %s: %s in, %s out: %s", label, dev, impl,
       mica_dtype_name(dtype), fmt[fin % 3], fmt[fout % 3],
       want ? "accepted" : "refused");
    l->ops->destroy(l);
}
