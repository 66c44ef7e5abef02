/*
 * modules/scatter/scatter.c - the Scatter layer (TensorRT's
 * IScatterLayer): creators, layer ops and the CPU reference.
 *
 * Inputs data (rank r >= 1, any type of mica_kit_any_type), indices
 * (int32, rank q) and updates (data's type, rank s); one output of data's
 * shape and type: a copy of data with the updates written where the
 * indices say.  `mode`:
 *   element  q = s = r, updates of indices' shape, each indices dimension
 *            at most data's but along `axis`: updates[c] goes to
 *            out[c with c[axis] = indices[c]].
 *   nd       q >= 1; the last dimension K of indices (1..r) holds
 *            coordinates of data's first K axes; s = q - 1 + r - K and
 *            updates is indices.shape[:-1] + data.shape[K:]: each tuple's
 *            slice of updates replaces the slice of data it names.
 * An index may be negative, counting from the end of its axis (ONNX's
 * rule; TensorRT does not say).  One outside [-size, size) is a run-time
 * error that names it, and nothing is written for it.  Indices naming
 * one place twice: the last in row-major order wins on the CPU; on CUDA
 * which one wins is unspecified.
 */
#include <config.h>

#include <string.h>

#include "mica/kit.h"

#include "scatter.h"

static const char *const mode_names[] = {"element", "nd", NULL};
static const int64_t zero[] = {0};

static const mica_field_schema_t scatter_fields[] = {
    {"mode", MICA_FIELD_ENUM, 1, 1, 0, NULL, mode_names,
     "element: one index per update element; nd: index tuples naming "
     "slices"},
    {"axis", MICA_FIELD_INT, 1, 0, 1, zero, NULL,
     "the axis indexed in element mode"},
};

typedef struct scatter_layer {
    mica_kit_layer_t base;
    int32_t mode, axis;
    void *pinned; /* CUDA: the error record's read-back buffer */
} scatter_layer_t;

static mica_status_t scatter_dtypes(const mica_layer_t *layer,
                                    const mica_dtype_t *in, int32_t nb_in,
                                    mica_dtype_t *out, int32_t nb_out,
                                    mica_error_t *err)
{
    (void)layer;
    if (nb_in != 3 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 3 inputs (data, indices, updates) "
                             "and gives 1 output, got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "data cannot be %s",
                             mica_kit_host->dtype_name(in[0]));
    if (in[1] != MICA_INT32)
        return MICA_KIT_FAIL(err, "indices must be int32, got %s",
                             mica_kit_host->dtype_name(in[1]));
    if (in[2] != in[0])
        return MICA_KIT_FAIL(err, "updates must be %s as data, got %s",
                             mica_kit_host->dtype_name(in[0]),
                             mica_kit_host->dtype_name(in[2]));
    out[0] = in[0];
    return MICA_OK;
}

/* The value of e if it is a build-time constant, else -1. */
static int64_t known(const mica_expr_t *e)
{
    return mica_kit_host->expr_is_constant(e)
               ? mica_kit_host->expr_constant_value(e)
               : -1;
}

/*
 * The shape rules, on dimensions as int64 (-1: not known yet): at build
 * time from expressions, at run time from the descriptors.  *k gets nd's
 * K.
 */
static mica_status_t check_shapes(const scatter_layer_t *l, int32_t r,
                                  const int64_t *data, int32_t q,
                                  const int64_t *idx, int32_t s,
                                  const int64_t *upd, int32_t *k,
                                  mica_error_t *err)
{
    int32_t i, kk;

    if (r < 1)
        return MICA_KIT_FAIL(err, "data must have rank >= 1, got 0");
    if (l->mode == MICA__SCATTER_ELEMENT) {
        if (l->axis >= r)
            return MICA_KIT_FAIL(err, "axis %d is out of range for rank %d "
                                 "(0 to %d)", (int)l->axis, (int)r,
                                 (int)r - 1);
        if (q != r || s != r)
            return MICA_KIT_FAIL(err, "mode element: indices and updates "
                                 "must have data's rank %d, got %d and %d",
                                 (int)r, (int)q, (int)s);
        for (i = 0; i < r; i++) {
            if (idx[i] >= 0 && upd[i] >= 0 && idx[i] != upd[i])
                return MICA_KIT_FAIL(err, "mode element: updates dimension "
                                     "%d is %lld but indices' is %lld",
                                     (int)i, (long long)upd[i],
                                     (long long)idx[i]);
            if (i != l->axis && idx[i] >= 0 && data[i] >= 0 &&
                idx[i] > data[i])
                return MICA_KIT_FAIL(err, "mode element: indices dimension "
                                     "%d is %lld, more than data's %lld",
                                     (int)i, (long long)idx[i],
                                     (long long)data[i]);
        }
        *k = 0;
        return MICA_OK;
    }
    if (q < 1)
        return MICA_KIT_FAIL(err, "mode nd: indices must have rank >= 1, "
                             "got 0");
    kk = r + q - 1 - s;
    if (kk < 1 || kk > r)
        return MICA_KIT_FAIL(err, "mode nd: updates must have rank %d + %d "
                             "- 1 - K for K (the last dimension of indices) "
                             "from 1 to %d, got rank %d", (int)r, (int)q,
                             (int)r, (int)s);
    if (idx[q - 1] >= 0 && idx[q - 1] != kk)
        return MICA_KIT_FAIL(err, "mode nd: indices' last dimension is %lld, "
                             "so updates must have rank %lld, got %d",
                             (long long)idx[q - 1],
                             (long long)(r + q - 1 - idx[q - 1]), (int)s);
    for (i = 0; i < s; i++) {
        int64_t want = i < q - 1 ? idx[i] : data[kk + i - (q - 1)];
        if (want >= 0 && upd[i] >= 0 && want != upd[i])
            return MICA_KIT_FAIL(err, "mode nd: updates dimension %d is %lld "
                                 "but must be %lld (indices.shape[:-1] + "
                                 "data.shape[%d:])", (int)i,
                                 (long long)upd[i], (long long)want, (int)kk);
    }
    *k = kk;
    return MICA_OK;
}

static mica_status_t scatter_dims(const mica_layer_t *layer, int32_t index,
                                  const mica_shape_expr_t *in, int32_t nb_in,
                                  mica_expr_builder_t *eb,
                                  mica_shape_expr_t *out, mica_error_t *err)
{
    const scatter_layer_t *l = (const scatter_layer_t *)layer;
    int64_t d[3][MICA_MAX_DIMS];
    int32_t t, i, k;
    mica_status_t st;

    for (t = 0; t < 3; t++)
        for (i = 0; i < in[t].nb_dims; i++)
            d[t][i] = known(in[t].d[i]);
    st = check_shapes(l, in[0].nb_dims, d[0], in[1].nb_dims, d[1],
                      in[2].nb_dims, d[2], &k, err);
    if (st != MICA_OK)
        return st;
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

static int32_t scatter_formats(const mica_layer_t *layer, int32_t pos,
                               const mica_tensor_desc_t *io, int32_t nb_in,
                               int32_t nb_out)
{
    (void)layer;
    if (nb_in != 3 || nb_out != 1 || !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return mica_kit_any_type(io[0].dtype);
    if (pos == 1)
        return io[1].dtype == MICA_INT32;
    return io[pos].dtype == io[0].dtype;
}

/* The run's shape from the descriptors, checked. */
static mica_status_t make_run(const scatter_layer_t *l,
                              const mica_tensor_desc_t *in,
                              mica__scatter_t *p, mica_error_t *err)
{
    int32_t i, k;
    mica_status_t st;

    st = check_shapes(l, in[0].dims.nb_dims, in[0].dims.d,
                      in[1].dims.nb_dims, in[1].dims.d, in[2].dims.nb_dims,
                      in[2].dims.d, &k, err);
    if (st != MICA_OK)
        return st;
    memset(p, 0, sizeof *p);
    p->mode = l->mode;
    p->rank = in[0].dims.nb_dims;
    p->axis = l->axis;
    p->k = k;
    p->esize = mica_dtype_size(in[0].dtype);
    p->n_data = mica_dims_volume(&in[0].dims);
    p->n_updates = mica_dims_volume(&in[2].dims);
    for (i = 0; i < p->rank; i++)
        p->data[i] = in[0].dims.d[i];
    for (i = 0; i < in[1].dims.nb_dims; i++)
        p->idx[i] = in[1].dims.d[i];
    p->tuples = p->slice = 1;
    if (l->mode == MICA__SCATTER_ND) {
        for (i = 0; i < in[1].dims.nb_dims - 1; i++)
            p->tuples *= in[1].dims.d[i];
        for (i = k; i < p->rank; i++)
            p->slice *= p->data[i];
    }
    return MICA_OK;
}

/* ---- the CPU reference ------------------------------------------------- */

/*
 * Where update u goes (an element offset into data) into *at; 0 if an
 * index is out of range, with the message in err.
 */
static int target(const mica__scatter_t *p, const int32_t *indices,
                  int64_t u, int64_t *at, mica_error_t *err)
{
    int64_t rest = u, off = 0, stride = 1, c, v, size;
    int32_t a;

    if (p->mode == MICA__SCATTER_ELEMENT) {
        for (a = p->rank - 1; a >= 0; a--) {
            c = rest % p->idx[a];
            rest /= p->idx[a];
            if (a == p->axis) {
                v = indices[u];
                size = p->data[a];
                if (v < -size || v >= size) {
                    mica_kit_host->set_error(
                        err, MICA__SCATTER_RANGE_FMT, (long long)v,
                        "indices element", (long long)u, (int)a,
                        (long long)size, (long long)size,
                        (long long)size - 1);
                    return 0;
                }
                c = v < 0 ? v + size : v;
            }
            off += c * stride;
            stride *= p->data[a];
        }
        *at = off;
        return 1;
    }
    {
        int64_t t = u / p->slice, e = u % p->slice;
        for (a = 0; a < p->k; a++) {
            v = indices[t * p->k + a];
            size = p->data[a];
            if (v < -size || v >= size) {
                mica_kit_host->set_error(err, MICA__SCATTER_RANGE_FMT,
                                         (long long)v, "indices tuple",
                                         (long long)t, (int)a,
                                         (long long)size, (long long)size,
                                         (long long)size - 1);
                return 0;
            }
            off = off * size + (v < 0 ? v + size : v);
        }
        *at = off * p->slice + e;
        return 1;
    }
}

static MICA_KIT_ENQUEUE(scatter_cpu)
{
    const scatter_layer_t *l = (const scatter_layer_t *)layer;
    const int32_t *indices = (const int32_t *)inputs[1];
    mica__scatter_t p;
    int64_t u, at;
    mica_status_t st = make_run(l, in, &p, err);

    if (st != MICA_OK)
        return st;
    if (outputs[0] != inputs[0])
        memcpy(outputs[0], inputs[0], (size_t)p.n_data * p.esize);
    for (u = 0; u < p.n_updates; u++) /* every index checked first */
        if (!target(&p, indices, u, &at, err))
            return MICA_ERR_RUNTIME;
    for (u = 0; u < p.n_updates; u++) {
        target(&p, indices, u, &at, err);
        memcpy((char *)outputs[0] + (size_t)at * p.esize,
               (const char *)inputs[2] + (size_t)u * p.esize, p.esize);
    }
    return MICA_OK;
}

#if MICA_KIT_CUDA
static size_t scatter_workspace(const mica_layer_t *layer,
                                const mica_dyn_desc_t *in, int32_t nb_in,
                                const mica_dyn_desc_t *out, int32_t nb_out)
{
    (void)layer; (void)in; (void)nb_in; (void)out; (void)nb_out;
    return MICA__SCATTER_WORKSPACE;
}

static MICA_KIT_ENQUEUE(scatter_cuda)
{
    scatter_layer_t *l = (scatter_layer_t *)layer;
    mica__scatter_t p;
    mica_status_t st = make_run(l, in, &p, err);

    if (st != MICA_OK)
        return st;
    if (!workspace)
        return MICA_KIT_FAIL(err, "Scatter on CUDA needs %d bytes of "
                             "workspace, got none", MICA__SCATTER_WORKSPACE);
    return mica__scatter_cuda(&p, inputs[0], (const int32_t *)inputs[1],
                              inputs[2], outputs[0], workspace, &l->pinned,
                              stream, err);
}

static void scatter_fini(mica_kit_layer_t *self)
{
    scatter_layer_t *l = (scatter_layer_t *)self;
    mica__scatter_cuda_free(l->pinned);
    l->pinned = NULL;
}
#endif

static mica_layer_t *scatter_create(const mica_layer_creator_t *creator,
                                    const char *name,
                                    const mica_fields_t *fields,
                                    mica_error_t *err)
{
    scatter_layer_t *l;
    int64_t axis = mica_kit_int(fields, "axis", 0);

    if (axis < 0 || axis >= MICA_MAX_DIMS) {
        mica_kit_host->set_error(err, "axis must be 0 or more (less than "
                                 "the rank), got %lld", (long long)axis);
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->mode = (int32_t)mica_kit_int(fields, "mode", 0);
    l->axis = (int32_t)axis;
#if MICA_KIT_CUDA
    l->base.fini = scatter_fini;
#endif
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(scatter, "Scatter", scatter_fields,
                    MICA_KIT_COUNT(scatter_fields), scatter_create,
                    scatter_cpu, scatter_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = scatter_dtypes,
                    .output_dims = scatter_dims,
                    .supports_format = scatter_formats,
                    MICA_KIT_IF_CUDA(.workspace_size = scatter_workspace))

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(scatter)};

MICA_KIT_ENTRY("scatter", PACKAGE_VERSION, "MIT",
               "Scatter: a copy of data with updates written at indices",
               creators)
