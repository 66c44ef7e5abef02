/*
 * modules/convolution/conv_ref.c - the CPU reference of Convolution and
 * Deconvolution: the definitions, one output element at a time, summed
 * in double and rounded once.  Obviously correct rather than fast.
 *
 * Convolution, output element (n, o, z, y, x) with group g = o / (M/G):
 *   bias[o] + sum over c' < C/G and the window (a, b, d) of
 *   x[n, g*C/G + c', z*s0 - pre0 + a*dil0, ...] * w[o, c', a, b, d],
 *   positions outside the input reading 0.
 * Deconvolution (the transpose): every input position i and window tap a
 * with i*s - pre + a*dil == o contributes x[n, c, i] * w[c, o', a], for
 * the input channels c of the output's group, o' = o - g*M/G.
 * With no input channel (C = 0) the sums are empty: the output is the
 * bias, zeros without one.
 */
#include <config.h>

#include <string.h>

#include "conv.h"
#include "kit_nn.h"

float mica__conv_weight(const mica_weights_t *w, int64_t i)
{
    return (float)mica__nn_get(w->values, w->dtype, i);
}

void mica__conv_problem(const mica__conv_params_t *p, mica_dtype_t dtype,
                        const mica_dims_t *x, mica__conv_problem_t *pb)
{
    int32_t r = x->nb_dims, nd = p->win.nd, i;

    memset(pb, 0, sizeof *pb);
    pb->p = p;
    pb->dtype = dtype;
    pb->n = 1;
    for (i = 0; i < r - nd - 1; i++)
        pb->n *= x->d[i];
    pb->c = x->d[r - nd - 1];
    pb->m = p->m;
    for (i = 0; i < 3; i++)
        pb->in[i] = pb->out[i] = 1;
    for (i = 0; i < nd; i++) {
        pb->in[3 - nd + i] = x->d[r - nd + i];
        pb->out[3 - nd + i] = mica__window_out(&p->win, 3 - nd + i,
                                               x->d[r - nd + i]);
    }
}

/* One Convolution output element (n, o, z[3]) as a double. */
static double conv_at(const mica__conv_problem_t *pb, const void *x,
                      int64_t n, int64_t o, const int64_t *z)
{
    const mica__conv_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    int64_t cpg = pb->c / p->groups, mpg = pb->m / p->groups;
    int64_t g = o / mpg, c, a[3], in_pos[3];
    double acc = p->bias ? mica__conv_weight(p->bias, o) : 0.0;
    int d;

    for (c = 0; c < cpg; c++)
        for (a[0] = 0; a[0] < w->k[0]; a[0]++)
            for (a[1] = 0; a[1] < w->k[1]; a[1]++)
                for (a[2] = 0; a[2] < w->k[2]; a[2]++) {
                    int inside = 1;
                    int64_t xi, wi;
                    for (d = 0; d < 3; d++) {
                        in_pos[d] = z[d] * w->stride[d] - w->pre[d] +
                                    a[d] * w->dil[d];
                        inside &= in_pos[d] >= 0 && in_pos[d] < pb->in[d];
                    }
                    if (!inside)
                        continue;
                    xi = ((n * pb->c + g * cpg + c) * pb->in[0] + in_pos[0]) *
                             pb->in[1] * pb->in[2] +
                         in_pos[1] * pb->in[2] + in_pos[2];
                    wi = ((o * cpg + c) * w->k[0] + a[0]) * w->k[1] * w->k[2] +
                         a[1] * w->k[2] + a[2];
                    acc += mica__nn_get(x, pb->dtype, xi) *
                           (double)mica__conv_weight(p->kernel, wi);
                }
    return acc;
}

/* One Deconvolution output element (n, o, z[3]) as a double. */
static double deconv_at(const mica__conv_problem_t *pb, const void *x,
                        int64_t n, int64_t o, const int64_t *z)
{
    const mica__conv_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    int64_t cpg = pb->c / p->groups, mpg = pb->m / p->groups;
    int64_t g = o / mpg, c, a[3], in_pos[3];
    double acc = p->bias ? mica__conv_weight(p->bias, o) : 0.0;
    int d;

    for (c = g * cpg; c < (g + 1) * cpg; c++)
        for (a[0] = 0; a[0] < w->k[0]; a[0]++)
            for (a[1] = 0; a[1] < w->k[1]; a[1]++)
                for (a[2] = 0; a[2] < w->k[2]; a[2]++) {
                    int inside = 1;
                    int64_t xi, wi;
                    for (d = 0; d < 3; d++) {
                        /* the input position i with i*s - pre + a*dil == z */
                        int64_t t = z[d] + w->pre[d] - a[d] * w->dil[d];
                        in_pos[d] = t >= 0 ? t / w->stride[d] : -1;
                        inside &= t >= 0 && t % w->stride[d] == 0 &&
                                  in_pos[d] < pb->in[d];
                    }
                    if (!inside)
                        continue;
                    xi = ((n * pb->c + c) * pb->in[0] + in_pos[0]) *
                             pb->in[1] * pb->in[2] +
                         in_pos[1] * pb->in[2] + in_pos[2];
                    wi = ((c * mpg + (o - g * mpg)) * w->k[0] + a[0]) *
                             w->k[1] * w->k[2] +
                         a[1] * w->k[2] + a[2];
                    acc += mica__nn_get(x, pb->dtype, xi) *
                           (double)mica__conv_weight(p->kernel, wi);
                }
    return acc;
}

void mica__conv_reference(const mica__conv_problem_t *pb, const void *x,
                          void *y)
{
    int64_t n, o, z[3], i = 0;

    for (n = 0; n < pb->n; n++)
        for (o = 0; o < pb->m; o++)
            for (z[0] = 0; z[0] < pb->out[0]; z[0]++)
                for (z[1] = 0; z[1] < pb->out[1]; z[1]++)
                    for (z[2] = 0; z[2] < pb->out[2]; z[2]++)
                        mica__nn_put(y, pb->dtype, i++,
                                     pb->p->deconv ? deconv_at(pb, x, n, o, z)
                                                   : conv_at(pb, x, n, o, z));
}
