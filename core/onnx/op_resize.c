/*
 * core/onnx/op_resize.c - Resize and Upsample onto Resize: modes nearest
 * and linear, TensorRT's coordinate transformations and rounding, scales
 * or sizes as params (sizes known only at run time as a shape tensor).
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- resize ------------------------------------------------------------ */

/*
 * Resize's `axes` (opset 18): scales or sizes name those axes alone, in
 * that order; made whole here, a scale of 1 or v's own dimension for
 * each other axis.
 */
static mica_status_t full_rank(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *v,
                               mica__ox_value_t **scales,
                               mica__ox_value_t **sizes)
{
    const int64_t *axes;
    int32_t na = mica__ox_attr_ints(n, "axes", &axes), r = v->rank, i;
    int32_t at[MICA_MAX_DIMS];
    mica__ox_value_t *given = *scales ? *scales : *sizes, *dyn[MICA_MAX_DIMS];
    int64_t len = r;

    if (mica__ox_axes_at(x, n, axes, na, r, at) != 0)
        return x->st;
    if (given->rank != 1 || given->d[0] != na)
        return OX_BAD(x, n, "%s has %lld values for %d axes",
                      *scales ? "scales" : "sizes", (long long)given->d[0],
                      (int)na);
    if (*scales) {
        double f[MICA_MAX_DIMS];
        if (!(*scales)->cst)
            return OX_UNSUP(x, n, "scales known only at run time (give "
                            "sizes, or constant scales)");
        for (i = 0; i < r; i++)
            f[i] = at[i] < 0 ? 1.0 : mica__ox_data_f((*scales)->cst, at[i]);
        *scales = mica__ox_const_f(x, OX_FLOAT, f, 1, &len);
        return x->st;
    }
    for (i = 0; i < r && x->st == MICA_OK; i++)
        dyn[i] = at[i] < 0 && v->d[i] < 0 ? mica__ox_dim(x, n, v, i) : NULL;
    *sizes = mica__ox_vec_at(x, n, *sizes, at, 0, v->d, dyn, r);
    return x->st;
}

static mica_status_t resize(mica__ox_t *x, mica__ox_node_t *n,
                            mica__ox_value_t *v, mica__ox_value_t *scales,
                            mica__ox_value_t *sizes, const char *mode,
                            const char *coord, const char *rounding)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *sel = "formula";
    int64_t od[MICA_MAX_DIMS];
    mica_status_t st;
    int32_t i;

    if (!strcmp(mode, "cubic"))
        return OX_UNSUP(x, n, "mode cubic (nearest and linear are)");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear"))
        return OX_BAD(x, n, "mode '%s'", mode);
    if (!strcmp(coord, "pytorch_half_pixel")) {
        coord = "half_pixel";
        sel = "upper_left";
    } else if (strcmp(coord, "half_pixel") && strcmp(coord, "align_corners")
               && strcmp(coord, "asymmetric")) {
        return OX_UNSUP(x, n, "coordinate_transformation_mode '%s'", coord);
    }
    if (mica__ox_attr_i(n, "exclude_outside", 0))
        return OX_UNSUP(x, n, "exclude_outside");
    if (mica__ox_attr_i(n, "antialias", 0))
        return OX_UNSUP(x, n, "antialias");
    if (sizes && strcmp(mica__ox_attr_s(x, n, "keep_aspect_ratio_policy",
                                        "stretch"), "stretch"))
        return OX_UNSUP(x, n, "keep_aspect_ratio_policy '%s' (stretch is)",
                        mica__ox_attr_s(x, n, "keep_aspect_ratio_policy",
                                        ""));
    if (mica__ox_attr(n, "axes") &&
        (st = full_rank(x, n, v, &scales, &sizes)) != MICA_OK)
        return st;
    if (sizes && (sizes->rank != 1 || sizes->d[0] != v->rank))
        return OX_BAD(x, n, "sizes has %lld values for rank %d",
                      (long long)sizes->d[0], (int)v->rank);
    if (scales && !scales->cst)
        return OX_UNSUP(x, n, "scales known only at run time (give sizes, "
                        "or constant scales)");
    if (scales && scales->cst->count != v->rank)
        return OX_BAD(x, n, "%lld scales for rank %d",
                      (long long)scales->cst->count, (int)v->rank);
    l = mica__ox_layer(x, n, "Resize", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    if (sizes && !sizes->cst)
        mica__ox_in(x, l, mica__ox_tensor(x, n, sizes));
    mica__ox_p_str(x, l, "mode", mode);
    for (i = 0; i < v->rank; i++)
        od[i] = -1;
    if (sizes && sizes->cst) {
        for (i = 0; i < v->rank; i++)
            od[i] = mica__ox_data_int(sizes->cst, i);
        mica__ox_p_ints(x, l, "output_shape", od, v->rank);
    } else if (scales) {
        double f[MICA_MAX_DIMS];
        for (i = 0; i < v->rank; i++) {
            f[i] = mica__ox_data_f(scales->cst, i);
            od[i] = v->d[i] < 0 ? -1 : (int64_t)floor(v->d[i] * f[i]);
        }
        mica__ox_p_floats(x, l, "scales", f, v->rank);
    }
    mica__ox_p_str(x, l, "coordinate_transformation", coord);
    if (!strcmp(mode, "nearest"))
        mica__ox_p_str(x, l, "nearest_rounding", rounding);
    mica__ox_p_str(x, l, "selector_for_single_pixel", sel);
    o = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, od);
    if (o)
        o->type = v->type;
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_resize(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *scales = NULL, *sizes = NULL;
    const char *mode = mica__ox_attr_s(x, n, "mode", "nearest"), *coord,
               *nm, *round;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (n->opset < 11) {
        scales = IN(1);
        coord = "asymmetric";
        round = "floor";
    } else {
        scales = IN(2);
        sizes = IN(3);
        if (scales && scales->cst && scales->cst->count == 0)
            scales = NULL;
        coord = mica__ox_attr_s(x, n, "coordinate_transformation_mode",
                                "half_pixel");
        nm = mica__ox_attr_s(x, n, "nearest_mode", "round_prefer_floor");
        round = !strcmp(nm, "round_prefer_floor") ? "half_down"
                : !strcmp(nm, "round_prefer_ceil") ? "half_up"
                : !strcmp(nm, "floor") ? "floor"
                : !strcmp(nm, "ceil") ? "ceil" : NULL;
        if (!round)
            return OX_BAD(x, n, "nearest_mode '%s'", nm);
        if (!strcmp(coord, "tf_crop_and_resize"))
            return OX_UNSUP(x, n, "coordinate_transformation_mode "
                            "tf_crop_and_resize");
    }
    if (!scales && !sizes)
        return OX_BAD(x, n, "neither scales nor sizes");
    if (scales && sizes)
        return OX_BAD(x, n, "both scales and sizes");
    return resize(x, n, IN(0), scales, sizes, mode, coord, round);
}

static mica_status_t op_upsample(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *scales = IN(1);
    const char *mode = mica__ox_attr_s(x, n, "mode", "nearest");
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (!strcmp(mode, "bilinear"))
        mode = "linear";
    if (n->opset < 9) {
        const Onnx__AttributeProto *a = mica__ox_attr(n, "scales");
        double f[MICA_MAX_DIMS];
        int64_t len;
        size_t i;
        if (!a || a->n_floats > MICA_MAX_DIMS)
            return OX_BAD(x, n, "no scales");
        for (i = 0; i < a->n_floats; i++)
            f[i] = a->floats[i];
        len = (int64_t)a->n_floats;
        scales = mica__ox_const_f(x, OX_FLOAT, f, 1, &len);
    }
    if (!scales)
        return OX_BAD(x, n, "no scales");
    return resize(x, n, IN(0), scales, NULL, mode, "asymmetric", "floor");
}

const mica__ox_op_t mica__ox_ops_resize[] = {
    {"Resize", op_resize, "Resize"},
    {"Upsample", op_upsample, "Resize"},
    {NULL, NULL, NULL},
};
