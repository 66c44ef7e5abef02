/*
 * modules/elementwise/elementwise_onednn.c - ElementWise on the CPU
 * through oneDNN's binary primitive (implementation "onednn").
 *
 * oneDNN computes sum, prod, sub and div of float32 tensors: one IEEE
 * operation per element, so exactly the reference's results, on oneDNN's
 * threads and vector units.  Its binary primitive broadcasts the second
 * source only: where input 0 is the one broadcast, sum and prod swap
 * their inputs; sub and div leave that to the reference.  Every other
 * case (other ops, other types, 0-D tensors) the caller gives to the
 * reference (mica__ew_dnnl_run says so).  The tensors are described to
 * oneDNN by their strides (mica_kit_strides), so any format the layer
 * takes is read as it is.  One primitive per problem (shapes, formats,
 * op), made at its first run and again when the problem changes.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "kit_onednn.h"

struct mica__ew_dnnl {
    mica__dnnl_cache_t *cache; /* the primitive of the last problem */
    int off;                   /* oneDNN cannot be loaded: the reference */
};

/* What a primitive is made for: the op, the descriptors of the first
 * source, the second and the output (inputs swapped where `swap`). */
typedef struct problem {
    int64_t op, swap, rank;
    int64_t dims[3][MICA_MAX_DIMS];
    int64_t strides[3][MICA_MAX_DIMS];
} problem_t;

/* oneDNN's algorithm for op; 0 if it has none here. */
static dnnl_alg_kind_t alg_of(int op)
{
    switch (op) {
    case MICA__EW_SUM: return dnnl_binary_add;
    case MICA__EW_PROD: return dnnl_binary_mul;
    case MICA__EW_SUB: return dnnl_binary_sub;
    case MICA__EW_DIV: return dnnl_binary_div;
    default: return (dnnl_alg_kind_t)0;
    }
}

/* Whether desc d has dims y (no broadcast). */
static int full(const mica_tensor_desc_t *d, const mica_dims_t *y)
{
    int32_t i;
    for (i = 0; i < y->nb_dims; i++)
        if (d->dims.d[i] != y->d[i])
            return 0;
    return 1;
}

/* Make the runner of `problem` (a problem_t). */
static mica_status_t make(mica__dnnl_run_t *run, const void *problem,
                          mica_error_t *err)
{
    const problem_t *pb = problem;
    dnnl_memory_desc_t md[3];
    dnnl_binary_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    mica_status_t st = MICA_OK;
    int k;

    for (k = 0; k < 3; k++)
        MICA__DNNL_TRY(mica__dnnl.md_by_strides(&md[k], (int)pb->rank,
                                                pb->dims[k], dnnl_f32,
                                                pb->strides[k]));
    MICA__DNNL_TRY(mica__dnnl.binary_desc(&desc, alg_of((int)pb->op), &md[0],
                                          &md[1], &md[2]));
    MICA__DNNL_TRY(
        mica__dnnl.pd_create(&pd, &desc, NULL, mica__dnnl_engine(), NULL));
    st = mica__dnnl_run_make(run, pd, &md[0], &md[2], NULL, NULL, NULL, 0,
                             err);
    pd = NULL; /* consumed */
    if (st == MICA_OK && (st = mica__dnnl_run_src1(run, &md[1], err)) !=
                             MICA_OK)
        mica__dnnl_run_free(run);
fail:
    if (pd)
        mica__dnnl.pd_destroy(pd);
    return st;
}

mica_status_t mica__ew_dnnl_run(mica__ew_dnnl_t **state, const char *name,
                                int op, const mica_tensor_desc_t *in,
                                const mica_tensor_desc_t *out,
                                const void *const *inputs, void *y,
                                int *taken, mica_error_t *err)
{
    mica__ew_dnnl_t *s = *state;
    const mica_dims_t *yd = &out[0].dims;
    const mica_tensor_desc_t *d[3];
    mica__dnnl_run_t *run;
    mica_kit_bcast_t v;
    problem_t pb;
    mica_status_t st;
    int k, a = 0;

    *taken = 0;
    if (in[0].dtype != MICA_FLOAT32 || !alg_of(op) || yd->nb_dims < 1)
        return MICA_OK;
    if (!s) { /* the first run that oneDNN could take */
        if (!(s = *state = calloc(1, sizeof *s)))
            return MICA_KIT_FAIL(err, "out of host memory");
        if (mica__dnnl_open(err) != MICA_OK) {
            /* ElementWise runs without it (unlike the CNN layers) */
            mica_kit_host->log(MICA_LOG_WARNING, name, "oneDNN cannot be "
                               "loaded: ElementWise runs its reference");
            s->off = 1;
        }
    }
    if (s->off)
        return MICA_OK;
    /* the runtime checks of the reference, then its case of no work */
    if ((st = mica_kit_broadcast_view(in, 2, yd, 0, &v, err)) != MICA_OK)
        return st;
    *taken = 1;
    if (mica_dims_volume(yd) == 0)
        return MICA_OK;
    if (!full(&in[0], yd)) { /* oneDNN broadcasts the second source */
        if (!full(&in[1], yd) ||
            (op != MICA__EW_SUM && op != MICA__EW_PROD)) {
            *taken = 0;
            return MICA_OK;
        }
        a = 1;
    }
    memset(&pb, 0, sizeof pb);
    pb.op = op;
    pb.swap = a;
    pb.rank = yd->nb_dims;
    d[0] = &in[a];
    d[1] = &in[1 - a];
    d[2] = &out[0];
    for (k = 0; k < 3; k++) {
        memcpy(pb.dims[k], d[k]->dims.d, sizeof pb.dims[k]);
        if (!mica_kit_strides(d[k], pb.strides[k]))
            return MICA_KIT_FAIL(err, "input %d: a format ElementWise "
                                 "cannot read", k < 2 ? (k ^ a) : 2);
    }
    if ((st = mica__dnnl_cached(&s->cache, &pb, sizeof pb, make, &pb, &run,
                                err)) != MICA_OK)
        return st;
    return mica__dnnl_run_exec_binary(run, inputs[a], inputs[1 - a], y, err);
}

void mica__ew_dnnl_free(mica__ew_dnnl_t *state)
{
    if (!state)
        return;
    mica__dnnl_cache_free(state->cache);
    free(state);
}
