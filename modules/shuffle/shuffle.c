/*
 * modules/shuffle/shuffle.c - the Shuffle layer (TensorRT's IShuffleLayer):
 * a first transpose, a reshape, a second transpose.
 *
 * Params:
 *   first_transpose   a permutation of the input's axes (default identity);
 *                     output axis i of this step is input axis p[i];
 *   reshape           the new dimensions, applied to the result of the
 *                     first transpose (absent: no reshape).  0 copies the
 *                     dimension at the same index of that result when
 *                     zero_is_placeholder is true (else it is a length 0);
 *                     one -1 is inferred from the volume;
 *   second_transpose  a permutation of the reshaped axes (default identity);
 *   zero_is_placeholder  default true.
 * Errors (as TensorRT): a permutation of the wrong length or that is not a
 * permutation, more than one -1, values below -1, a 0 placeholder beyond
 * the input's rank, volumes that differ, and a -1 whose other dimensions
 * have volume 0 (the -1 would be indeterminate).
 *
 * The second input of TensorRT's Shuffle (the reshape dimensions as a
 * shape tensor) is not supported yet: giving it is an error.
 *
 * Any element type (it only moves bytes); the output has the input's type.
 * Output dims are expressions, so symbolic input dims work: a -1 becomes
 * floor_div(input volume, volume of the other dims).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modkit.h"
#include "shuffle.h"

typedef struct shuffle_layer {
    mica__mod_layer_t base;
    int32_t n1, nr, n2; /* lengths; nr < 0: no reshape */
    int64_t p1[MICA_MAX_DIMS], reshape[MICA_MAX_DIMS], p2[MICA_MAX_DIMS];
    int zero_is_placeholder;
} shuffle_layer_t;

static const int64_t default_true = 1;

static const mica_field_schema_t shuffle_fields[] = {
    {"first_transpose", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "permutation applied first (default: identity)"},
    {"reshape", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "new dimensions; 0 copies, -1 is inferred (default: no reshape)"},
    {"second_transpose", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "permutation applied last (default: identity)"},
    {"zero_is_placeholder", MICA_FIELD_BOOL, 1, 0, 1, &default_true, NULL,
     "0 in reshape copies the input dimension (default: true)"},
};

static const char *ints_text(const int64_t *v, int32_t n, char *buf,
                             size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    int32_t i;
    for (i = 0; i < n && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", i ? ", " : "",
                                (long long)v[i]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}

static int is_identity(const int64_t *p, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (p[i] != i)
            return 0;
    return 1;
}

/* Check a permutation field; copy it into p, its length into *n. */
static mica_status_t get_perm(const mica_fields_t *f, const char *name,
                              int64_t *p, int32_t *n, mica_error_t *err)
{
    const int64_t *v = mica__mod_ints(f, name);
    int32_t i, j, cnt = mica__mod_count(f, name);
    char text[256];

    *n = 0;
    if (!v || cnt <= 0)
        return MICA_OK;
    if (cnt > MICA_MAX_DIMS)
        return MOD_FAIL(err, "'%s' has %d entries, more than %d", name,
                        (int)cnt, MICA_MAX_DIMS);
    for (i = 0; i < cnt; i++) {
        if (v[i] < 0 || v[i] >= cnt)
            return MOD_FAIL(err, "'%s' %s is not a permutation: %lld is "
                            "outside [0, %d)", name,
                            ints_text(v, cnt, text, sizeof text),
                            (long long)v[i], (int)cnt);
        for (j = 0; j < i; j++)
            if (v[j] == v[i])
                return MOD_FAIL(err, "'%s' %s is not a permutation: %lld "
                                "appears twice", name,
                                ints_text(v, cnt, text, sizeof text),
                                (long long)v[i]);
        p[i] = v[i];
    }
    *n = cnt;
    return MICA_OK;
}

/* ---- shapes ------------------------------------------------------------- */

static int32_t shuffle_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

static mica_status_t check_inputs(int32_t nb_in, const mica_shape_expr_t *in,
                                  mica_error_t *err)
{
    if (nb_in < 1 || nb_in > 2)
        return MOD_FAIL(err, "takes 1 input (and an optional second), got %d",
                        (int)nb_in);
    if (nb_in == 2 && in && in[1].nb_dims > 0)
        return MOD_FAIL(err, "input 1 (reshape dimensions as a shape tensor) "
                        "is not supported yet: give the 'reshape' param");
    return MICA_OK;
}

static mica_status_t shuffle_output_dtypes(const mica_layer_t *layer,
                                           const mica_dtype_t *in,
                                           int32_t nb_in, mica_dtype_t *out,
                                           int32_t nb_out, mica_error_t *err)
{
    mica_status_t st;
    (void)layer;
    if ((st = check_inputs(nb_in, NULL, err)) != MICA_OK)
        return st;
    if (nb_out != 1)
        return MOD_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = in[0];
    return MICA_OK;
}

#define EXPR_C(v) mica__mod_host->expr_constant(eb, (v))
#define EXPR_OP(op, a, b) mica__mod_host->expr_operation(eb, (op), (a), (b))
#define IS_C(e) mica__mod_host->expr_is_constant(e)
#define C_VAL(e) mica__mod_host->expr_constant_value(e)

static mica_status_t shuffle_output_dims(const mica_layer_t *layer,
                                         int32_t index,
                                         const mica_shape_expr_t *in,
                                         int32_t nb_in,
                                         mica_expr_builder_t *eb,
                                         mica_shape_expr_t *out,
                                         mica_error_t *err)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    const mica_expr_t *t1[MICA_MAX_DIMS], *t2[MICA_MAX_DIMS];
    const mica_expr_t *vol, *known;
    int32_t i, r, rank2, wild = -1;
    mica_status_t st;
    char text[256];

    if ((st = check_inputs(nb_in, in, err)) != MICA_OK)
        return st;
    if (index != 0)
        return MOD_FAIL(err, "has no output %d", (int)index);
    r = in[0].nb_dims;
    if (l->n1 > 0 && l->n1 != r)
        return MOD_FAIL(err, "'first_transpose' %s has %d entries but input "
                        "0 has rank %d", ints_text(l->p1, l->n1, text,
                                                   sizeof text),
                        (int)l->n1, (int)r);
    for (i = 0; i < r; i++)
        t1[i] = in[0].d[l->n1 > 0 ? l->p1[i] : i];
    rank2 = r;
    if (l->nr >= 0) {
        vol = EXPR_C(1);
        for (i = 0; i < r && vol; i++)
            vol = EXPR_OP(MICA_EXPR_PROD, vol, t1[i]);
        known = EXPR_C(1);
        for (i = 0; i < l->nr && known; i++) {
            int64_t v = l->reshape[i];
            if (v == -1) {
                wild = i;
                t2[i] = NULL;
                continue;
            }
            if (v == 0 && l->zero_is_placeholder) {
                if (i >= r)
                    return MOD_FAIL(err, "'reshape' %s: entry %d is 0 (copy "
                                    "the input dimension) but input 0 has "
                                    "rank %d", ints_text(l->reshape, l->nr,
                                                         text, sizeof text),
                                    (int)i, (int)r);
                t2[i] = t1[i];
            } else {
                t2[i] = EXPR_C(v);
            }
            if (t2[i])
                known = EXPR_OP(MICA_EXPR_PROD, known, t2[i]);
        }
        if (!vol || !known)
            return MOD_FAIL(err, "out of host memory");
        for (i = 0; i < l->nr; i++)
            if (i != wild && !t2[i])
                return MOD_FAIL(err, "out of host memory");
        if (wild >= 0) {
            if (IS_C(known) && C_VAL(known) == 0)
                return MOD_FAIL(err, "'reshape' %s: the other dimensions of "
                                "the -1 have volume 0, so the -1 cannot be "
                                "inferred", ints_text(l->reshape, l->nr, text,
                                                      sizeof text));
            if (IS_C(known) && IS_C(vol) && C_VAL(vol) % C_VAL(known) != 0)
                return MOD_FAIL(err, "'reshape' %s: input volume %lld is not "
                                "a multiple of %lld, the volume of the "
                                "dimensions other than the -1",
                                ints_text(l->reshape, l->nr, text,
                                          sizeof text),
                                (long long)C_VAL(vol),
                                (long long)C_VAL(known));
            t2[wild] = EXPR_OP(MICA_EXPR_FLOOR_DIV, vol, known);
            if (!t2[wild])
                return MOD_FAIL(err, "out of host memory");
        } else if (IS_C(known) && IS_C(vol) && C_VAL(known) != C_VAL(vol)) {
            return MOD_FAIL(err, "'reshape' %s has volume %lld but input 0 "
                            "has volume %lld", ints_text(l->reshape, l->nr,
                                                         text, sizeof text),
                            (long long)C_VAL(known), (long long)C_VAL(vol));
        }
        rank2 = l->nr;
    } else {
        for (i = 0; i < r; i++)
            t2[i] = t1[i];
    }
    if (l->n2 > 0 && l->n2 != rank2)
        return MOD_FAIL(err, "'second_transpose' %s has %d entries but the "
                        "reshaped tensor has rank %d",
                        ints_text(l->p2, l->n2, text, sizeof text),
                        (int)l->n2, (int)rank2);
    out->nb_dims = rank2;
    for (i = 0; i < rank2; i++)
        out->d[i] = t2[l->n2 > 0 ? l->p2[i] : i];
    return MICA_OK;
}

static int32_t type_ok(mica_dtype_t t)
{
    return mica_dtype_size(t) != 0;
}

static int32_t shuffle_supports_format(const mica_layer_t *layer, int32_t pos,
                                       const mica_tensor_desc_t *io,
                                       int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    (void)nb_out;
    if (!mica__mod_linear(io, pos))
        return 0;
    if (pos == 0)
        return type_ok(io[0].dtype);
    if (pos == nb_in)
        return io[pos].dtype == io[0].dtype;
    return 0; /* the reshape-dims input: not yet */
}

/* Both transposes move data: the intermediate needs room. */
static int both_transposes(const shuffle_layer_t *l)
{
    return l->n1 > 0 && !is_identity(l->p1, l->n1) && l->n2 > 0 &&
           !is_identity(l->p2, l->n2);
}

static size_t shuffle_workspace_size(const mica_layer_t *layer,
                                     const mica_dyn_desc_t *in, int32_t nb_in,
                                     const mica_dyn_desc_t *out,
                                     int32_t nb_out)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    (void)nb_in; (void)out; (void)nb_out;
    if (!both_transposes(l))
        return 0;
    return (size_t)mica_dims_volume(&in[0].max) *
           mica_dtype_size(in[0].desc.dtype);
}

/* ---- running ------------------------------------------------------------ */

/*
 * The plan of one run: the reshaped dims (before the second transpose) are
 * read back from the output dims through the second permutation.
 */
typedef struct shuffle_plan {
    int32_t r, rank2;
    int64_t in_dims[MICA_MAX_DIMS], mid_dims[MICA_MAX_DIMS];
    int t1, t2; /* whether each transpose moves data */
    size_t esize;
    int64_t n;
} shuffle_plan_t;

static void make_plan(const shuffle_layer_t *l, const mica_tensor_desc_t *in,
                      const mica_tensor_desc_t *out, shuffle_plan_t *p)
{
    int32_t i;
    memset(p, 0, sizeof *p);
    p->r = in[0].dims.nb_dims;
    for (i = 0; i < p->r; i++)
        p->in_dims[i] = in[0].dims.d[i];
    p->rank2 = out[0].dims.nb_dims;
    for (i = 0; i < p->rank2; i++)
        p->mid_dims[l->n2 > 0 ? l->p2[i] : i] = out[0].dims.d[i];
    p->t1 = l->n1 > 0 && !is_identity(l->p1, l->n1);
    p->t2 = l->n2 > 0 && !is_identity(l->p2, l->n2);
    p->esize = mica_dtype_size(in[0].dtype);
    p->n = mica_dims_volume(&out[0].dims);
}

/* The CPU transpose, as mica__shuffle_cuda_transpose. */
static void transpose_cpu(const void *src, int32_t rank, const int64_t *dims,
                          const int64_t *perm, void *dst, size_t esize)
{
    int64_t stride[MICA_MAX_DIMS], odims[MICA_MAX_DIMS], sstr[MICA_MAX_DIMS];
    int64_t c[MICA_MAX_DIMS], n = 1, i, off = 0;
    const unsigned char *s = src;
    unsigned char *d = dst;
    int32_t k;

    for (k = rank - 1; k >= 0; k--) {
        stride[k] = n;
        n *= dims[k];
    }
    for (k = 0; k < rank; k++) {
        odims[k] = dims[perm[k]];
        sstr[k] = stride[perm[k]];
        c[k] = 0;
    }
    for (i = 0; i < n; i++) {
        memcpy(d + (size_t)i * esize, s + (size_t)off * esize, esize);
        for (k = rank - 1; k >= 0; k--) { /* odometer */
            off += sstr[k];
            if (++c[k] < odims[k])
                break;
            off -= sstr[k] * odims[k];
            c[k] = 0;
        }
    }
}

static mica_status_t shuffle_enqueue_cpu(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    shuffle_plan_t p;
    const void *mid;
    (void)nb_in; (void)nb_out; (void)stream; (void)err;

    make_plan(l, in, out, &p);
    if (p.n <= 0)
        return MICA_OK;
    if (!p.t1 && !p.t2) {
        memcpy(outputs[0], inputs[0], (size_t)p.n * p.esize);
        return MICA_OK;
    }
    mid = inputs[0];
    if (p.t1) {
        void *dst = p.t2 ? workspace : outputs[0];
        transpose_cpu(inputs[0], p.r, p.in_dims, l->p1, dst, p.esize);
        mid = dst;
    }
    if (p.t2)
        transpose_cpu(mid, p.rank2, p.mid_dims, l->p2, outputs[0], p.esize);
    return MICA_OK;
}

static const mica_layer_ops_t shuffle_ops_cpu = {
    sizeof(mica_layer_ops_t), 0,
    shuffle_nb_outputs,
    shuffle_output_dtypes,
    shuffle_output_dims,
    shuffle_supports_format,
    NULL,
    shuffle_workspace_size,
    shuffle_enqueue_cpu,
    mica__mod_layer_serialize,
    mica__mod_layer_clone,
    mica__mod_layer_destroy,
    NULL,
};

#ifdef MICA_HAVE_CUDA
static mica_status_t shuffle_enqueue_cuda(mica_layer_t *layer,
                                          const mica_tensor_desc_t *in,
                                          int32_t nb_in,
                                          const mica_tensor_desc_t *out,
                                          int32_t nb_out,
                                          const void *const *inputs,
                                          void *const *outputs,
                                          void *workspace, void *stream,
                                          mica_error_t *err)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    shuffle_plan_t p;
    const void *mid;
    mica_status_t st;
    (void)nb_in; (void)nb_out;

    make_plan(l, in, out, &p);
    if (p.n <= 0)
        return MICA_OK;
    if (!p.t1 && !p.t2)
        return mica__shuffle_cuda_copy(outputs[0], inputs[0],
                                       (size_t)p.n * p.esize, stream, err);
    mid = inputs[0];
    if (p.t1) {
        void *dst = p.t2 ? workspace : outputs[0];
        st = mica__shuffle_cuda_transpose(inputs[0], p.r, p.in_dims, l->p1,
                                          dst, p.esize, stream, err);
        if (st != MICA_OK)
            return st;
        mid = dst;
    }
    if (p.t2)
        return mica__shuffle_cuda_transpose(mid, p.rank2, p.mid_dims, l->p2,
                                            outputs[0], p.esize, stream, err);
    return MICA_OK;
}

static const mica_layer_ops_t shuffle_ops_cuda = {
    sizeof(mica_layer_ops_t), 0,
    shuffle_nb_outputs,
    shuffle_output_dtypes,
    shuffle_output_dims,
    shuffle_supports_format,
    NULL,
    shuffle_workspace_size,
    shuffle_enqueue_cuda,
    mica__mod_layer_serialize,
    mica__mod_layer_clone,
    mica__mod_layer_destroy,
    NULL,
};
#endif

static mica_layer_t *shuffle_create(const mica_layer_creator_t *creator,
                                    const char *name,
                                    const mica_fields_t *fields,
                                    mica_error_t *err)
{
    shuffle_layer_t tmp, *l;
    const int64_t *rs = mica__mod_ints(fields, "reshape");
    int32_t i, nr = mica__mod_count(fields, "reshape"), wild = -1;
    char text[256];

    memset(&tmp, 0, sizeof tmp);
    if (get_perm(fields, "first_transpose", tmp.p1, &tmp.n1, err) != MICA_OK ||
        get_perm(fields, "second_transpose", tmp.p2, &tmp.n2, err) != MICA_OK)
        return NULL;
    tmp.nr = -1;
    if (rs && nr >= 0) {
        if (nr > MICA_MAX_DIMS) {
            mica__mod_host->set_error(err, "'reshape' has %d entries, more "
                                      "than %d", (int)nr, MICA_MAX_DIMS);
            return NULL;
        }
        for (i = 0; i < nr; i++) {
            if (rs[i] < -1) {
                mica__mod_host->set_error(
                    err, "'reshape' %s: %lld is not a dimension (>= 0), 0 or "
                    "-1", ints_text(rs, nr, text, sizeof text),
                    (long long)rs[i]);
                return NULL;
            }
            if (rs[i] == -1) {
                if (wild >= 0) {
                    mica__mod_host->set_error(
                        err, "'reshape' %s has more than one -1",
                        ints_text(rs, nr, text, sizeof text));
                    return NULL;
                }
                wild = i;
            }
            tmp.reshape[i] = rs[i];
        }
        tmp.nr = nr;
    }
    tmp.zero_is_placeholder =
        mica__mod_int(fields, "zero_is_placeholder", 1) != 0;
    l = mica__mod_layer_new(sizeof *l, (const mica_layer_ops_t *)
                            creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    tmp.base = l->base;
    *l = tmp;
    return &l->base.layer;
}

static const mica_layer_creator_t shuffle_reference = {
    sizeof(mica_layer_creator_t), 0,
    "Shuffle", 1, 0, "", "reference", MICA_DEVICE_CPU, MICA_ROLE_NONE,
    shuffle_fields, 4, 0,
    shuffle_create, mica__mod_layer_deserialize,
    (void *)&shuffle_ops_cpu,
};

#ifdef MICA_HAVE_CUDA
static const mica_layer_creator_t shuffle_cuda = {
    sizeof(mica_layer_creator_t), 0,
    "Shuffle", 1, 10, "", "cuda", MICA_DEVICE_CUDA, MICA_ROLE_NONE,
    shuffle_fields, 4, 0,
    shuffle_create, mica__mod_layer_deserialize,
    (void *)&shuffle_ops_cuda,
};
#endif

static const mica_layer_creator_t *const shuffle_creators[] = {
    &shuffle_reference,
#ifdef MICA_HAVE_CUDA
    &shuffle_cuda,
#endif
};

static const mica_module_desc_t shuffle_desc = {
    sizeof(mica_module_desc_t), MICA_ABI_VERSION,
    "shuffle", "1.0.0", "MIT", "Shuffle: transpose, reshape, transpose",
    shuffle_creators,
    (int32_t)(sizeof shuffle_creators / sizeof shuffle_creators[0]), 0,
    NULL, {NULL, NULL, NULL, NULL},
};

MICA_EXPORT mica_status_t mica_module_init(const mica_host_t *host,
                                           const mica_module_desc_t **desc,
                                           mica_error_t *err)
{
    mica_status_t st = mica__mod_init(host, err);
    if (st == MICA_OK)
        *desc = &shuffle_desc;
    return st;
}
