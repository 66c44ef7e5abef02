/*
 * core/onnx/profile.c - runtime dimensions and their profile: the shape
 * options in trtexec's syntax, the inputs `mica run` is given, the checks
 * against what the model says; and which inputs are shape tensors: those
 * a layer reads as a shape (Shuffle's reshape input, Slice's start, size
 * and stride, Fill's shape, Resize's output shape, a count TripLimit, a
 * LoopOutput's length), found by walking back from them (not through a
 * Shape layer, which reads dimensions only).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

mica_status_t mica__ox_parse_shapes(mica__ox_t *x, const char *spec,
                                    int bit, const char *option)
{
    const char *p = spec;
    while (*p && x->st == MICA_OK) {
        const char *end = strchr(p, ','), *colon = NULL, *q;
        size_t len;
        char *name;
        int64_t vals[MICA_MAX_DIMS * 8];
        int32_t nb = 0, k;
        mica__ox_range_t *r = NULL;
        if (*p == '\'') {
            /* 'name:with:colons':1x2 */
            q = strchr(p + 1, '\'');
            if (!q || q[1] != ':')
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s '%s': an "
                                  "unclosed quote", option, spec);
            name = mica__ox_printf(x, "%.*s", (int)(q - p - 1), p + 1);
            colon = q + 1;
            end = strchr(colon, ',');
        } else {
            if (!end)
                end = p + strlen(p);
            for (q = p; q < end; q++)
                if (*q == ':')
                    colon = q;
            if (!colon)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s '%.*s': "
                                  "expected NAME:AxBxC", option,
                                  (int)(end - p), p);
            name = mica__ox_printf(x, "%.*s", (int)(colon - p), p);
        }
        if (!end)
            end = colon + strlen(colon);
        if (!name)
            return x->st;
        for (q = colon + 1; q < end;) {
            char *e;
            long long v;
            errno = 0;
            v = strtoll(q, &e, 10);
            if (e == q || errno || (e < end && *e != 'x')
                || nb == (int32_t)(sizeof vals / sizeof *vals))
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s '%.*s': "
                                  "expected NAME:AxBxC with integers",
                                  option, (int)(end - p), p);
            vals[nb++] = v;
            q = e < end ? e + 1 : e;
        }
        len = (size_t)nb;
        for (k = 0; k < x->nb_ranges; k++)
            if (!strcmp(x->ranges[k].name, name))
                r = &x->ranges[k];
        if (!r) {
            mica__ox_range_t *g = mica__ox_alloc(x, sizeof *g *
                                                 (size_t)(x->nb_ranges + 1));
            if (!g)
                return x->st;
            if (x->nb_ranges)
                memcpy(g, x->ranges, sizeof *g * (size_t)x->nb_ranges);
            x->ranges = g;
            r = &x->ranges[x->nb_ranges++];
            r->name = name;
            r->n = (int32_t)len;
        }
        if (r->n != (int32_t)len || len > MICA_MAX_DIMS)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s' "
                              "has %d values here and %d in another option"
                              "%s", option, name, (int)len, (int)r->n,
                              len > MICA_MAX_DIMS ? " (or too many)" : "");
        for (k = 0; k < nb; k++) {
            if (bit & 1) r->min[k] = vals[k];
            if (bit & 2) r->opt[k] = vals[k];
            if (bit & 4) r->max[k] = vals[k];
        }
        r->have |= bit;
        p = *end ? end + 1 : end;
    }
    return x->st;
}

/* A range from the input the caller will run with: its dims, or its
 * values for a shape tensor; NULL if none is given. */
static mica__ox_range_t *given_input(mica__ox_t *x, const mica__ox_input_t *in)
{
    const mica_onnx_options_t *o = x->opt;
    mica__ox_range_t *r;
    int32_t i, k;
    if (!o || o->struct_size < sizeof *o)
        return NULL;
    for (i = 0; i < o->nb_inputs; i++)
        if (o->input_names && o->input_names[i]
            ? !strcmp(o->input_names[i], in->v->name) : i == in->v->input)
            break;
    if (i == o->nb_inputs)
        return NULL;
    {
        mica__ox_range_t *g = mica__ox_alloc(x, sizeof *g *
                                             (size_t)(x->nb_ranges + 1));
        if (!g)
            return NULL;
        if (x->nb_ranges)
            memcpy(g, x->ranges, sizeof *g * (size_t)x->nb_ranges);
        x->ranges = g;
        r = &x->ranges[x->nb_ranges++];
    }
    r->name = in->v->name;
    r->have = 7;
    if (in->shape_tensor) {
        const mica_tensor_desc_t *d = &o->input_descs[i];
        int64_t cnt = mica_dims_volume(&d->dims);
        if ((d->dtype != MICA_INT32 && d->dtype != MICA_INT64)
            || cnt > MICA_MAX_DIMS) {
            mica__ox_fail(x, NULL, MICA_ERR_INVALID, "input '%s' is a shape "
                          "tensor: its data must be int32 or int64, at most "
                          "%d values", in->v->name, MICA_MAX_DIMS);
            return NULL;
        }
        r->n = (int32_t)cnt;
        for (k = 0; k < r->n; k++)
            r->min[k] = r->opt[k] = r->max[k] = d->dtype == MICA_INT64
                ? ((const int64_t *)o->input_data[i])[k]
                : ((const int32_t *)o->input_data[i])[k];
    } else {
        r->n = o->input_descs[i].dims.nb_dims;
        for (k = 0; k < r->n; k++)
            r->min[k] = r->opt[k] = r->max[k] = o->input_descs[i].dims.d[k];
    }
    return r;
}

int mica__ox_dim_range(const mica__ox_t *x, const mica__ox_value_t *v,
                       int32_t i, int64_t *lo, int64_t *hi)
{
    const mica__ox_range_t *r = NULL;
    int32_t k;
    if (!v || v->input < 0 || !v->name)
        return 0;
    for (k = 0; k < x->nb_ranges; k++)
        if (!strcmp(x->ranges[k].name, v->name))
            r = &x->ranges[k];
    if (!r || !r->have || i < 0 || i >= r->n || r->n != v->rank)
        return 0;
    *lo = r->have & 1 ? r->min[i] : r->have & 2 ? r->opt[i] : r->max[i];
    *hi = r->have & 4 ? r->max[i] : r->have & 2 ? r->opt[i] : r->min[i];
    return 1;
}

/* The profile of every input with runtime dimensions or shape values. */
mica_status_t mica__ox_profiles(mica__ox_t *x)
{
    int32_t i, k;
    char list[512];
    size_t n = 0;
    list[0] = '\0';
    for (i = 0; i < x->nb_inputs; i++)
        if (n < sizeof list)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                                  i ? ", " : "", x->inputs[i].v->name);
    for (k = 0; k < x->nb_ranges; k++) {
        mica__ox_range_t *r = &x->ranges[k];
        const mica__ox_input_t *in = NULL;
        for (i = 0; i < x->nb_inputs; i++)
            if (!strcmp(x->inputs[i].v->name, r->name))
                in = &x->inputs[i];
        if (!in)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: the shapes "
                              "given name '%s', which is not an input of "
                              "the model (its inputs: %s)", x->model->path,
                              r->name, x->nb_inputs ? list : "none");
        /* What is missing of min, opt and max is what is given. */
        for (i = 0; i < r->n; i++) {
            int64_t any = r->have & 2 ? r->opt[i] : r->have & 4 ? r->max[i]
                                                                : r->min[i];
            if (!(r->have & 1)) r->min[i] = any;
            if (!(r->have & 2)) r->opt[i] = any;
            if (!(r->have & 4)) r->max[i] = any;
        }
    }
    for (i = 0; i < x->nb_inputs; i++) {
        mica__ox_input_t *in = &x->inputs[i];
        const mica__ox_value_t *v = in->v;
        mica__ox_range_t *r = NULL;
        int dyn = in->shape_tensor || !mica__ox_dims_known(v);
        char ds[128];
        size_t m = 0;
        int32_t d;
        for (k = 0; k < x->nb_ranges; k++)
            if (!strcmp(x->ranges[k].name, v->name))
                r = &x->ranges[k];
        ds[0] = '\0';
        for (d = 0; d < v->rank && m < sizeof ds; d++)
            m += (size_t)snprintf(ds + m, sizeof ds - m, "%s%lld",
                                  d ? "x" : "", (long long)v->d[d]);
        if (!r && dyn && (r = given_input(x, in)) == NULL
            && x->st != MICA_OK)
            return x->st;
        if (!r) {
            if (!dyn)
                continue;
            if (in->shape_tensor)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input "
                                  "'%s' is a shape tensor: give its values "
                                  "with --shapes %s:V1xV2... (or "
                                  "--min/--opt/--max-shapes)",
                                  x->model->path, v->name, v->name);
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s' has "
                              "runtime dimensions (%s, -1 unknown): give its "
                              "shapes with --shapes %s:AxBx... (or "
                              "--min/--opt/--max-shapes)", x->model->path,
                              v->name, ds, v->name);
        }
        if (in->shape_tensor) {
            int64_t want = v->rank == 0 ? 1 : v->d[0];
            if (r->n != want)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s'"
                                  " is a shape tensor of %lld values; the "
                                  "shapes given have %d", x->model->path,
                                  v->name, (long long)want, (int)r->n);
        } else {
            if (r->n != v->rank)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s'"
                                  " has rank %d (%s), the shapes given %d "
                                  "dimensions", x->model->path, v->name,
                                  (int)v->rank, ds, (int)r->n);
            for (d = 0; d < v->rank; d++) {
                if (r->min[d] < 0 || r->min[d] > r->opt[d]
                    || r->opt[d] > r->max[d])
                    return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input "
                                      "'%s': dimension %d needs 0 <= min <= "
                                      "opt <= max, got %lld, %lld, %lld",
                                      x->model->path, v->name, (int)d,
                                      (long long)r->min[d],
                                      (long long)r->opt[d],
                                      (long long)r->max[d]);
                if (v->d[d] >= 0 && (r->min[d] != v->d[d]
                                     || r->max[d] != v->d[d]))
                    return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input "
                                      "'%s' is %s; the shapes given differ "
                                      "in dimension %d", x->model->path,
                                      v->name, ds, (int)d);
            }
        }
        r->used = dyn;
    }
    return MICA_OK;
}

/* ---- what the profile fixes ------------------------------------------------ */

int mica__ox_profile_fixed(mica__ox_t *x, const mica__ox_value_t *v,
                           int32_t pos, int values, int64_t *out,
                           int32_t *n)
{
    const mica_onnx_options_t *o = x->opt;
    int64_t want = values ? mica__ox_volume(v) : v->rank;
    int32_t k, i;
    if (want < 0 || want > MICA_MAX_DIMS
        || (values && v->type != OX_INT64 && v->type != OX_INT32))
        return 0;
    for (k = 0; k < x->nb_ranges; k++) {
        const mica__ox_range_t *r = &x->ranges[k];
        if (strcmp(r->name, v->name))
            continue;
        if (r->n != want)
            return 0;
        for (i = 0; i < r->n; i++) {
            /* What is missing of min, opt and max is what is given. */
            int64_t any = r->have & 2 ? r->opt[i] : r->have & 4 ? r->max[i]
                                                                : r->min[i],
                    lo = r->have & 1 ? r->min[i] : any,
                    hi = r->have & 4 ? r->max[i] : any;
            /* Dims: each one the profile fixes (-1 for the others). */
            if (lo != hi && values)
                return 0;
            out[i] = lo == hi ? lo : -1;
        }
        *n = r->n;
        return 1;
    }
    if (!o || o->struct_size < sizeof *o)
        return 0;
    for (k = 0; k < o->nb_inputs; k++)
        if (o->input_names && o->input_names[k]
            ? !strcmp(o->input_names[k], v->name) : k == pos)
            break;
    if (k == o->nb_inputs)
        return 0;
    if (!values) {
        if (o->input_descs[k].dims.nb_dims != v->rank)
            return 0;
        for (i = 0; i < v->rank; i++)
            out[i] = o->input_descs[k].dims.d[i];
        *n = v->rank;
        return 1;
    }
    if ((o->input_descs[k].dtype != MICA_INT32
         && o->input_descs[k].dtype != MICA_INT64)
        || mica_dims_volume(&o->input_descs[k].dims) != want
        || !o->input_data || !o->input_data[k])
        return 0;
    for (i = 0; i < want; i++)
        out[i] = o->input_descs[k].dtype == MICA_INT64
                 ? ((const int64_t *)o->input_data[k])[i]
                 : ((const int32_t *)o->input_data[k])[i];
    *n = (int32_t)want;
    return 1;
}

/* Layer types the importer's folds compute on the host. */
static int host_type(const char *type)
{
    static const char *const types[] = {
        "ElementWise", "Unary", "Identity", "Shuffle", "Slice",
        "Concatenation", "Gather", "Reduce", "Constant", "Select",
        "IfConditionalInput", NULL,
    };
    int k;
    for (k = 0; types[k]; k++)
        if (!strcmp(types[k], type))
            return 1;
    return 0;
}

int32_t mica__ox_fixed_sources(mica__ox_t *x, const char *t,
                               const char **names, int32_t cap,
                               const char **why)
{
    const char *stack[256];
    int32_t nb = 0, found = 0, i, steps = 0;
    stack[nb++] = t;
    while (nb > 0) {
        const char *u = stack[--nb];
        mica__ox_layer_t *l, *p = NULL;
        if (++steps > 4096)
            return -1;
        for (l = x->first; l && !p; l = l->next)
            for (i = 0; i < l->nb_out && !p; i++)
                if (l->out[i] && !strcmp(l->out[i], u))
                    p = l;
        if (!p) {
            mica__ox_value_t *v = NULL;
            int64_t vals[MICA_MAX_DIMS];
            int32_t cnt, j;
            for (i = 0; i < x->nb_inputs && !v; i++)
                if (!strcmp(x->inputs[i].v->tensor, u))
                    v = x->inputs[i].v;
            if (!v || !mica__ox_profile_fixed(x, v, v->input, 1, vals, &cnt)) {
                if (why)
                    *why = v ? mica__ox_printf(x, "input '%s', whose values "
                                               "the profile does not fix",
                                               v->name)
                             : "values known only at run time";
                return -1;
            }
            for (j = 0; names && j < found; j++)
                if (!strcmp(names[j], v->name))
                    break;
            if (j == found) {
                if (found == cap)
                    return -1;
                if (names)
                    names[found] = v->name;
                found++;
            }
            continue;
        }
        if (!host_type(p->type)) {
            if (why)
                *why = mica__ox_printf(x, "the output of layer '%s' (%s), "
                                       "computed at run time", p->name,
                                       p->type);
            return -1;
        }
        for (i = 0; i < p->nb_in; i++)
            if (p->in[i]) {
                if (nb == (int32_t)(sizeof stack / sizeof *stack))
                    return -1;
                stack[nb++] = p->in[i];
            }
    }
    return found;
}

/* ---- shape-tensor inputs -------------------------------------------------- */

/* Which inputs of a layer are read as shapes (a while TripLimit's
 * predicate is computed in the loop, not before it). */
static int shape_slot(const mica__ox_layer_t *l, int32_t i)
{
    const char *type = l->type;
    int32_t k;
    if (!strcmp(type, "TripLimit"))
        for (k = 0; k < l->nb_p; k++)
            if (!strcmp(l->p[k].name, "kind") && !strcmp(l->p[k].s[0],
                                                         "while"))
                return 0;
    if (!strcmp(type, "Shuffle") || !strcmp(type, "Resize"))
        return i == 1;
    if (!strcmp(type, "Slice"))
        return i >= 1 && i <= 3;
    if (!strcmp(type, "Fill"))
        return i == 0;
    if (!strcmp(type, "TripLimit"))
        return i == 0;
    if (!strcmp(type, "LoopOutput"))
        return i == 1;
    return 0;
}

mica_status_t mica__ox_mark_shape_inputs(mica__ox_t *x)
{
    mica__ox_names_t producer = {0}, seen = {0};
    const char **stack = NULL;
    size_t nb = 0, cap = 0;
    mica__ox_layer_t *l;
    int32_t i;
    mica_status_t st = MICA_OK;

#define PUSH(t) do { \
        if ((t) && !mica__ox_names_has(&seen, (t))) { \
            if (mica__ox_names_put(&seen, (t), (void *)(t))) goto nomem; \
            if (nb == cap) { \
                const char **g_ = realloc(stack, sizeof *g_ * \
                                          (cap = cap ? 2 * cap : 64)); \
                if (!g_) goto nomem; \
                stack = g_; \
            } \
            stack[nb++] = (t); \
        } } while (0)

    for (l = x->first; l; l = l->next)
        for (i = 0; i < l->nb_out; i++)
            if (mica__ox_names_put(&producer, l->out[i], l))
                goto nomem;
    for (l = x->first; l; l = l->next)
        for (i = 0; i < l->nb_in; i++)
            if (shape_slot(l, i))
                PUSH(l->in[i]);
    while (nb) {
        const char *t = stack[--nb];
        mica__ox_layer_t *p = mica__ox_names_get(&producer, t);
        if (!p) {
            for (i = 0; i < x->nb_inputs; i++)
                if (!strcmp(x->inputs[i].v->tensor, t)) {
                    mica__ox_value_t *v = x->inputs[i].v;
                    if (v->dtype != MICA_INT32 || v->rank > 1
                        || (v->rank == 1 && v->d[0] < 0)) {
                        st = mica__fail(x->ctx, MICA_ERR_UNSUPPORTED, "%s: "
                                        "input '%s' is read as a shape "
                                        "tensor, which must be integer, "
                                        "0-D or 1-D of a fixed length",
                                        x->model->path, v->name);
                        goto out;
                    }
                    x->inputs[i].shape_tensor = 1;
                }
            continue;
        }
        if (!strcmp(p->type, "Shape"))
            continue;
        for (i = 0; i < p->nb_in; i++)
            PUSH(p->in[i]);
    }
#undef PUSH
    goto out;
nomem:
    st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
out:
    free(stack);
    mica__ox_names_free(&producer);
    mica__ox_names_free(&seen);
    return st;
}

