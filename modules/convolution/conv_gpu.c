/*
 * modules/convolution/conv_gpu.c - the CUDA state of Convolution and
 * Deconvolution, shared by the implementations "cuda" (the hand-written
 * kernel alone) and "cudnn" (cuDNN, with the kernel for what cuDNN does
 * not take): the weights on the device in the I/O type, the algorithm
 * (the tactic) and the workspace recorded at configure time.
 *
 * The algorithm is a tactic (conv.h): one of the engine configurations
 * of cuDNN's graph API (conv_graph.c) for the convolution and the
 * layer's epilogue, or a legacy cuDNN algorithm, or the hand-written
 * kernel (MICA__CONV_DIRECT): the layer's tactic where one was set (the
 * engine stores it; autotune times each the layer offers), else the
 * graph API heuristics' first configuration, else the legacy algorithm
 * cuDNN times quickest at the profile's opt shapes (conv_cudnn.c).  The workspace is
 * the most the algorithm needs over the profile; a run whose
 * shape would need more (it does not happen for cuDNN's usual
 * algorithms, whose workspace grows with the shape) takes the algorithm
 * that needs none.  What runs a shape is worked out when the shape
 * changes (cuDNN's workspace queries cost tens of microseconds of host
 * time), never at every run.
 * Weights are uploaded by initialize (cudaMalloc there, never in enqueue
 * unless the layer runs without initialize, as autotune's trial runs do).
 */
#include <config.h>

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit_cuda.h"
#include "kit_nn.h"
#include "conv.h"

/* The most workspace a heuristic choice may want (at opt shapes). */
#define WS_CAP ((size_t)1 << 30)
/* The graph API's configurations offered as tactics, at most; for a
 * fused layer, of the convolution and bias alone too. */
#define GRAPH_TACTICS 12
#define PLAIN_TACTICS 6

struct mica__conv_gpu {
    int use_cudnn;
    int nhwc;
    int32_t algo;          /* legacy algorithm, MICA__CONV_DIRECT, -1 */
    int32_t gtac;          /* a graph configuration's tactic, 0: none */
    int32_t epi, epi_set;  /* the epilogue of the layer (MICA__CG_*) */
    size_t ws;
    /* The opt shapes of the last configure (tactics are offered there). */
    int opt_set;
    mica__conv_problem_t opt;
    /* What runs the last problem seen (run's cache): its sizes and
     * whether it had workspace, the algorithm (MICA__CONV_DIRECT: the
     * kernel) and the workspace it takes. */
    int run_set, run_with_ws;
    mica__conv_problem_t run_key;
    int32_t run_algo;
    size_t run_need;
    mica__cg_plan_t *run_plan; /* conv (+ bias) by the graph API, or NULL */
    /* The layer's whole epilogue by the graph API (fused_plan), for the
     * problem of fused_key, workspace as fused_with_ws. */
    int fused_set, fused_with_ws;
    mica__conv_problem_t fused_key;
    mica__cg_plan_t *fused_plan;
    size_t fused_need;
    void *w, *b;           /* device weights, NULL until uploaded */
    mica_dtype_t wtype;    /* their type */
    int wnhwc;             /* their layout: K(RS)C with nhwc */
    mica__conv_dnn_t *dnn; /* cuDNN's descriptors (cudnn only) */
};

#ifdef MICA_HAVE_CUDNN
/* The epilogue of the convolution alone: its bias, if any. */
static int32_t plain_epi(const mica__conv_problem_t *pb)
{
    return pb->p->bias ? MICA__CG_BIAS : 0;
}
#endif

mica__conv_gpu_t *mica__conv_gpu_new(int use_cudnn)
{
    mica__conv_gpu_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->algo = use_cudnn ? -1 : MICA__CONV_DIRECT;
#ifdef MICA_HAVE_CUDNN
    g->use_cudnn = use_cudnn;
    if (use_cudnn && !(g->dnn = mica__conv_dnn_new())) {
        free(g);
        return NULL;
    }
#endif
    return g;
}

void mica__conv_gpu_free(mica__conv_gpu_t *g)
{
    if (!g)
        return;
    /* Errors of cudaFree are those of an earlier call: nothing to do. */
    if (g->w)
        cudaFree(g->w);
    if (g->b)
        cudaFree(g->b);
#ifdef MICA_HAVE_CUDNN
    mica__conv_dnn_free(g->dnn);
#endif
    free(g);
}

int32_t mica__conv_gpu_tactics(mica__conv_gpu_t *g, int32_t *ids,
                               int32_t max)
{
    int32_t first = MICA__CONV_DIRECT, k = 0;
#ifdef MICA_HAVE_CUDNN
    int32_t algos[MICA_MAX_TACTICS], n = 0, i;
#endif

    if (!g->use_cudnn || !g->opt_set || max < 1)
        return 0;
#ifdef MICA_HAVE_CUDNN
    /* The graph API's configurations first, in heuristics' order (its
     * GRAPH_TACTICS first: autotune times each), then the legacy
     * algorithms, the choice first, then the kernel's.  Every answer is kept per
     * process and problem: asking again is free. */
    k = mica__cg_tactics(&g->opt, g->nhwc, g->epi, ids,
                         max < GRAPH_TACTICS ? max : GRAPH_TACTICS);
    if (g->epi != plain_epi(&g->opt) && k < max) {
        /* A fused layer: also the convolution and bias alone, then the
         * epilogue kernel (MICA__CG_PLAIN). */
        int32_t j, np = mica__cg_tactics(&g->opt, g->nhwc,
                                         plain_epi(&g->opt), ids + k,
                                         max - k < PLAIN_TACTICS
                                             ? max - k : PLAIN_TACTICS);
        for (j = 0; j < np; j++)
            ids[k + j] |= MICA__CG_PLAIN;
        k += np;
    }
    if (mica__conv_dnn_takes(&g->opt)) {
        if (mica__conv_dnn_choose(g->dnn, &g->opt, g->nhwc, WS_CAP, &first,
                                  NULL) != MICA_OK)
            first = MICA__CONV_DIRECT;
        else if (first != MICA__CONV_DIRECT)
            n = mica__conv_dnn_algos(g->dnn, &g->opt, g->nhwc, WS_CAP,
                                     algos, MICA_MAX_TACTICS);
    }
    if (k < max)
        ids[k++] = MICA__CONV_TACTIC(first);
    for (i = 0; i < n && k < max; i++) {
        int32_t j, seen = algos[i] == first;
        /* Heuristics list an algorithm once per math type. */
        for (j = 0; j < i && !seen; j++)
            seen = algos[j] == algos[i];
        if (!seen)
            ids[k++] = MICA__CONV_TACTIC(algos[i]);
    }
    if (first != MICA__CONV_DIRECT && k < max)
        ids[k++] = MICA__CONV_TACTIC(MICA__CONV_DIRECT);
#else
    ids[k++] = MICA__CONV_TACTIC(first);
#endif
    return k;
}

mica_status_t mica__conv_gpu_set_tactic(mica__conv_gpu_t *g, int deconv,
                                        int32_t tactic, mica_error_t *err)
{
    int32_t algo = tactic > 0 ? tactic - 1 : -1; /* ids are positive */

    if (!g->use_cudnn)
        return MICA_KIT_FAIL(err, "tactic %d: the hand-written "
                             "implementation has no tactics", (int)tactic);
#ifdef MICA_HAVE_CUDNN
    /* A graph configuration is looked for where it runs (configure, a
     * new shape); one cuDNN no longer has falls back to heuristics'. */
    if (MICA__CG_IS_TACTIC(tactic) && !deconv) {
        g->gtac = tactic;
        g->algo = -1;
        g->run_set = g->fused_set = 0;
        return MICA_OK;
    }
    if (algo != MICA__CONV_DIRECT && !mica__conv_dnn_known(deconv, algo))
#else
    if (algo != MICA__CONV_DIRECT)
#endif
        return MICA_KIT_FAIL(err, "tactic %d is neither one of cuDNN's %s "
                             "algorithms (tactic = algorithm + 1, the FFT "
                             "ones left out), a configuration of its graph "
                             "API (%s), nor the hand-written kernel (%d)",
                             (int)tactic,
                             deconv ? "backward-data" : "forward",
                             deconv ? "not for Deconvolution"
                                    : "1073741824 and above",
                             (int)MICA__CONV_TACTIC(MICA__CONV_DIRECT));
    g->algo = algo;
    g->gtac = 0;
    g->run_set = g->fused_set = 0;
    return MICA_OK;
}

void mica__conv_gpu_set_nhwc(mica__conv_gpu_t *g, int nhwc)
{
    if (g->nhwc == (nhwc != 0))
        return; /* the run cache holds */
    g->nhwc = nhwc != 0;
    g->run_set = g->fused_set = 0;
}

void mica__conv_gpu_set_epilogue(mica__conv_gpu_t *g, int32_t epi)
{
    if (g->epi_set && g->epi == epi)
        return;
    g->epi = epi;
    g->epi_set = 1;
    g->fused_set = 0;
}

size_t mica__conv_gpu_workspace(const mica__conv_gpu_t *g)
{
    return g->ws;
}

mica_status_t mica__conv_gpu_configure(mica__conv_gpu_t *g,
                                       const mica__conv_problem_t *opt,
                                       const mica__conv_problem_t *hi,
                                       mica_error_t *err)
{
#ifdef MICA_HAVE_CUDNN
    size_t a = 0, b = 0;
    mica_status_t st;

    g->ws = 0;
    g->run_set = g->fused_set = 0;
    g->opt = *opt;
    g->opt_set = 1;
    if (!g->epi_set)
        g->epi = opt->p->bias ? MICA__CG_BIAS : 0;
    if (!g->use_cudnn ||
        (!mica__conv_dnn_takes(opt) && !mica__cg_takes(opt))) {
        if (g->algo < 0 && !g->gtac)
            g->algo = MICA__CONV_DIRECT;
        return MICA_OK;
    }
    /* No tactic told: heuristics' first configuration of the graph API,
     * else the legacy algorithm cuDNN times quickest. */
    if (g->algo < 0 && !g->gtac &&
        mica__cg_tactics(opt, g->nhwc, g->epi, &g->gtac, 1) < 1)
        g->gtac = 0;
    if (g->gtac) {
        /* A plain tactic plans the convolution and bias alone. */
        int32_t epi = g->gtac & MICA__CG_PLAIN ? plain_epi(opt) : g->epi;
        int32_t cfg = MICA__CG_CONFIG(g->gtac);
        mica__cg_plan_t *p;
        int got = 0;
        /* The workspace of what runs at opt and at the largest shapes
         * (where the configuration is missing, heuristics' first). */
        if (mica__cg_plan(opt, g->nhwc, epi, cfg, WS_CAP, &p, &a, NULL) ==
            MICA_OK)
            got = 1;
        if (mica__cg_plan(hi, g->nhwc, epi, cfg, WS_CAP, &p, &b, NULL) ==
            MICA_OK)
            got = 1;
        g->ws = a > b ? a : b;
        if (got)
            return MICA_OK;
        /* cuDNN plans none of its configurations here: legacy. */
        g->gtac = 0;
    }
    if (!mica__conv_dnn_takes(opt)) {
        g->algo = MICA__CONV_DIRECT;
        return MICA_OK;
    }
    if (g->algo < 0 &&
        (st = mica__conv_dnn_choose(g->dnn, opt, g->nhwc, WS_CAP, &g->algo,
                                    err)) != MICA_OK)
        return st;
    if (g->algo == MICA__CONV_DIRECT)
        return MICA_OK;
    /* A shape the algorithm cannot run keeps no workspace: it runs
     * without (see mica__conv_gpu_run). */
    if (mica__conv_dnn_workspace(g->dnn, opt, g->nhwc, g->algo, &a, err) !=
        MICA_OK)
        a = 0;
    if (!mica__conv_dnn_takes(hi) ||
        mica__conv_dnn_workspace(g->dnn, hi, g->nhwc, g->algo, &b, err) !=
            MICA_OK)
        b = 0;
    g->ws = a > b ? a : b;
    return MICA_OK;
#else
    (void)hi; (void)err;
    g->opt = *opt;
    g->opt_set = 1;
    g->algo = MICA__CONV_DIRECT;
    g->ws = 0;
    return MICA_OK;
#endif
}

/* Host copy of w (count values) in `dtype`, in K(RS)C order with nhwc
 * ([A, B, k...] -> [A, k..., B]); NULL if memory runs out. */
static void *host_weights(const mica_weights_t *w, mica_dtype_t dtype,
                          int nhwc, int64_t a, int64_t b, int64_t kvol)
{
    size_t es = mica_dtype_size(dtype);
    unsigned char *h = malloc((size_t)(w->count ? w->count : 1) * es);
    int64_t i, j, k;

    if (!h)
        return NULL;
    for (i = 0; i < a; i++)
        for (j = 0; j < b; j++)
            for (k = 0; k < kvol; k++) {
                int64_t from = (i * b + j) * kvol + k;
                int64_t to = nhwc ? (i * kvol + k) * b + j : from;
                mica__nn_put(h, dtype, to, mica__conv_weight(w, from));
            }
    return h;
}

/* Upload w into *dev (allocated). */
static mica_status_t upload(void **dev, const mica_weights_t *w,
                            mica_dtype_t dtype, int nhwc, int64_t a,
                            int64_t b, int64_t kvol, mica_error_t *err)
{
    size_t bytes = (size_t)(w->count ? w->count : 1) * mica_dtype_size(dtype);
    void *h = host_weights(w, dtype, nhwc, a, b, kvol);
    cudaError_t e;

    if (!h) {
        mica_kit_host->set_error(err, "out of host memory");
        return MICA_ERR_NOMEM;
    }
    e = cudaMalloc(dev, bytes);
    if (e == cudaSuccess)
        e = cudaMemcpy(*dev, h, bytes, cudaMemcpyHostToDevice);
    free(h);
    MICA_KIT_CUDA_CHECK(e);
    return MICA_OK;
}

mica_status_t mica__conv_gpu_init(mica__conv_gpu_t *g,
                                  const mica__conv_params_t *p,
                                  mica_dtype_t dtype, mica_error_t *err)
{
    int64_t a, b;
    mica_status_t st;

    if (g->w && g->wtype == dtype && g->wnhwc == g->nhwc)
        return MICA_OK;
    if (g->w)
        cudaFree(g->w);
    if (g->b)
        cudaFree(g->b);
    g->w = g->b = NULL;
    /* Convolution [M, C/G, k...], Deconvolution [C, M/G, k...]. */
    a = p->deconv ? p->c : p->m;
    b = p->deconv ? p->m / p->groups : p->c / p->groups;
    if ((st = upload(&g->w, p->kernel, dtype, g->nhwc, a, b, p->kvol,
                     err)) != MICA_OK)
        return st;
    if (p->bias &&
        (st = upload(&g->b, p->bias, dtype, 0, 1, p->m, 1, err)) != MICA_OK)
        return st;
    g->wtype = dtype;
    g->wnhwc = g->nhwc;
    return MICA_OK;
}

#ifdef MICA_HAVE_CUDNN
/* Whether pb has the sizes of key (the params are the layer's). */
static int same_sizes(const mica__conv_problem_t *k,
                      const mica__conv_problem_t *pb)
{
    return k->dtype == pb->dtype && k->n == pb->n && k->c == pb->c &&
           memcmp(k->in, pb->in, sizeof pb->in) == 0;
}

/* Whether pb has run_key's sizes, and workspace as it had. */
static int same_problem(const mica__conv_gpu_t *g,
                        const mica__conv_problem_t *pb, int with_ws)
{
    return g->run_set && g->run_with_ws == with_ws &&
           same_sizes(&g->run_key, pb);
}

/* Work out what runs pb (see mica__conv_gpu_run) into the run cache. */
static void decide(mica__conv_gpu_t *g, const mica__conv_problem_t *pb,
                   int have_workspace, mica_error_t *err)
{
    int32_t algo = g->algo;
    size_t need = 0;

    g->run_plan = NULL;
    /* The graph API: conv (+ bias), the layer's configuration where
     * that is the layer's whole epilogue, else heuristics' first. */
    if (g->use_cudnn && g->gtac && mica__cg_takes(pb)) {
        int32_t epi = plain_epi(pb);
        /* The tactic's configuration where it is one of this graph's (a
         * plain tactic, or a layer whose epilogue is the bias alone),
         * else heuristics' first. */
        int32_t cfg = g->gtac & MICA__CG_PLAIN || epi == g->epi
                          ? MICA__CG_CONFIG(g->gtac) : 0;
        if (mica__cg_plan(pb, g->nhwc, epi, cfg, have_workspace ? g->ws : 0,
                          &g->run_plan, &need, NULL) != MICA_OK)
            g->run_plan = NULL;
    }
    if (g->run_plan) {
        algo = MICA__CONV_DIRECT; /* unused */
    } else if (!g->use_cudnn || algo == MICA__CONV_DIRECT ||
               !mica__conv_dnn_takes(pb)) {
        algo = MICA__CONV_DIRECT;
    } else if (algo < 0 ||
               mica__conv_dnn_workspace(g->dnn, pb, g->nhwc, algo, &need,
                                        err) != MICA_OK ||
               need > g->ws || (need && !have_workspace)) {
        algo = mica__conv_dnn_plain_algo(pb);
        if (mica__conv_dnn_workspace(g->dnn, pb, g->nhwc, algo, &need,
                                     err) != MICA_OK ||
            need > 0)
            algo = MICA__CONV_DIRECT;
    }
    g->run_key = *pb;
    g->run_algo = algo;
    g->run_need = g->run_plan || algo != MICA__CONV_DIRECT ? need : 0;
    g->run_with_ws = have_workspace;
    g->run_set = 1;
}
#endif

mica_status_t mica__conv_gpu_run(mica__conv_gpu_t *g,
                                 const mica__conv_problem_t *pb,
                                 const void *x, void *y, void *workspace,
                                 void *stream, mica_error_t *err)
{
#ifdef MICA_HAVE_CUDNN
    int again;

    for (again = 0; again < 2; again++) {
        mica_status_t st;
        if (!same_problem(g, pb, workspace != NULL))
            decide(g, pb, workspace != NULL, err);
        if (!g->run_plan)
            break;
        if (!mica__cg_aligned(x) || !mica__cg_aligned(y))
            break; /* the legacy API below, unaligned */
        st = mica__cg_run(g->run_plan, x, g->w, g->b, NULL, NULL, y,
                          g->run_need ? workspace : NULL, stream, err);
        if (st != MICA_ERR_UNSUPPORTED)
            return st;
        g->run_set = 0; /* another thread's plan: plan again */
    }
    if (g->run_plan) {
        /* Unaligned pointers: the legacy API's algorithm that needs no
         * workspace, else the kernel. */
        size_t need = 0;
        int32_t algo = mica__conv_dnn_plain_algo(pb);
        if (mica__conv_dnn_takes(pb) &&
            mica__conv_dnn_workspace(g->dnn, pb, g->nhwc, algo, &need,
                                     err) == MICA_OK &&
            need == 0)
            return mica__conv_dnn_run(g->dnn, pb, g->nhwc, algo, x, g->w,
                                      g->b, y, NULL, 0, stream, err);
    } else if (g->run_algo != MICA__CONV_DIRECT) {
        return mica__conv_dnn_run(g->dnn, pb, g->nhwc, g->run_algo, x, g->w,
                                  g->b, y, g->run_need ? workspace : NULL,
                                  g->run_need, stream, err);
    }
#else
    (void)workspace;
#endif
    return mica__conv_cuda(pb, g->nhwc, x, g->w, g->b, y, stream, err);
}

#ifdef MICA_HAVE_CUDNN
int32_t mica__conv_gpu_cudnn(mica__conv_gpu_t *g,
                             const mica__conv_problem_t *pb,
                             int have_workspace, mica__conv_dnn_t **dnn,
                             const void **w, const void **b, size_t *ws,
                             int *nhwc, mica_error_t *err)
{
    if (!same_problem(g, pb, have_workspace))
        decide(g, pb, have_workspace, err);
    *dnn = g->dnn;
    *w = g->w;
    *b = g->b;
    *ws = g->run_need;
    *nhwc = g->nhwc;
    /* A graph plan runs the convolution: nothing for the legacy fused
     * engine to do. */
    return g->run_plan ? MICA__CONV_DIRECT : g->run_algo;
}

mica_status_t mica__conv_gpu_run_epilogue(mica__conv_gpu_t *g,
                                          const mica__conv_problem_t *pb,
                                          const void *x, const void *a,
                                          const void *z, void *y,
                                          void *workspace, void *stream,
                                          int *done, mica_error_t *err)
{
    int again;

    *done = 0;
    if (!g->use_cudnn || !g->gtac || (g->gtac & MICA__CG_PLAIN) ||
        !mica__cg_takes(pb) ||
        !(g->epi & (MICA__CG_A | MICA__CG_Z | MICA__CG_RELU)) ||
        ((g->epi & MICA__CG_Z) != 0) != (z != NULL) ||
        ((g->epi & MICA__CG_A) != 0) != (a != NULL) ||
        !mica__cg_aligned(x) || !mica__cg_aligned(y) ||
        (z && !mica__cg_aligned(z)) || (a && !mica__cg_aligned(a)))
        return MICA_OK;
    for (again = 0; again < 2; again++) {
        mica_status_t st;
        if (!g->fused_set || g->fused_with_ws != (workspace != NULL) ||
            !same_sizes(&g->fused_key, pb)) {
            if (mica__cg_plan(pb, g->nhwc, g->epi, g->gtac,
                              workspace ? g->ws : 0, &g->fused_plan,
                              &g->fused_need, NULL) != MICA_OK)
                g->fused_plan = NULL;
            g->fused_key = *pb;
            g->fused_with_ws = workspace != NULL;
            g->fused_set = 1;
        }
        if (!g->fused_plan)
            return MICA_OK;
        st = mica__cg_run(g->fused_plan, x, g->w, g->b, a, z, y,
                          g->fused_need ? workspace : NULL, stream, err);
        if (st != MICA_ERR_UNSUPPORTED) {
            *done = st == MICA_OK;
            return st;
        }
        g->fused_set = 0; /* another thread's plan: plan again */
    }
    return MICA_OK;
}
#endif
