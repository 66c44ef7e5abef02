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
 * Input 1, optional, gives the reshape dimensions at run time instead of
 * the param (TensorRT's second input): a 1-D int32 shape tensor, read on
 * the host before execution; giving both is an error.  Its values are
 * expressions: a constant value follows the rules above and is checked
 * at build time; a value known only at run time follows them too (the
 * dims are written for a 0 placeholder and a -1, see reshape_dims), so
 * with zero_is_placeholder a 0 computed at run time still copies the
 * input dimension: set it false to reshape to a zero-length axis, as
 * TensorRT's empty-tensor rules advise.  Run-time values are checked in
 * enqueue (volumes must match); a -1 whose other dims have volume 0 at
 * run time stays -1, a negative dimension that the core refuses.
 *
 * Any element type (it only moves bytes); the output has the input's type.
 * Output dims are expressions, so symbolic input dims work: a -1 becomes
 * floor_div(input volume, volume of the other dims).  Shuffling a 0-D or
 * 1-D integer shape tensor keeps its values in order (output_values).
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "kit_vec.h"
#include "shuffle.h"

typedef struct shuffle_layer {
    mica_kit_layer_t base;
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
    const int64_t *v = mica_kit_ints(f, name);
    int32_t i, j, cnt = mica_kit_count(f, name);
    char text[256];

    *n = 0;
    if (!v || cnt <= 0)
        return MICA_OK;
    if (cnt > MICA_MAX_DIMS)
        return MICA_KIT_FAIL(err, "'%s' has %d entries, more than %d", name,
                             (int)cnt, MICA_MAX_DIMS);
    for (i = 0; i < cnt; i++) {
        if (v[i] < 0 || v[i] >= cnt)
            return MICA_KIT_FAIL(err, "'%s' %s is not a permutation: %lld is "
                                 "outside [0, %d)", name,
                                 mica_kit_ints_text(v, cnt, text, sizeof text),
                                 (long long)v[i], (int)cnt);
        for (j = 0; j < i; j++)
            if (v[j] == v[i])
                return MICA_KIT_FAIL(err,
                                     "'%s' %s is not a permutation: %lld "
                                     "appears twice",
                                     name,
                                     mica_kit_ints_text(v, cnt, text,
                                                        sizeof text),
                                     (long long)v[i]);
        p[i] = v[i];
    }
    *n = cnt;
    return MICA_OK;
}

/* ---- shapes ------------------------------------------------------------- */

static mica_status_t check_inputs(int32_t nb_in, mica_error_t *err)
{
    if (nb_in < 1 || nb_in > 2)
        return MICA_KIT_FAIL(err,
                             "takes 1 input (and an optional second), got %d",
                             (int)nb_in);
    return MICA_OK;
}

/* Whether output_dims' view has input 1 (an omitted input has nb_dims
 * -1). */
static int dims_input(const mica_shape_expr_t *in, int32_t nb_in)
{
    return nb_in == 2 && in[1].nb_dims >= 0;
}

static mica_status_t shuffle_output_dtypes(const mica_layer_t *layer,
                                           const mica_dtype_t *in,
                                           int32_t nb_in, mica_dtype_t *out,
                                           int32_t nb_out, mica_error_t *err)
{
    mica_status_t st;
    (void)layer;
    if ((st = check_inputs(nb_in, err)) != MICA_OK)
        return st;
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = in[0];
    return MICA_OK;
}

#define EXPR_C(v) mica_kit_host->expr_constant(eb, (v))
#define EXPR_OP(op, a, b) mica_kit_host->expr_operation(eb, (op), (a), (b))
#define IS_C(e) mica_kit_host->expr_is_constant(e)
#define C_VAL(e) mica_kit_host->expr_constant_value(e)

/*
 * The reshaped dims t2[0..nr-1] from the reshape values rv (the param's,
 * as constants, or input 1's) applied to t1[0..r-1], the dims after the
 * first transpose.  `what` names the values' origin in messages.
 *
 * A constant value follows the rules of the file's comment, checked
 * here.  A value v known only at run time may still turn out to be a
 * placeholder 0 or the -1, so its dim is written for every case:
 *   base = v + (v == 0) * t1[i]          (placeholder; without: v)
 *   dim  = base + (v == -1) * (q + 1)    (q: the inferred -1)
 * where q = floor_div(volume, product of the other dims), the product
 * taking base + 2 * (v == -1), i.e. 1, for the -1 itself (a product of
 * 0 leaves the -1 as it is).  When a
 * constant -1 is present, a run-time value is only a dimension (a -1
 * there is a second -1, which gives a volume enqueue refuses).
 */
static mica_status_t reshape_dims(const shuffle_layer_t *l,
                                  const mica_expr_t *const *t1, int32_t r,
                                  const mica_expr_t *const *rv, int32_t nr,
                                  const char *what, mica_expr_builder_t *eb,
                                  const mica_expr_t **t2, mica_error_t *err)
{
    const mica_expr_t *vol, *known, *wflag[MICA_MAX_DIMS], *q;
    int32_t i, wild = -1, nsym = 0;
    char text[256];

    for (i = 0; i < nr; i++) {
        int64_t v = IS_C(rv[i]) ? C_VAL(rv[i]) : 0;
        if (!IS_C(rv[i])) {
            nsym++;
        } else if (v < -1) {
            return MICA_KIT_FAIL(err,
                                 "%s %s: %lld is not a dimension (>= 0), 0 "
                                 "or -1",
                                 what,
                                 mica_kit_exprs_text(rv, nr, text, sizeof text),
                                 (long long)v);
        } else if (v == -1) {
            if (wild >= 0)
                return MICA_KIT_FAIL(err, "%s %s has more than one -1", what,
                                     mica_kit_exprs_text(rv, nr, text,
                                                         sizeof text));
            wild = i;
        } else if (v == 0 && l->zero_is_placeholder && i >= r) {
            return MICA_KIT_FAIL(err,
                                 "%s %s: entry %d is 0 (copy the input "
                                 "dimension) but input 0 has rank %d",
                                 what,
                                 mica_kit_exprs_text(rv, nr, text, sizeof text),
                                 (int)i, (int)r);
        }
    }
    vol = EXPR_C(1);
    for (i = 0; i < r && vol; i++)
        vol = EXPR_OP(MICA_EXPR_PROD, vol, t1[i]);
    known = EXPR_C(1);
    for (i = 0; i < nr && known; i++) {
        const mica_expr_t *e = rv[i], *f;
        wflag[i] = NULL;
        if (i == wild) {
            t2[i] = NULL;
            continue;
        }
        t2[i] = e;
        if (l->zero_is_placeholder && i < r && e != t1[i] &&
            (!IS_C(e) || C_VAL(e) == 0)) {
            f = EXPR_OP(MICA_EXPR_EQUAL, e, EXPR_C(0));
            f = f ? EXPR_OP(MICA_EXPR_PROD, f, t1[i]) : NULL;
            t2[i] = f ? EXPR_OP(MICA_EXPR_SUM, e, f) : NULL;
        }
        f = t2[i];
        if (!IS_C(e) && wild < 0 && f) {
            wflag[i] = EXPR_OP(MICA_EXPR_EQUAL, e, EXPR_C(-1));
            f = wflag[i] ? EXPR_OP(MICA_EXPR_PROD, wflag[i], EXPR_C(2))
                         : NULL;
            f = f ? EXPR_OP(MICA_EXPR_SUM, t2[i], f) : NULL;
            if (!f)
                t2[i] = NULL;
        }
        known = f ? EXPR_OP(MICA_EXPR_PROD, known, f) : NULL;
    }
    if (!vol || !known)
        return MICA_KIT_FAIL(err, "out of host memory");
    if (wild >= 0) {
        if (IS_C(known) && C_VAL(known) == 0)
            return MICA_KIT_FAIL(err,
                                 "%s %s: the other dimensions of the -1 have "
                                 "volume 0, so the -1 cannot be inferred",
                                 what,
                                 mica_kit_exprs_text(rv, nr, text,
                                                     sizeof text));
        if (IS_C(known) && IS_C(vol) && C_VAL(vol) % C_VAL(known) != 0)
            return MICA_KIT_FAIL(err,
                                 "%s %s: input volume %lld is not a multiple "
                                 "of %lld, the volume of the dimensions other "
                                 "than "
                                 "the -1",
                                 what,
                                 mica_kit_exprs_text(rv, nr, text, sizeof text),
                                 (long long)C_VAL(vol),
                                 (long long)C_VAL(known));
        t2[wild] = EXPR_OP(MICA_EXPR_FLOOR_DIV, vol, known);
        if (!t2[wild])
            return MICA_KIT_FAIL(err, "out of host memory");
    } else if (nsym > 0) {
        /* known is 0 when another dim is 0: divide by 1 then, so that
         * a reshape without a -1 still evaluates, and leave a -1 as -1
         * (indeterminate, as TensorRT says: a negative dim, refused) */
        const mica_expr_t *z = EXPR_OP(MICA_EXPR_EQUAL, known, EXPR_C(0));
        q = z ? EXPR_OP(MICA_EXPR_SUM, known, z) : NULL;
        q = q ? EXPR_OP(MICA_EXPR_FLOOR_DIV, vol, q) : NULL;
        q = q ? EXPR_OP(MICA_EXPR_SUM, q, EXPR_C(1)) : NULL;
        q = q ? EXPR_OP(MICA_EXPR_PROD, q,
                        EXPR_OP(MICA_EXPR_SUB, EXPR_C(1), z)) : NULL;
        for (i = 0; i < nr; i++) {
            if (!wflag[i])
                continue;
            t2[i] = q ? EXPR_OP(MICA_EXPR_SUM, t2[i],
                                EXPR_OP(MICA_EXPR_PROD, wflag[i], q))
                      : NULL;
            if (!t2[i])
                return MICA_KIT_FAIL(err, "out of host memory");
        }
    } else if (IS_C(known) && IS_C(vol) && C_VAL(known) != C_VAL(vol)) {
        return MICA_KIT_FAIL(err,
                             "%s %s has volume %lld but input 0 has volume "
                             "%lld",
                             what,
                             mica_kit_exprs_text(rv, nr, text, sizeof text),
                             (long long)C_VAL(known), (long long)C_VAL(vol));
    }
    return MICA_OK;
}

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
    const mica_expr_t *rv[MICA_MAX_DIMS];
    int32_t i, r, rank2;
    mica_status_t st;
    char text[256];

    if ((st = check_inputs(nb_in, err)) != MICA_OK)
        return st;
    if (index != 0)
        return MICA_KIT_FAIL(err, "has no output %d", (int)index);
    r = in[0].nb_dims;
    if (l->n1 > 0 && l->n1 != r)
        return MICA_KIT_FAIL(err,
                             "'first_transpose' %s has %d entries but input "
                             "0 has rank %d",
                             mica_kit_ints_text(l->p1, l->n1, text,
                                                sizeof text),
                             (int)l->n1, (int)r);
    for (i = 0; i < r; i++)
        t1[i] = in[0].d[l->n1 > 0 ? l->p1[i] : i];
    rank2 = r;
    if (dims_input(in, nb_in)) {
        if (l->nr >= 0)
            return MICA_KIT_FAIL(err,
                                 "the reshape dimensions are given twice: by "
                                 "the 'reshape' param and by input 1");
        if (in[1].nb_dims != 1)
            return MICA_KIT_FAIL(err,
                                 "input 1 (reshape dimensions) must be 1-D, "
                                 "got rank %d",
                                 (int)in[1].nb_dims);
        if (!in[1].values)
            return MICA_KIT_FAIL(err, "input 1 (reshape dimensions) has no "
                                 "values: it must be a shape tensor");
        if (in[1].nb_values > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err, "input 1 (reshape dimensions) has %d "
                                 "values, more than %d", (int)in[1].nb_values,
                                 MICA_MAX_DIMS);
        rank2 = in[1].nb_values;
        st = reshape_dims(l, t1, r, in[1].values, rank2,
                          "input 1 (reshape dimensions)", eb, t2, err);
        if (st != MICA_OK)
            return st;
    } else if (l->nr >= 0) {
        for (i = 0; i < l->nr; i++)
            if (!(rv[i] = EXPR_C(l->reshape[i])))
                return MICA_KIT_FAIL(err, "out of host memory");
        rank2 = l->nr;
        st = reshape_dims(l, t1, r, rv, rank2, "'reshape'", eb, t2, err);
        if (st != MICA_OK)
            return st;
    } else {
        for (i = 0; i < r; i++)
            t2[i] = t1[i];
    }
    if (l->n2 > 0 && l->n2 != rank2)
        return MICA_KIT_FAIL(err,
                             "'second_transpose' %s has %d entries but the "
                             "reshaped tensor has rank %d",
                             mica_kit_ints_text(l->p2, l->n2, text,
                                                sizeof text),
                             (int)l->n2, (int)rank2);
    out->nb_dims = rank2;
    for (i = 0; i < rank2; i++)
        out->d[i] = t2[l->n2 > 0 ? l->p2[i] : i];
    return MICA_OK;
}

/*
 * The values of a shuffled integer shape tensor: the input's, in order,
 * when no transpose moves data (always so for the 0-D and 1-D tensors
 * that shape tensors are).
 */
static mica_status_t shuffle_output_values(const mica_layer_t *layer,
                                           int32_t index,
                                           const mica_shape_expr_t *in,
                                           int32_t nb_in,
                                           mica_expr_builder_t *eb,
                                           const mica_expr_t **values,
                                           int32_t nb_values,
                                           mica_error_t *err)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    int32_t i;
    (void)eb; (void)err;
    if (index != 0 || nb_in < 1 || !in[0].values ||
        in[0].nb_values != nb_values ||
        (l->n1 > 0 && !is_identity(l->p1, l->n1)) ||
        (l->n2 > 0 && !is_identity(l->p2, l->n2)))
        return MICA_ERR_UNSUPPORTED;
    for (i = 0; i < nb_values; i++)
        values[i] = in[0].values[i];
    return MICA_OK;
}

static int32_t shuffle_input_kind(const mica_layer_t *layer, int32_t index,
                                  int32_t nb_inputs)
{
    (void)layer;
    (void)nb_inputs;
    return index == 1 ? MICA_INPUT_SHAPE : MICA_INPUT_DATA;
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
    if (!mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return type_ok(io[0].dtype);
    if (pos == nb_in)
        return io[pos].dtype == io[0].dtype;
    return pos == 1 && (io[1].dtype == MICA_INT32 ||
                        io[1].dtype == MICA_INT64);
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
    int64_t bytes;
    (void)nb_in; (void)out; (void)nb_out;
    if (!both_transposes(l))
        return 0;
    /* checked: a size past the largest tensor is refused by the core */
    if (mica_dims_bytes_checked(&in[0].max, in[0].desc.dtype, &bytes) != 0)
        return SIZE_MAX;
    return (size_t)bytes;
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

static mica_status_t make_plan(const shuffle_layer_t *l,
                               const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out,
                               shuffle_plan_t *p, mica_error_t *err)
{
    int64_t vin = mica_dims_volume(&in[0].dims);
    char text[256];
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
    /* run-time reshape values (input 1) are only checked here */
    if (p->n != vin)
        return MICA_KIT_FAIL(err,
                             "the reshape dimensions %s have volume %lld but "
                             "input 0 has volume %lld",
                             mica_kit_ints_text(p->mid_dims, p->rank2, text,
                                                sizeof text),
                             (long long)p->n, (long long)vin);
    return MICA_OK;
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

typedef void transpose_fn(const void *src, int32_t rank, const int64_t *dims,
                          const int64_t *perm, void *dst, size_t esize);

/* A run on the host with `transpose` (the reference's, or vec's). */
static mica_status_t run_host(const shuffle_layer_t *l,
                              const mica_tensor_desc_t *in,
                              const mica_tensor_desc_t *out,
                              const void *const *inputs,
                              void *const *outputs, void *workspace,
                              transpose_fn *transpose_cpu, mica_error_t *err)
{
    shuffle_plan_t p;
    const void *mid;
    mica_status_t st;

    if ((st = make_plan(l, in, out, &p, err)) != MICA_OK)
        return st;
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
    (void)nb_in; (void)nb_out; (void)stream;
    return run_host((const shuffle_layer_t *)layer, in, out, inputs, outputs,
                    workspace, transpose_cpu, err);
}

/*
 * The whole of layer l from in to out as one gather (shuffle_vec.c), each
 * in its own format: 1 with g_dims and g_str filled, 0 where the
 * reshape is no view of the transposed input, a dimension is unknown or
 * a format does not apply.
 */
static int as_gather(const shuffle_layer_t *l, const mica_tensor_desc_t *in,
                     const mica_tensor_desc_t *out, int64_t *g_dims,
                     int64_t *g_str)
{
    int64_t si[MICA_MAX_DIMS], so[MICA_MAX_DIMS], mid[MICA_MAX_DIMS];
    int32_t r = in->dims.nb_dims, m = out->dims.nb_dims, i;

    if (r < 1 || m < 1 || (l->n1 > 0 && l->n1 != r) ||
        (l->n2 > 0 && l->n2 != m) || !mica_kit_strides(in, si) ||
        !mica_kit_strides(out, so))
        return 0;
    for (i = 0; i < r; i++)
        if (in->dims.d[i] < 0)
            return 0;
    for (i = 0; i < m; i++) {
        if (out->dims.d[i] < 0)
            return 0;
        mid[l->n2 > 0 ? l->p2[i] : i] = out->dims.d[i];
    }
    if (mica_dims_volume(&in->dims) != mica_dims_volume(&out->dims))
        return 0;
    return mica__shuffle_as_gather(r, in->dims.d, si,
                                   l->n1 > 0 ? l->p1 : NULL, m, mid,
                                   l->n2 > 0 ? l->p2 : NULL, so, g_dims,
                                   g_str);
}

/*
 * vec's formats: as the reference's, and channels last for input 0 and
 * the output wherever the layer is one gather with them (static
 * dimensions), so that a channel shuffle between channels-last
 * convolutions needs no reorder.
 */
static int32_t shuffle_supports_format_vec(const mica_layer_t *layer,
                                           int32_t pos,
                                           const mica_tensor_desc_t *io,
                                           int32_t nb_in, int32_t nb_out)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    int64_t gd[MICA_MAX_DIMS], gs[MICA_MAX_DIMS];
    mica_tensor_desc_t o;

    if (mica_kit_linear(io, pos) || (pos != 0 && pos != nb_in))
        return shuffle_supports_format(layer, pos, io, nb_in, nb_out);
    if (pos == 0) { /* the output's format is not chosen yet */
        o = io[nb_in];
        o.format = MICA_FORMAT_LINEAR;
        return type_ok(io[0].dtype) && as_gather(l, &io[0], &o, gd, gs);
    }
    return io[pos].dtype == io[0].dtype &&
           as_gather(l, &io[0], &io[pos], gd, gs);
}

/* vec: one gather where the reshape allows (any formats), else the
 * transposes with merged dimensions, rows copied whole, parallel
 * (shuffle_vec.c). */
static MICA_KIT_ENQUEUE(shuffle_enqueue_vec)
{
    const shuffle_layer_t *l = (const shuffle_layer_t *)layer;
    int64_t gd[MICA_MAX_DIMS], gs[MICA_MAX_DIMS];
    shuffle_plan_t p;
    mica_status_t st;
    (void)nb_in; (void)nb_out; (void)stream;

    if ((st = make_plan(l, in, out, &p, err)) != MICA_OK)
        return st;
    if (p.n <= 0)
        return MICA_OK;
    if (as_gather(l, &in[0], &out[0], gd, gs)) {
        mica__vec_gather(inputs[0], out[0].dims.nb_dims, gd, gs,
                                 outputs[0], p.esize);
        return MICA_OK;
    }
    if (!mica_kit_linear(in, 0) || !mica_kit_linear(out, 0))
        return MICA_KIT_FAIL(err, "input and output formats %d and %d "
                             "that its reshape cannot follow",
                             (int)in[0].format, (int)out[0].format);
    return run_host(l, in, out, inputs, outputs, workspace,
                    mica__shuffle_transpose_vec, err);
}

#if MICA_KIT_CUDA
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

    if ((st = make_plan(l, in, out, &p, err)) != MICA_OK)
        return st;
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
#endif

static mica_layer_t *shuffle_create(const mica_layer_creator_t *creator,
                                    const char *name,
                                    const mica_fields_t *fields,
                                    mica_error_t *err)
{
    shuffle_layer_t tmp, *l;
    const int64_t *rs = mica_kit_ints(fields, "reshape");
    int32_t i, nr = mica_kit_count(fields, "reshape"), wild = -1;
    char text[256];

    memset(&tmp, 0, sizeof tmp);
    if (get_perm(fields, "first_transpose", tmp.p1, &tmp.n1, err) != MICA_OK ||
        get_perm(fields, "second_transpose", tmp.p2, &tmp.n2, err) != MICA_OK)
        return NULL;
    tmp.nr = -1;
    if (rs && nr >= 0) {
        if (nr > MICA_MAX_DIMS) {
            mica_kit_host->set_error(err, "'reshape' has %d entries, more "
                                     "than %d", (int)nr, MICA_MAX_DIMS);
            return NULL;
        }
        for (i = 0; i < nr; i++) {
            if (rs[i] < -1) {
                mica_kit_host->set_error(err,
                                         "'reshape' %s: %lld is not a "
                                         "dimension (>= 0), 0 or "
                                         "-1",
                                         mica_kit_ints_text(rs, nr, text,
                                                            sizeof text),
                                         (long long)rs[i]);
                return NULL;
            }
            if (rs[i] == -1) {
                if (wild >= 0) {
                    mica_kit_host->set_error(err,
                                             "'reshape' %s has more than one "
                                             "-1",
                                             mica_kit_ints_text(rs, nr, text,
                                                                sizeof text));
                    return NULL;
                }
                wild = i;
            }
            tmp.reshape[i] = rs[i];
        }
        tmp.nr = nr;
    }
    tmp.zero_is_placeholder =
        mica_kit_int(fields, "zero_is_placeholder", 1) != 0;
    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    tmp.base = l->base;
    *l = tmp;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(shuffle, "Shuffle", shuffle_fields, 4,
                    shuffle_create, shuffle_enqueue_cpu, shuffle_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = shuffle_output_dtypes,
                    .output_dims = shuffle_output_dims,
                    .supports_format = shuffle_supports_format,
                    .workspace_size = shuffle_workspace_size,
                    .output_values = shuffle_output_values,
                    .input_kind = shuffle_input_kind)

static const mica_layer_ops_t shuffle_ops_vec = MICA_KIT_OPS(
    shuffle_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = shuffle_output_dtypes,
    .output_dims = shuffle_output_dims,
    .supports_format = shuffle_supports_format_vec,
    .workspace_size = shuffle_workspace_size,
    .output_values = shuffle_output_values,
    .input_kind = shuffle_input_kind);
static const mica_layer_creator_t shuffle_creator_vec = MICA_KIT_CREATOR(
    "Shuffle", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, shuffle_fields, 4,
    shuffle_create, &shuffle_ops_vec);

static const mica_layer_creator_t *const shuffle_creators[] = {
    MICA_KIT_PAIR(shuffle), &shuffle_creator_vec};

MICA_KIT_ENTRY("shuffle", PACKAGE_VERSION, "MIT",
               "Shuffle: transpose, reshape, transpose",
               shuffle_creators)
