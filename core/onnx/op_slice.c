/*
 * core/onnx/op_slice.c - Split, Slice, Pad, Expand and Tile onto Slice
 * layers, as TensorRT's parser maps them: Slice's starts and ends may be
 * known only at run time (the ONNX rules of negative values and clamping
 * become shape arithmetic, done here where values are known), its axes
 * and steps must be constants; Pad is a Slice from -pre in mode fill,
 * reflect or clamp; Expand has stride 0 along axes of length 1; Tile is
 * mode wrap.
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* Slice [start, start + len) of axis a of v, the rest whole. */
static mica__ox_value_t *slice_axis(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *v, int32_t a,
                                    int64_t start, int64_t len,
                                    const char *name)
{
    int64_t st[MICA_MAX_DIMS] = {0}, sz[MICA_MAX_DIMS];
    mica__ox_value_t *dyn[MICA_MAX_DIMS] = {0}, *size;
    int32_t i;
    for (i = 0; i < v->rank; i++) {
        sz[i] = i == a ? len : v->d[i];
        if (sz[i] < 0)
            dyn[i] = mica__ox_dim(x, n, v, i);
    }
    st[a] = start;
    size = mica__ox_vec(x, n, sz, dyn, v->rank);
    if (!size)
        return NULL;
    {
        int64_t r = v->rank;
        mica__ox_value_t *o = mica__ox_slice(x, n, v,
            mica__ox_const_i(x, OX_INT64, st, 1, &r), size, NULL, NULL,
            NULL, name);
        for (i = 0; o && i < v->rank; i++)
            o->d[i] = sz[i];
        return o;
    }
}

static mica_status_t op_split(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v;
    int64_t axis, len, *split = NULL, start = 0;
    int32_t k = -1, i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    len = v->d[axis];
    if (n->opset < 13) {
        const int64_t *s;
        k = mica__ox_attr_ints(n, "split", &s);
        if (k >= 0) {
            split = mica__ox_alloc(x, 8 * (size_t)(k + 1));
            if (split && k)
                memcpy(split, s, 8 * (size_t)k);
        }
    } else if (IN(1)) {
        split = mica__ox_const_ints(x, n, 1, "split", &k);
    }
    if (x->st != MICA_OK)
        return x->st;
    if (k >= 0 && k != n->nb_out)
        return OX_BAD(x, n, "split has %d entries for %d outputs", (int)k,
                      (int)n->nb_out);
    if (len < 0 && !split)
        return OX_UNSUP(x, n, "splitting axis %lld, whose length is known "
                        "only at run time, into equal parts (give the "
                        "sizes)", (long long)axis);
    if (len < 0) {
        /* Sizes given: the parts are known, the axis is their sum (the
         * Slice layers check it as they run). */
        for (i = 0, len = 0; i < k; i++) {
            if (split[i] < 0)
                return OX_BAD(x, n, "a split size of %lld",
                              (long long)split[i]);
            len += split[i];
        }
    }
    for (i = 0; i < n->nb_out && x->st == MICA_OK; i++) {
        int64_t part = split ? split[i]
                       : (len + n->nb_out - 1) / n->nb_out;
        if (!split && start + part > len)
            part = len - start;
        if (part < 0 || start + part > len)
            return OX_BAD(x, n, "the split sizes exceed the axis length "
                          "%lld", (long long)len);
        mica__ox_set_out(x, n, i, slice_axis(x, n, v, (int32_t)axis, start,
                                             part, OUT(i)));
        start += part;
    }
    if (split && start != len && x->st == MICA_OK)
        return OX_BAD(x, n, "the split sizes add up to %lld, the axis has "
                      "%lld", (long long)start, (long long)len);
    return x->st;
}

/* Clamp v (a 1-D value) to [lo, hi] elementwise (values or constants). */
static mica__ox_value_t *clamp(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *v, mica__ox_value_t *lo,
                               mica__ox_value_t *hi)
{
    v = mica__ox_ew(x, n, "max", v, lo, NULL);
    return v ? mica__ox_ew(x, n, "min", v, hi, NULL) : NULL;
}

/*
 * Slice: starts and ends may be known only at run time (the ONNX rules
 * of negative values and clamping become shape arithmetic); axes and
 * steps must be constants.
 */
static mica_status_t op_slice(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *starts, *ends, *dims, *s, *e, *size, *start,
                     *stride;
    mica__ox_value_t *pa[MICA_MAX_DIMS] = {0}, *pb[MICA_MAX_DIMS] = {0};
    int64_t axes[MICA_MAX_DIMS], steps[MICA_MAX_DIMS], k, i, r;
    int64_t neg[MICA_MAX_DIMS], hi_s[MICA_MAX_DIMS], lo_e[MICA_MAX_DIMS],
            sgn[MICA_MAX_DIMS], mag[MICA_MAX_DIMS], zeros[MICA_MAX_DIMS] = {0};
    int64_t full_st[MICA_MAX_DIMS], full_sz[MICA_MAX_DIMS],
            full_sd[MICA_MAX_DIMS];
    int seen[MICA_MAX_DIMS] = {0};

    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    r = v->rank;
    if (n->opset < 10) {
        const int64_t *a;
        int32_t ka = mica__ox_attr_ints(n, "starts", &a);
        int64_t len = ka;
        if (ka < 0)
            return OX_BAD(x, n, "no 'starts' attribute");
        starts = mica__ox_const_i(x, OX_INT64, a, 1, &len);
        ka = mica__ox_attr_ints(n, "ends", &a);
        if (ka != len)
            return OX_BAD(x, n, "'ends' and 'starts' differ in length");
        ends = mica__ox_const_i(x, OX_INT64, a, 1, &len);
        ka = mica__ox_attr_ints(n, "axes", &a);
        k = len;
        for (i = 0; i < k; i++) {
            axes[i] = ka >= 0 ? (i < ka ? a[i] : 0) : i;
            steps[i] = 1;
        }
        if (ka >= 0 && ka != k)
            return OX_BAD(x, n, "'axes' and 'starts' differ in length");
    } else {
        int32_t ka;
        if (mica__ox_need(x, n, 3) != MICA_OK)
            return x->st;
        starts = IN(1);
        ends = IN(2);
        if (!mica__ox_vec_ok(x, n, starts, "starts") || !mica__ox_vec_ok(x, n, ends, "ends"))
            return x->st;
        k = starts->d[0];
        if (ends->d[0] != k)
            return OX_BAD(x, n, "ends and starts differ in length");
        if (IN(3)) {
            int64_t *a = mica__ox_const_ints(x, n, 3, "axes", &ka);
            if (!a)
                return x->st;
            if (ka != k)
                return OX_BAD(x, n, "axes and starts differ in length");
            memcpy(axes, a, 8 * (size_t)k);
        } else {
            for (i = 0; i < k; i++)
                axes[i] = i;
        }
        if (IN(4)) {
            int64_t *a = mica__ox_const_ints(x, n, 4, "steps", &ka);
            if (!a)
                return x->st;
            if (ka != k)
                return OX_BAD(x, n, "steps and starts differ in length");
            memcpy(steps, a, 8 * (size_t)k);
        } else {
            for (i = 0; i < k; i++)
                steps[i] = 1;
        }
    }
    if (!starts || !ends)
        return x->st;
    if (k > r)
        return OX_BAD(x, n, "%lld axes for rank %lld", (long long)k,
                      (long long)r);
    for (i = 0; i < k; i++) {
        int64_t a = mica__ox_axis(axes[i], (int32_t)r);
        if (a < 0 || seen[a]++)
            return OX_BAD(x, n, "axis %lld is out of range or repeated",
                          (long long)axes[i]);
        if (!steps[i])
            return OX_BAD(x, n, "a step of 0");
        axes[i] = a;
        neg[i] = steps[i] < 0;
        hi_s[i] = neg[i] ? -1 : 0;
        lo_e[i] = neg[i] ? -1 : 0;
        sgn[i] = neg[i] ? -1 : 1;
        mag[i] = neg[i] ? -steps[i] : steps[i];
    }
    /* dims of the sliced axes; the ONNX rules as arithmetic. */
    for (i = 0; i < k; i++)
        pa[i] = mica__ox_dim(x, n, v, (int32_t)axes[i]);
    if (x->st != MICA_OK)
        return x->st;
    dims = k ? mica__ox_concat(x, n, pa, (int32_t)k, 0, NULL) : NULL;
    if (k && dims) {
        mica__ox_value_t *zero = mica__ox_const_i(x, OX_INT64, zeros, 1, &k),
                         *hs, *le, *sg, *mg, *one;
        int64_t ones[MICA_MAX_DIMS];
        for (i = 0; i < k; i++)
            ones[i] = 1;
        hs = mica__ox_ew(x, n, "sum", dims,
                         mica__ox_const_i(x, OX_INT64, hi_s, 1, &k), NULL);
        le = mica__ox_const_i(x, OX_INT64, lo_e, 1, &k);
        sg = mica__ox_const_i(x, OX_INT64, sgn, 1, &k);
        mg = mica__ox_const_i(x, OX_INT64, mag, 1, &k);
        one = mica__ox_const_i(x, OX_INT64, ones, 1, &k);
        if (x->st != MICA_OK)
            return x->st;
        /* Values beyond int32 are clamped first (INT64_MAX means "to the
         * end"); dims are int32 in mica. */
        if (starts->cst || ends->cst) {
            int64_t lim = (int64_t)1 << 31, j;
            int64_t cs[MICA_MAX_DIMS], ce[MICA_MAX_DIMS];
            for (j = 0; j < k; j++) {
                if (starts->cst) {
                    cs[j] = mica__ox_data_int(starts->cst, j);
                    cs[j] = cs[j] > lim - 1 ? lim - 1 : cs[j] < -lim ? -lim
                                                                     : cs[j];
                }
                if (ends->cst) {
                    ce[j] = mica__ox_data_int(ends->cst, j);
                    ce[j] = ce[j] > lim - 1 ? lim - 1 : ce[j] < -lim ? -lim
                                                                     : ce[j];
                }
            }
            if (starts->cst)
                starts = mica__ox_const_i(x, OX_INT64, cs, 1, &k);
            if (ends->cst)
                ends = mica__ox_const_i(x, OX_INT64, ce, 1, &k);
        }
        /* x < 0 ? x + d : x, as x + d * (x < 0) with ints. */
        s = mica__ox_ew(x, n, "sum", starts,
                        mica__ox_ew(x, n, "prod", dims,
                                    mica__ox_cast(x, n,
                                        mica__ox_ew(x, n, "less", starts,
                                                    zero, NULL),
                                        OX_INT64, NULL), NULL), NULL);
        e = mica__ox_ew(x, n, "sum", ends,
                        mica__ox_ew(x, n, "prod", dims,
                                    mica__ox_cast(x, n,
                                        mica__ox_ew(x, n, "less", ends,
                                                    zero, NULL),
                                        OX_INT64, NULL), NULL), NULL);
        s = s ? clamp(x, n, s, zero, hs) : NULL;
        e = e ? clamp(x, n, e, le, hs) : NULL;
        /* size = max(floor_div((e - s) * sgn + mag - 1, mag), 0) */
        size = e && s ? mica__ox_ew(x, n, "sub", e, s, NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "prod", size, sg, NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "sum", size,
                                  mica__ox_ew(x, n, "sub", mg, one, NULL),
                                  NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "floor_div", size, mg, NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "max", size, zero, NULL) : NULL;
        if (x->st != MICA_OK || !size)
            return x->st;
    } else {
        s = size = NULL;
    }
    /* The full vectors: sliced axes from above, the others whole. */
    for (i = 0; i < r; i++) {
        full_st[i] = 0;
        full_sd[i] = 1;
        full_sz[i] = v->d[i];
        pa[i] = pb[i] = NULL;
        if (v->d[i] < 0)
            pb[i] = mica__ox_dim(x, n, v, (int32_t)i);
    }
    for (i = 0; i < k; i++) {
        int64_t a = axes[i];
        full_sd[a] = steps[i];
        if (s->cst)
            full_st[a] = mica__ox_data_int(s->cst, i);
        else
            pa[a] = mica__ox_shape_slice(x, n, s, (int32_t)i, (int32_t)i + 1);
        pb[a] = NULL;
        if (size->cst)
            full_sz[a] = mica__ox_data_int(size->cst, i);
        else
            pb[a] = mica__ox_shape_slice(x, n, size, (int32_t)i,
                                         (int32_t)i + 1);
    }
    start = mica__ox_vec(x, n, full_st, pa, (int32_t)r);
    size = mica__ox_vec(x, n, full_sz, pb, (int32_t)r);
    stride = mica__ox_const_i(x, OX_INT64, full_sd, 1, &r);
    if (x->st != MICA_OK)
        return x->st;
    {
        mica__ox_value_t *o = mica__ox_slice(x, n, v, start, size, stride,
                                             NULL, NULL, OUT(0));
        for (i = 0; o && i < r; i++)
            o->d[i] = pb[i] ? -1 : full_sz[i];
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

/* Pad: a Slice from -pre over dims + pre + post (fill, reflect, clamp). */
static mica_status_t op_pad(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *pads, *fill = NULL, *axes = NULL, *pre, *post,
                     *dims, *start, *size;
    const char *mode, *smode;
    int64_t r;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    r = v->rank;
    mode = mica__ox_attr_s(x, n, "mode", "constant");
    smode = !strcmp(mode, "constant") ? "fill"
            : !strcmp(mode, "reflect") ? "reflect"
            : !strcmp(mode, "edge") ? "clamp"
            : !strcmp(mode, "wrap") ? "wrap" : NULL;
    if (!smode)
        return OX_UNSUP(x, n, "mode '%s' (constant, reflect, edge and wrap "
                        "are)", mode);
    if (n->opset < 11) {
        const int64_t *p;
        int32_t k = mica__ox_attr_ints(n, "pads", &p);
        int64_t len = k;
        double val = mica__ox_attr_f(n, "value", 0.0);
        if (k < 0)
            return OX_BAD(x, n, "no 'pads' attribute");
        pads = mica__ox_const_i(x, OX_INT64, p, 1, &len);
        if (val != 0)
            fill = mica__ox_scalar_like(x, v, val);
    } else {
        if (mica__ox_need(x, n, 2) != MICA_OK)
            return x->st;
        pads = IN(1);
        fill = IN(2);
        axes = IN(3);
    }
    if (!pads || !mica__ox_vec_ok(x, n, pads, "pads"))
        return x->st;
    if (axes) {
        /* opset 18: pads name the listed axes alone */
        int64_t zeros[MICA_MAX_DIMS] = {0}, *ax;
        int32_t at[MICA_MAX_DIMS], na;
        /* a constant, or an input whose values the profile fixes */
        if (!(ax = mica__ox_const_ints(x, n, 3, "axes", &na)))
            return x->st;
        if (na > r)
            return OX_BAD(x, n, "%d axes for rank %lld", (int)na,
                          (long long)r);
        if (mica__ox_axes_at(x, n, ax, na, (int32_t)r, at) != 0)
            return x->st;
        if (pads->d[0] != 2 * na)
            return OX_BAD(x, n, "pads has %lld values for %d axes",
                          (long long)pads->d[0], (int)na);
        pre = mica__ox_vec_at(x, n, pads, at, 0, zeros, NULL, (int32_t)r);
        post = mica__ox_vec_at(x, n, pads, at, na, zeros, NULL, (int32_t)r);
    } else {
        if (pads->d[0] != 2 * r)
            return OX_BAD(x, n, "pads has %lld values for rank %lld",
                          (long long)pads->d[0], (long long)r);
        pre = mica__ox_shape_slice(x, n, pads, 0, (int32_t)r);
        post = mica__ox_shape_slice(x, n, pads, (int32_t)r, 2 * (int32_t)r);
    }
    if (fill && fill->rank > 1)
        return OX_BAD(x, n, "the constant value must be a scalar");
    if (fill && fill->rank == 1)
        fill = mica__ox_reshape(x, n, fill, NULL, 0, NULL);
    if (strcmp(smode, "fill"))
        fill = NULL;
    dims = mica__ox_shape_of(x, n, v);
    if (x->st != MICA_OK)
        return x->st;
    start = mica__ox_unary(x, n, "neg", pre, NULL);
    size = mica__ox_ew(x, n, "sum", dims,
                       mica__ox_ew(x, n, "sum", pre, post, NULL), NULL);
    if (x->st != MICA_OK)
        return x->st;
    mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v, start, size, NULL,
                                             smode, fill, OUT(0)));
    return x->st;
}

/*
 * CenterCropPad (opset 18): a Slice in mode fill (zeros) of the new
 * dimensions, from (dims - shape) / 2 truncated toward zero: the crop's
 * window starts floor(d / 2) in, the padding puts floor(d / 2) before
 * (ONNX's reference).  `shape` names the listed axes (`axes`, default
 * all); the others keep their dimension.
 */
static mica_status_t op_center_crop_pad(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *shape, *dyn[MICA_MAX_DIMS], *size, *dims, *start,
                     *two;
    const int64_t *axes;
    int64_t all[MICA_MAX_DIMS], r, i, twos[MICA_MAX_DIMS];
    int32_t at[MICA_MAX_DIMS], na;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    shape = IN(1);
    r = v->rank;
    if (!mica__ox_vec_ok(x, n, shape, "the shape"))
        return x->st;
    if ((na = mica__ox_attr_ints(n, "axes", &axes)) < 0) {
        for (i = 0; i < r; i++)
            all[i] = i;
        axes = all;
        na = (int32_t)r;
    }
    if (mica__ox_axes_at(x, n, axes, na, (int32_t)r, at) != 0)
        return x->st;
    if (shape->d[0] != na)
        return OX_BAD(x, n, "the shape has %lld values for %d axes",
                      (long long)shape->d[0], (int)na);
    for (i = 0; i < r && x->st == MICA_OK; i++) {
        dyn[i] = at[i] < 0 && v->d[i] < 0 ? mica__ox_dim(x, n, v, (int32_t)i)
                                          : NULL;
        twos[i] = 2;
    }
    size = mica__ox_vec_at(x, n, shape, at, 0, v->d, dyn, (int32_t)r);
    dims = mica__ox_shape_of(x, n, v);
    two = mica__ox_const_i(x, OX_INT64, twos, 1, &r);
    if (x->st != MICA_OK)
        return x->st;
    start = mica__ox_ew(x, n, "div", mica__ox_ew(x, n, "sub", dims, size,
                                                 NULL), two, NULL);
    if (x->st != MICA_OK)
        return x->st;
    mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v, start, size, NULL,
                                             "fill", NULL, OUT(0)));
    return x->st;
}

/* Expand: a Slice with stride 0 along the axes of length 1. */
static mica_status_t op_expand(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *shape, *dims, *size, *stride, *start;
    int64_t r, i, zeros[MICA_MAX_DIMS] = {0};
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    shape = IN(1);
    if (!mica__ox_vec_ok(x, n, shape, "the shape"))
        return x->st;
    r = shape->d[0] > v->rank ? shape->d[0] : v->rank;
    if (r > MICA_MAX_DIMS)
        return OX_UNSUP(x, n, "more than %d dimensions", MICA_MAX_DIMS);
    if (v->rank < r) {
        int64_t axes[MICA_MAX_DIMS];
        for (i = 0; i < r - v->rank; i++)
            axes[i] = i;
        v = mica__ox_unsqueeze(x, n, v, axes, (int32_t)(r - v->rank), NULL);
    }
    if (shape->d[0] < r) {
        int64_t ones[MICA_MAX_DIMS], len = r - shape->d[0];
        mica__ox_value_t *parts[2];
        for (i = 0; i < len; i++)
            ones[i] = 1;
        parts[0] = mica__ox_const_i(x, OX_INT64, ones, 1, &len);
        parts[1] = shape;
        shape = mica__ox_concat(x, n, parts, 2, 0, NULL);
    }
    if (!v || !shape)
        return x->st;
    dims = mica__ox_shape_of(x, n, v);
    /* size = max(shape, dims) (1 broadcasts); stride = min(dims - 1, 1). */
    size = mica__ox_ew(x, n, "max", shape, dims, NULL);
    if (mica__ox_dims_known(v)) {
        int64_t sd[MICA_MAX_DIMS];
        for (i = 0; i < r; i++)
            sd[i] = v->d[i] == 1 ? 0 : 1;
        stride = mica__ox_const_i(x, OX_INT64, sd, 1, &r);
    } else {
        int64_t ones[MICA_MAX_DIMS];
        mica__ox_value_t *one;
        for (i = 0; i < r; i++)
            ones[i] = 1;
        one = mica__ox_const_i(x, OX_INT64, ones, 1, &r);
        stride = mica__ox_ew(x, n, "min",
                             mica__ox_ew(x, n, "sub", dims, one, NULL), one,
                             NULL);
    }
    start = mica__ox_const_i(x, OX_INT64, zeros, 1, &r);
    if (x->st != MICA_OK)
        return x->st;
    mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v, start, size, stride,
                                             NULL, NULL, OUT(0)));
    return x->st;
}

/* Tile: a Slice in mode wrap over dims * repeats. */
static mica_status_t op_tile(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *reps, *size;
    int64_t r, zeros[MICA_MAX_DIMS] = {0};
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    reps = IN(1);
    if (!mica__ox_vec_ok(x, n, reps, "repeats"))
        return x->st;
    r = v->rank;
    if (reps->d[0] != r)
        return OX_BAD(x, n, "repeats has %lld values for rank %lld",
                      (long long)reps->d[0], (long long)r);
    size = mica__ox_ew(x, n, "prod", mica__ox_shape_of(x, n, v), reps, NULL);
    if (size)
        mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v,
            mica__ox_const_i(x, OX_INT64, zeros, 1, &r), size, NULL, "wrap",
            NULL, OUT(0)));
    return x->st;
}

const mica__ox_op_t mica__ox_ops_slice[] = {
    {"Split", op_split, "Slice"},
    {"Slice", op_slice, "Slice"},
    {"Pad", op_pad, "Slice"},
    {"CenterCropPad", op_center_crop_pad, "Slice"},
    {"Expand", op_expand, "Slice"},
    {"Tile", op_tile, "Slice"},
    {NULL, NULL, NULL},
};
