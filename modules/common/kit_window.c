/*
 * modules/common/kit_window.c - the sliding window of Convolution,
 * Deconvolution and Pooling (see kit_window.h).
 */
#include <config.h>

#include "kit_window.h"

#include <stdio.h>
#include <string.h>

/* Read list `name` (nd values, each >= lo and at most INT32_MAX, so that
 * the window's extent and sums stay far inside 64 bits) into
 * v[3 - nd ...]; absent: v keeps its defaults. */
static mica_status_t read_list(const mica_fields_t *f, const char *name,
                               int32_t nd, int64_t lo, int64_t *v,
                               mica_error_t *err)
{
    int32_t n = mica_kit_count(f, name), i;
    const int64_t *x = mica_kit_ints(f, name);
    char buf[128];

    if (n < 0 || !x)
        return MICA_OK;
    if (n != nd)
        return MICA_KIT_FAIL(err, "%s has %d values but the window has %d "
                             "spatial dimensions", name, (int)n, (int)nd);
    for (i = 0; i < nd; i++)
        if (x[i] < lo || x[i] > INT32_MAX)
            return MICA_KIT_FAIL(err, "%s %s: every value must be >= %lld "
                                 "and <= %ld",
                                 name, mica_kit_ints_text(x, n, buf,
                                                          sizeof buf),
                                 (long long)lo, (long)INT32_MAX);
    for (i = 0; i < nd; i++)
        v[3 - nd + i] = x[i];
    return MICA_OK;
}

mica_status_t mica__window_read(const mica_fields_t *f, const char *size_name,
                                int with_dilation, int transposed,
                                mica__window_t *w, mica_error_t *err)
{
    int32_t n = mica_kit_count(f, size_name), i;
    int have_pad = mica_kit_count(f, "padding") >= 0;
    mica_status_t st;

    memset(w, 0, sizeof *w);
    if (n != 2 && n != 3)
        return MICA_KIT_FAIL(err, "%s has %d value%s: give 2 (2D) or 3 "
                             "(3D)", size_name, (int)n, n == 1 ? "" : "s");
    w->nd = n;
    w->transposed = transposed;
    for (i = 0; i < 3; i++)
        w->k[i] = w->stride[i] = w->dil[i] = 1;
    if ((st = read_list(f, size_name, n, 1, w->k, err)) != MICA_OK ||
        (st = read_list(f, "stride", n, 1, w->stride, err)) != MICA_OK ||
        (with_dilation &&
         (st = read_list(f, "dilation", n, 1, w->dil, err)) != MICA_OK))
        return st;
    if (have_pad && (mica_kit_count(f, "pre_padding") >= 0 ||
                     mica_kit_count(f, "post_padding") >= 0))
        return MICA_KIT_FAIL(err, "give either padding or pre_padding and "
                             "post_padding, not both");
    if ((st = read_list(f, have_pad ? "padding" : "pre_padding", n, 0, w->pre,
                        err)) != MICA_OK ||
        (st = read_list(f, have_pad ? "padding" : "post_padding", n, 0,
                        w->post, err)) != MICA_OK)
        return st;
    return MICA_OK;
}

int64_t mica__window_extent(const mica__window_t *w, int i)
{
    return w->dil[i] * (w->k[i] - 1) + 1;
}

int64_t mica__window_out(const mica__window_t *w, int i, int64_t in)
{
    int64_t ext = mica__window_extent(w, i), out;

    if (w->transposed) {
        /* in is a dimension (below 2^48), the rest below 2^62: only the
         * product can leave 64 bits, and such an output is refused as
         * too large later */
        if (__builtin_mul_overflow(in - 1, w->stride[i], &out))
            return INT64_MAX;
        out += ext - w->pre[i] - w->post[i];
        return out < 0 ? -1 : out;
    }
    if (in + w->pre[i] + w->post[i] < ext)
        return -1;
    return (in + w->pre[i] + w->post[i] - ext) / w->stride[i] + 1;
}

int32_t mica__window_formats(const mica__window_t *w, int channels_last,
                             const mica_tensor_desc_t *io, int32_t pos,
                             int32_t nb_in, int32_t nb_out)
{
    const mica_tensor_desc_t *d = &io[pos];

    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        (io[0].dtype != MICA_FLOAT32 && io[0].dtype != MICA_FLOAT16))
        return 0;
    if (pos == 1 &&
        (io[1].dtype != io[0].dtype || io[1].format != io[0].format))
        return 0;
    if (d->format == MICA_FORMAT_LINEAR)
        return 1;
    return channels_last && d->dims.nb_dims == w->nd + 2 &&
           d->format == mica_kit_channels_last(d->dims.nb_dims);
}

int mica__window_channels(const mica_tensor_desc_t *d)
{
    return d->format != MICA_FORMAT_LINEAR;
}

const char *mica__window_text(const mica__window_t *w, const int64_t *v,
                              char *buf, size_t len)
{
    return mica_kit_ints_text(v + 3 - w->nd, w->nd, buf, len);
}

/* The one-line refusal of input size `in` along [i] (input dimension
 * `dim`); `what` says where the size comes from. */
static mica_status_t too_small(const mica__window_t *w, int i, int32_t dim,
                               int64_t in, const char *what,
                               mica_error_t *err)
{
    if (w->transposed)
        return MICA_KIT_FAIL(err, "input dimension %d is %lld%s: with "
                             "stride %lld, a window of %lld and padding "
                             "%lld+%lld the output would be smaller than 0",
                             (int)dim, (long long)in, what,
                             (long long)w->stride[i],
                             (long long)mica__window_extent(w, i),
                             (long long)w->pre[i], (long long)w->post[i]);
    return MICA_KIT_FAIL(err, "input dimension %d is %lld%s: with padding "
                         "%lld+%lld it is smaller than the window (%lld%s)",
                         (int)dim, (long long)in, what, (long long)w->pre[i],
                         (long long)w->post[i],
                         (long long)mica__window_extent(w, i),
                         w->dil[i] > 1 ? ", dilated" : "");
}

mica_status_t mica__window_dims(const mica__window_t *w,
                                const mica_shape_expr_t *in, int32_t first,
                                mica_expr_builder_t *eb,
                                mica_shape_expr_t *out, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int32_t j;

    for (j = 0; j < w->nd; j++) {
        int i = 3 - w->nd + j;
        const mica_expr_t *e = in->d[first + j], *r;
        int64_t ext = mica__window_extent(w, i);

        if (h->expr_is_constant(e)) {
            int64_t o = mica__window_out(w, i, h->expr_constant_value(e));
            if (o < 0)
                return too_small(w, i, first + j, h->expr_constant_value(e),
                                 "", err);
            r = h->expr_constant(eb, o);
        } else if (w->transposed) {
            /* in * stride + (extent - pre - post - stride) */
            r = h->expr_operation(eb, MICA_EXPR_PROD, e,
                                  h->expr_constant(eb, w->stride[i]));
            r = r ? h->expr_operation(
                        eb, MICA_EXPR_SUM, r,
                        h->expr_constant(eb, ext - w->pre[i] - w->post[i] -
                                                 w->stride[i]))
                  : NULL;
        } else {
            /* (in + pre + post - extent) floor_div stride + 1 */
            r = h->expr_operation(
                eb, MICA_EXPR_SUM, e,
                h->expr_constant(eb, w->pre[i] + w->post[i] - ext));
            r = r ? h->expr_operation(eb, MICA_EXPR_FLOOR_DIV, r,
                                      h->expr_constant(eb, w->stride[i]))
                  : NULL;
            r = r ? h->expr_operation(eb, MICA_EXPR_SUM, r,
                                      h->expr_constant(eb, 1))
                  : NULL;
        }
        if (!r)
            return MICA_KIT_FAIL(err, "out of host memory");
        out->d[first + j] = r;
    }
    return MICA_OK;
}

mica_status_t mica__window_check(const mica__window_t *w,
                                 const mica_dims_t *min, int32_t first,
                                 mica_error_t *err)
{
    int32_t j;

    for (j = 0; j < w->nd; j++) {
        int i = 3 - w->nd + j;
        if (mica__window_out(w, i, min->d[first + j]) < 0)
            return too_small(w, i, first + j, min->d[first + j],
                             " (the profile's smallest)", err);
    }
    return MICA_OK;
}
