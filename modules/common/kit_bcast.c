/*
 * modules/common/kit_bcast.c - the module kit's broadcasting
 * (<mica/kit.h>): the output dimensions of inputs broadcast together,
 * and the strides through which an output element reads each input.
 */
#include <config.h>

#include "mica/kit.h"

static int is_const(const mica_expr_t *e, int64_t *v)
{
    if (!mica_kit_host->expr_is_constant(e))
        return 0;
    *v = mica_kit_host->expr_constant_value(e);
    return 1;
}

/*
 * The broadcast of a (of input ia) and b (of input ib) along dimension k
 * into *out: the one that is not 1; a + (a == 1) * (b - a) when neither
 * is known.
 */
static mica_status_t broadcast2(mica_expr_builder_t *eb, int32_t k,
                                int32_t ia, const mica_expr_t *a, int32_t ib,
                                const mica_expr_t *b, const mica_expr_t **out,
                                mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int64_t va = 0, vb = 0;
    int ca = is_const(a, &va), cb = is_const(b, &vb);
    const mica_expr_t *one, *is_one, *diff;

    if (a == b || (ca && va == 1)) {
        *out = b;
    } else if (cb && vb == 1) {
        *out = a;
    } else if (ca && cb) {
        if (va != vb)
            return MICA_KIT_FAIL(err, "dimension %d of input %d is %lld and "
                                 "of input %d is %lld: they must be equal or "
                                 "one of them 1", (int)k, (int)ia,
                                 (long long)va, (int)ib, (long long)vb);
        *out = a;
    } else {
        one = h->expr_constant(eb, 1);
        is_one = one ? h->expr_operation(eb, MICA_EXPR_EQUAL, a, one) : NULL;
        diff = h->expr_operation(eb, MICA_EXPR_SUB, b, a);
        diff = is_one && diff
                   ? h->expr_operation(eb, MICA_EXPR_PROD, is_one, diff)
                   : NULL;
        *out = diff ? h->expr_operation(eb, MICA_EXPR_SUM, a, diff) : NULL;
    }
    if (!*out) {
        h->set_error(err, "out of memory building dimension %d", (int)k);
        return MICA_ERR_NOMEM;
    }
    return MICA_OK;
}

mica_status_t mica_kit_broadcast_dims(const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      mica_shape_expr_t *out,
                                      mica_error_t *err)
{
    int32_t i, k, from;
    mica_status_t st;

    if (nb_in < 1)
        return MICA_KIT_FAIL(err, "broadcast of no inputs");
    for (i = 1; i < nb_in; i++)
        if (in[i].nb_dims != in[0].nb_dims)
            return MICA_KIT_FAIL(err, "input %d has rank %d but input 0 has "
                                 "rank %d", (int)i, (int)in[i].nb_dims,
                                 (int)in[0].nb_dims);
    out->nb_dims = in[0].nb_dims;
    for (k = 0; k < in[0].nb_dims; k++) {
        /* `from`: the input the running result came from, for messages
         * (the last one that was not a constant 1) */
        int64_t v;
        out->d[k] = in[0].d[k];
        from = 0;
        for (i = 1; i < nb_in; i++) {
            const mica_expr_t *prev = out->d[k];
            st = broadcast2(eb, k, from, prev, i, in[i].d[k], &out->d[k], err);
            if (st != MICA_OK)
                return st;
            if (!is_const(in[i].d[k], &v) || v != 1)
                from = is_const(prev, &v) && v == 1 ? i : from;
        }
    }
    return MICA_OK;
}

mica_status_t mica_kit_broadcast_view(const mica_tensor_desc_t *in,
                                      int32_t nb_in, const mica_dims_t *out,
                                      int fold, mica_kit_bcast_t *v,
                                      mica_error_t *err)
{
    int64_t s[MICA_KIT_BCAST_MAX_IN][MICA_MAX_DIMS];
    int32_t i, k, r = 0, merge;

    if (nb_in < 1 || nb_in > MICA_KIT_BCAST_MAX_IN)
        return MICA_KIT_FAIL(err, "a broadcast view takes 1 to %d inputs, "
                             "got %d", MICA_KIT_BCAST_MAX_IN, (int)nb_in);
    for (i = 0; i < nb_in; i++) {
        const mica_dims_t *d = &in[i].dims;
        int64_t acc = 1;
        if (d->nb_dims != out->nb_dims)
            return MICA_KIT_FAIL(err, "input %d has rank %d but the output "
                                 "has rank %d", (int)i, (int)d->nb_dims,
                                 (int)out->nb_dims);
        for (k = d->nb_dims - 1; k >= 0; k--) {
            if (d->d[k] != out->d[k] && d->d[k] != 1)
                return MICA_KIT_FAIL(err, "dimension %d of input %d is %lld, "
                                     "which does not broadcast to %lld",
                                     (int)k, (int)i, (long long)d->d[k],
                                     (long long)out->d[k]);
            s[i][k] = d->d[k] == 1 && out->d[k] != 1 ? 0 : acc;
            acc *= d->d[k];
        }
    }
    v->nb_in = nb_in;
    for (k = 0; k < out->nb_dims; k++) {
        int64_t n = out->d[k];
        if (fold && n == 1)
            continue;
        merge = fold && r > 0;
        for (i = 0; i < nb_in && merge; i++)
            merge = v->s[i][r - 1] == s[i][k] * n;
        if (merge) {
            v->d[r - 1] *= n;
            for (i = 0; i < nb_in; i++)
                v->s[i][r - 1] = s[i][k];
            continue;
        }
        v->d[r] = n;
        for (i = 0; i < nb_in; i++)
            v->s[i][r] = s[i][k];
        r++;
    }
    v->rank = r;
    return MICA_OK;
}
