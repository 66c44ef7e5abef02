/*
 * modules/padding/padding.c - the Padding layer (TensorRT's
 * IPaddingLayer): creators, layer ops and the CPU reference.
 *
 * Zero padding of the two innermost dimensions: `pre_padding` (2 ints)
 * is added before them, `post_padding` (2 ints) after; a negative value
 * crops instead.  The output has the input's type; any type is accepted
 * (a pure data movement: zero bits are 0, 0.0 or false).  TensorRT
 * requires rank 4 or more; mica takes rank 2 or more, the two innermost
 * dimensions being all the layer touches.  A padded length below zero is
 * refused at build time when it is known then, at run time (by the core)
 * otherwise.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"

#include "padding.h"

static const int64_t zeros[2] = {0, 0};

static const mica_field_schema_t pad_fields[] = {
    {"pre_padding", MICA_FIELD_INT, 2, 0, 2, zeros, NULL,
     "padding before the two innermost dimensions (negative crops)"},
    {"post_padding", MICA_FIELD_INT, 2, 0, 2, zeros, NULL,
     "padding after the two innermost dimensions (negative crops)"},
};

/* Paddings are limited so that length + pre + post never overflows. */
#define PAD_LIMIT ((int64_t)1 << 40)

typedef struct pad_layer {
    mica_kit_layer_t base;
    int64_t pre[2], post[2];
} pad_layer_t;

static mica_status_t pad_output_dtypes(const mica_layer_t *layer,
                                       const mica_dtype_t *in, int32_t nb_in,
                                       mica_dtype_t *out, int32_t nb_out,
                                       mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Padding has 1 input and 1 output, got %d "
                             "and %d", (int)nb_in, (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "Padding cannot move type %s",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t pad_output_dims(const mica_layer_t *layer, int32_t index,
                                     const mica_shape_expr_t *in,
                                     int32_t nb_in, mica_expr_builder_t *eb,
                                     mica_shape_expr_t *out, mica_error_t *err)
{
    const pad_layer_t *l = (const pad_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    int32_t r = in[0].nb_dims, k;

    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "Padding has 1 input and 1 output");
    if (r < 2)
        return MICA_KIT_FAIL(err, "Padding pads the two innermost "
                             "dimensions: input 0 has rank %d, it needs 2 "
                             "or more", (int)r);
    out->nb_dims = r;
    for (k = 0; k < r; k++)
        out->d[k] = in[0].d[k];
    for (k = 0; k < 2; k++) {
        const mica_expr_t *d = in[0].d[r - 2 + k], *add;
        int64_t sum = l->pre[k] + l->post[k];
        if (h->expr_is_constant(d) && h->expr_constant_value(d) + sum < 0)
            return MICA_KIT_FAIL(err, "pre_padding %lld and post_padding "
                                 "%lld crop dimension %d (length %lld) below "
                                 "zero, to %lld", (long long)l->pre[k],
                                 (long long)l->post[k], (int)(r - 2 + k),
                                 (long long)h->expr_constant_value(d),
                                 (long long)(h->expr_constant_value(d) +
                                             sum));
        if (sum == 0)
            continue;
        add = h->expr_constant(eb, sum);
        out->d[r - 2 + k] =
            add ? h->expr_operation(eb, MICA_EXPR_SUM, d, add) : NULL;
        if (!out->d[r - 2 + k])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

static int32_t pad_supports_format(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        !mica_kit_linear(io, pos))
        return 0;
    return pos == 0 ? mica_kit_any_type(io[0].dtype)
                    : io[1].dtype == io[0].dtype;
}

/* The padded view of the actual shapes. */
static void pad_view(const pad_layer_t *l, const mica_tensor_desc_t *in,
                     const mica_tensor_desc_t *out, mica__pad_t *p)
{
    int32_t r = in[0].dims.nb_dims, k;

    p->outer = 1;
    for (k = 0; k < r - 2; k++)
        p->outer *= in[0].dims.d[k];
    p->h = in[0].dims.d[r - 2];
    p->w = in[0].dims.d[r - 1];
    p->oh = out[0].dims.d[r - 2];
    p->ow = out[0].dims.d[r - 1];
    p->top = l->pre[0];
    p->left = l->pre[1];
}

static MICA_KIT_ENQUEUE(pad_enqueue_cpu)
{
    const pad_layer_t *l = (const pad_layer_t *)layer;
    size_t es = mica_dtype_size(in[0].dtype);
    const unsigned char *x = inputs[0];
    unsigned char *y = outputs[0];
    mica__pad_t p;
    int64_t o, i, j;

    pad_view(l, in, out, &p);
    for (o = 0; o < p.outer; o++)
        for (i = 0; i < p.oh; i++)
            for (j = 0; j < p.ow; j++) {
                int64_t si = i - p.top, sj = j - p.left;
                unsigned char *dst = y + ((o * p.oh + i) * p.ow + j) * es;
                if (si >= 0 && si < p.h && sj >= 0 && sj < p.w)
                    memcpy(dst, x + ((o * p.h + si) * p.w + sj) * es, es);
                else
                    memset(dst, 0, es);
            }
    return MICA_OK;
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(pad_enqueue_cuda)
{
    mica__pad_t p;

    pad_view((const pad_layer_t *)layer, in, out, &p);
    if (p.outer * p.oh * p.ow == 0)
        return MICA_OK;
    return mica__padding_cuda(&p, mica_dtype_size(in[0].dtype), inputs[0],
                              outputs[0], stream, err);
}
#endif

/* Both paddings, limited to +-2^40. */
static mica_layer_t *pad_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    const char *names[2] = {"pre_padding", "post_padding"};
    int64_t v[2][2];
    pad_layer_t *l;
    int32_t f, k;

    for (f = 0; f < 2; f++) {
        const int64_t *p = mica_kit_ints(fields, names[f]);
        for (k = 0; k < 2; k++) {
            v[f][k] = p ? p[k] : 0; /* count 2 by the schema */
            if (v[f][k] > PAD_LIMIT || v[f][k] < -PAD_LIMIT) {
                mica_kit_host->set_error(err, "'%s' value %lld is beyond "
                                         "+-2^40", names[f],
                                         (long long)v[f][k]);
                return NULL;
            }
        }
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    memcpy(l->pre, v[0], sizeof l->pre);
    memcpy(l->post, v[1], sizeof l->post);
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(pad, "Padding", pad_fields, MICA_KIT_COUNT(pad_fields),
                    pad_create, pad_enqueue_cpu, pad_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = pad_output_dtypes,
                    .output_dims = pad_output_dims,
                    .supports_format = pad_supports_format)

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(pad)};

MICA_KIT_ENTRY("padding", PACKAGE_VERSION, "MIT",
               "Padding: zero padding or cropping of the two innermost "
               "dimensions", creators)
