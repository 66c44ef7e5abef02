/*
 * modules/convolution/conv_cudnn.c - Convolution and Deconvolution
 * through cuDNN's legacy API (implementation "cudnn"), reached through
 * the kit's lazily opened table (kit_cudnn.h).
 *
 * Convolution is cudnnConvolutionForward; Deconvolution is the transpose,
 * cudnnConvolutionBackwardData with our input as dy and our output as dx:
 * its filter [K, C/G, k...] of the forward convolution from dx (M
 * channels) to dy (C channels) is exactly Deconvolution's kernel [C, M/G,
 * k...].  The bias is cudnnAddTensor after either.  2D problems use 4D
 * descriptors, 3D ones 5D.  float32 computes with CUDNN_FMA_MATH (no
 * TF32); float16 data with float32 accumulation (CUDNN_DATA_FLOAT compute
 * type) and CUDNN_TENSOR_OP_MATH: tensor cores.  Descriptors are set
 * again only when the problem changes.
 */
#include <config.h>

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "kit_cudnn.h"

struct mica__conv_dnn {
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    int set;                  /* descriptors hold `key` */
    mica__conv_problem_t key; /* the problem they describe (p ignored) */
    int key_nhwc;
};

mica__conv_dnn_t *mica__conv_dnn_new(void)
{
    return calloc(1, sizeof(mica__conv_dnn_t));
}

void mica__conv_dnn_free(mica__conv_dnn_t *d)
{
    if (!d)
        return;
    /* Descriptors exist only once cuDNN was opened (see describe). */
    if (d->x)
        mica__cudnn.destroy_tensor(d->x);
    if (d->y)
        mica__cudnn.destroy_tensor(d->y);
    if (d->b)
        mica__cudnn.destroy_tensor(d->b);
    if (d->w)
        mica__cudnn.destroy_filter(d->w);
    if (d->conv)
        mica__cudnn.destroy_conv(d->conv);
    free(d);
}

int mica__conv_dnn_takes(const mica__conv_problem_t *pb)
{
    const mica__window_t *w = &pb->p->win;
    int64_t x[5], y[5];
    int i;

    for (i = 0; i < 3; i++)
        if (w->pre[i] != w->post[i] || pb->in[i] < 1 || pb->out[i] < 1)
            return 0;
    x[0] = y[0] = pb->n;
    x[1] = pb->c;
    y[1] = pb->m;
    for (i = 0; i < 3; i++) {
        x[2 + i] = pb->in[i];
        y[2 + i] = pb->out[i];
    }
    return pb->n > 0 && pb->c > 0 && mica__cudnn_fits(x, 5) &&
           mica__cudnn_fits(y, 5);
}

/* Set d's descriptors for pb (after cuDNN is open). */
static mica_status_t describe(mica__conv_dnn_t *d,
                              const mica__conv_problem_t *pb, int nhwc,
                              mica_error_t *err)
{
    const mica__conv_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    int nd = w->nd, n = nd + 2, i, pad[3], stride[3], dil[3], fd[5];
    int64_t xd[5], yd[5], bd[5];
    cudnnDataType_t t = mica__cudnn_dtype(pb->dtype);
    mica_status_t st = MICA_OK;

    if (d->set && d->key_nhwc == nhwc && d->key.dtype == pb->dtype &&
        d->key.n == pb->n && d->key.c == pb->c &&
        memcmp(d->key.in, pb->in, sizeof pb->in) == 0)
        return MICA_OK;
    d->set = 0;
    if (!d->x) {
        MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->x));
        MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->y));
        MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->b));
        MICA__CUDNN_TRY(mica__cudnn.create_filter(&d->w));
        MICA__CUDNN_TRY(mica__cudnn.create_conv(&d->conv));
    }
    xd[0] = yd[0] = pb->n;
    xd[1] = pb->c;
    yd[1] = pb->m;
    bd[0] = 1;
    bd[1] = pb->m;
    /* The filter: [M, C/G, k] forward, [C, M/G, k] backward data. */
    fd[0] = (int)(p->deconv ? pb->c : pb->m);
    fd[1] = (int)(p->deconv ? pb->m / p->groups : pb->c / p->groups);
    for (i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        xd[2 + i] = pb->in[j];
        yd[2 + i] = pb->out[j];
        bd[2 + i] = 1;
        fd[2 + i] = (int)w->k[j];
        pad[i] = (int)w->pre[j];
        stride[i] = (int)w->stride[j];
        dil[i] = (int)w->dil[j];
    }
    if ((st = mica__cudnn_tensor(d->x, pb->dtype, n, xd, nhwc, err)) !=
            MICA_OK ||
        (st = mica__cudnn_tensor(d->y, pb->dtype, n, yd, nhwc, err)) !=
            MICA_OK ||
        /* [1, M, 1...]: the same bytes either way; described as y is */
        (st = mica__cudnn_tensor(d->b, pb->dtype, n, bd, nhwc, err)) !=
            MICA_OK)
        goto fail;
    MICA__CUDNN_TRY(mica__cudnn.set_filter(
        d->w, t, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, n, fd));
    MICA__CUDNN_TRY(mica__cudnn.set_conv(d->conv, nd, pad, stride, dil,
                                         CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
    MICA__CUDNN_TRY(mica__cudnn.set_groups(d->conv, (int)p->groups));
    MICA__CUDNN_TRY(mica__cudnn.set_math(
        d->conv,
        pb->dtype == MICA_FLOAT16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    d->key = *pb;
    d->key_nhwc = nhwc;
    d->set = 1;
fail:
    return st;
}

/* ---- choosing the algorithm ------------------------------------------- */

/* What a choice depends on; zeroed before it is filled, so that memcmp
 * compares it. */
typedef struct choice_key {
    int32_t deconv, nhwc, device, nd, dtype, pad_;
    int64_t n, c, m, groups;
    int64_t in[3], k[3], stride[3], pre[3], dil[3];
} choice_key_t;

typedef struct choice {
    choice_key_t key;
    int32_t algo;
    struct choice *next;
} choice_t;

/* The process's choices, kept for its life (a few per distinct
 * convolution): a second layer, instance or build of the same problem
 * takes the first's. */
static pthread_mutex_t choices_lock = PTHREAD_MUTEX_INITIALIZER;
static choice_t *choices;

static void choice_key(const mica__conv_problem_t *pb, int nhwc,
                       choice_key_t *k)
{
    const mica__window_t *w = &pb->p->win;
    int i, dev = 0;

    memset(k, 0, sizeof *k);
    if (cudaGetDevice(&dev) != cudaSuccess)
        dev = -1;
    k->deconv = pb->p->deconv;
    k->nhwc = nhwc;
    k->device = dev;
    k->nd = w->nd;
    k->dtype = (int32_t)pb->dtype;
    k->n = pb->n;
    k->c = pb->c;
    k->m = pb->m;
    k->groups = pb->p->groups;
    for (i = 0; i < 3; i++) {
        k->in[i] = pb->in[i];
        k->k[i] = w->k[i];
        k->stride[i] = w->stride[i];
        k->pre[i] = w->pre[i];
        k->dil[i] = w->dil[i];
    }
}

static int choice_get(const choice_key_t *k, int32_t *algo)
{
    const choice_t *c;
    int found = 0;

    pthread_mutex_lock(&choices_lock);
    for (c = choices; c && !found; c = c->next)
        if (memcmp(&c->key, k, sizeof *k) == 0) {
            *algo = c->algo;
            found = 1;
        }
    pthread_mutex_unlock(&choices_lock);
    return found;
}

static void choice_put(const choice_key_t *k, int32_t algo)
{
    choice_t *c = malloc(sizeof *c);

    if (!c)
        return; /* not kept: chosen again next time */
    c->key = *k;
    c->algo = algo;
    pthread_mutex_lock(&choices_lock);
    c->next = choices;
    choices = c;
    pthread_mutex_unlock(&choices_lock);
}

/*
 * Whether the choice leaves algo out: the FFT algorithms.  Timed alone
 * they can come first, but in a network they cost more than they save:
 * on an H100 (bench/README.md, issue 10) ResNet-50 float16 at batch 1
 * took 4.9 ms per run, all of it host time, when one layer had picked
 * FFT_TILING (0.065 ms per call timed alone), against 2.8 ms without;
 * per-call plan work that repeating one layer hides is the likely cause,
 * not established.  Their float16 results are also the least accurate.
 */
static int left_out(int deconv, int32_t algo)
{
    if (!deconv)
        return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT ||
               algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING;
    return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
           algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING;
}

int mica__conv_dnn_known(int deconv, int32_t algo)
{
    int32_t count = deconv ? (int32_t)CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                           : (int32_t)CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    return algo >= 0 && algo < count && !left_out(deconv, algo);
}

/*
 * Heuristics' ranked list (cudnnGet..._v7) of the problem d describes,
 * less the algorithms left out and those needing more than ws_cap: the
 * first `max` into algos (*n of them), and in *most the most workspace
 * any of them wants.
 */
static mica_status_t heuristics(mica__conv_dnn_t *d, cudnnHandle_t h,
                                int deconv, size_t ws_cap, int32_t *algos,
                                int32_t max, int32_t *n_out, size_t *most,
                                mica_error_t *err)
{
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t
        bwd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    mica_status_t st = MICA_OK;
    int n = 0, i;

    *most = 0;
    *n_out = 0;
    if (!deconv)
        MICA__CUDNN_TRY(mica__cudnn.fwd_algos(
            h, d->x, d->w, d->conv, d->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
            &n, fwd));
    else
        MICA__CUDNN_TRY(mica__cudnn.bwd_algos(
            h, d->w, d->x, d->conv, d->y,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, bwd));
    for (i = 0; i < n && *n_out < max; i++) {
        cudnnStatus_t s = deconv ? bwd[i].status : fwd[i].status;
        size_t mem = deconv ? bwd[i].memory : fwd[i].memory;
        int32_t a = deconv ? (int32_t)bwd[i].algo : (int32_t)fwd[i].algo;
        if (s != CUDNN_STATUS_SUCCESS || mem > ws_cap ||
            left_out(deconv, a))
            continue;
        algos[(*n_out)++] = a;
        if (mem > *most)
            *most = mem;
    }
fail:
    return st;
}

int32_t mica__conv_dnn_algos(mica__conv_dnn_t *d,
                             const mica__conv_problem_t *pb, int nhwc,
                             size_t ws_cap, int32_t *algos, int32_t max)
{
    cudnnHandle_t h;
    size_t most;
    int32_t n = 0;

    /* No error slot: a failure is a shorter list (none). */
    if (mica__cudnn_handle(&h, NULL, NULL) != MICA_OK ||
        describe(d, pb, nhwc, NULL) != MICA_OK ||
        heuristics(d, h, pb->p->deconv, ws_cap, algos, max, &n, &most,
                   NULL) != MICA_OK)
        return 0;
    return n;
}

/* One result of Find: the algorithm, its GPU time (ms), its workspace. */
typedef struct cand {
    int32_t algo;
    float time;
    size_t memory;
} cand_t;

/* Add Find's result to the k candidates in c if it ran and is not left
 * out; the new count. */
static int candidate(cand_t *c, int k, int deconv, int32_t algo,
                     cudnnStatus_t status, float time, size_t memory)
{
    if (status != CUDNN_STATUS_SUCCESS || time < 0 ||
        left_out(deconv, algo))
        return k;
    c[k].algo = algo;
    c[k].time = time;
    c[k].memory = memory;
    return k + 1;
}

/* Among n candidates, the quickest, or within 3% of it the one that
 * needs least workspace; -1 if there is none. */
static int32_t pick(const cand_t *c, int n)
{
    int i, best = -1, chosen;

    for (i = 0; i < n; i++)
        if (best < 0 || c[i].time < c[best].time)
            best = i;
    if (best < 0)
        return -1;
    chosen = best;
    for (i = 0; i < n; i++)
        if (c[i].time <= c[best].time * 1.03f &&
            c[i].memory < c[chosen].memory)
            chosen = i;
    return c[chosen].algo;
}

/*
 * Time cuDNN's algorithms on pb (cudnnFind...Ex) on scratch buffers of
 * pb's sizes holding noise (never zeros, which can run faster), with
 * `ws` bytes of workspace, on the legacy default stream (the handle's):
 * *algo the quickest (see pick), unchanged when none ran.  Memory that
 * cannot be had is MICA_ERR_NOMEM, the CUDA error cleared.
 */
static mica_status_t timed(mica__conv_dnn_t *d, cudnnHandle_t h,
                           const mica__conv_problem_t *pb, size_t ws,
                           int32_t *algo, mica_error_t *err)
{
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t
        bwd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cand_t c[CUDNN_CONVOLUTION_FWD_ALGO_COUNT +
             CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    const mica__conv_params_t *p = pb->p;
    size_t es = mica_dtype_size(pb->dtype);
    int64_t xn = pb->n * pb->c, yn = pb->n * pb->m, wn;
    void *x = NULL, *w = NULL, *y = NULL, *space = NULL;
    mica_status_t st = MICA_OK;
    int n = 0, i, k = 0;
    int32_t got;

    for (i = 0; i < 3; i++) {
        xn *= pb->in[i];
        yn *= pb->out[i];
    }
    /* [M, C/G, k] forward, [C, M/G, k] backward data. */
    wn = (p->deconv ? pb->c * (pb->m / p->groups)
                    : pb->m * (pb->c / p->groups)) * p->kvol;
    if (cudaMalloc(&x, (size_t)xn * es) != cudaSuccess ||
        cudaMalloc(&w, (size_t)wn * es) != cudaSuccess ||
        cudaMalloc(&y, (size_t)yn * es) != cudaSuccess ||
        (ws && cudaMalloc(&space, ws) != cudaSuccess)) {
        (void)cudaGetLastError();
        mica_kit_host->set_error(err, "no device memory to time cuDNN's "
                                 "algorithms");
        st = MICA_ERR_NOMEM;
        goto fail;
    }
    if ((st = mica__conv_cuda_fill(x, xn, pb->dtype, NULL, err)) !=
            MICA_OK ||
        (st = mica__conv_cuda_fill(w, wn, pb->dtype, NULL, err)) != MICA_OK)
        goto fail;
    if (!p->deconv) {
        MICA__CUDNN_TRY(mica__cudnn.fwd_find(
            h, d->x, x, d->w, w, d->conv, d->y, y,
            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, fwd, space, ws));
        for (i = 0; i < n; i++)
            k = candidate(c, k, 0, (int32_t)fwd[i].algo, fwd[i].status,
                          fwd[i].time, fwd[i].memory);
    } else {
        /* Our input is cuDNN's dy, our output its dx. */
        MICA__CUDNN_TRY(mica__cudnn.bwd_find(
            h, d->w, w, d->x, x, d->conv, d->y, y,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, bwd, space, ws));
        for (i = 0; i < n; i++)
            k = candidate(c, k, 1, (int32_t)bwd[i].algo, bwd[i].status,
                          bwd[i].time, bwd[i].memory);
    }
    if ((got = pick(c, k)) >= 0)
        *algo = got;
fail:
    /* Errors of cudaFree are those of earlier calls: nothing to do. */
    cudaFree(x);
    cudaFree(w);
    cudaFree(y);
    cudaFree(space);
    return st;
}

mica_status_t mica__conv_dnn_choose(mica__conv_dnn_t *d,
                                    const mica__conv_problem_t *pb, int nhwc,
                                    size_t ws_cap, int32_t *algo,
                                    mica_error_t *err)
{
    int32_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT +
                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT],
        n = 0;
    choice_key_t key;
    cudnnHandle_t h;
    mica_status_t st;
    size_t most = 0;

    choice_key(pb, nhwc, &key);
    if (choice_get(&key, algo))
        return MICA_OK;
    if ((st = mica__cudnn_handle(&h, NULL, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK)
        return st;
    *algo = MICA__CONV_DIRECT; /* when no cuDNN algorithm will do */
    if ((st = heuristics(d, h, pb->p->deconv, ws_cap, ranked,
                         MICA_KIT_COUNT(ranked), &n, &most, err)) != MICA_OK)
        return st;
    if (n > 0)
        *algo = ranked[0];
    /* Timed where it can be (memory), else heuristics' choice stands:
     * timing only improves on it. */
    if (*algo != MICA__CONV_DIRECT)
        (void)timed(d, h, pb, most, algo, err);
    choice_put(&key, *algo);
    return MICA_OK;
}

mica_status_t mica__conv_dnn_workspace(mica__conv_dnn_t *d,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, int32_t algo, size_t *bytes,
                                       mica_error_t *err)
{
    cudnnHandle_t h;
    mica_status_t st;

    *bytes = 0;
    if ((st = mica__cudnn_handle(&h, NULL, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK)
        return st;
    if (!pb->p->deconv)
        MICA__CUDNN_TRY(mica__cudnn.fwd_workspace(
            h, d->x, d->w, d->conv, d->y, (cudnnConvolutionFwdAlgo_t)algo,
            bytes));
    else
        MICA__CUDNN_TRY(mica__cudnn.bwd_workspace(
            h, d->w, d->x, d->conv, d->y,
            (cudnnConvolutionBwdDataAlgo_t)algo, bytes));
fail:
    if (st != MICA_OK)
        st = MICA_ERR_UNSUPPORTED;
    return st;
}

int32_t mica__conv_dnn_plain_algo(const mica__conv_problem_t *pb)
{
    return pb->p->deconv ? (int32_t)CUDNN_CONVOLUTION_BWD_DATA_ALGO_0
                         : (int32_t)CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
}

mica_status_t mica__conv_dnn_run(mica__conv_dnn_t *d,
                                 const mica__conv_problem_t *pb, int nhwc,
                                 int32_t algo, const void *x, const void *w,
                                 const void *bias, void *y, void *workspace,
                                 size_t ws_bytes, void *stream,
                                 mica_error_t *err)
{
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h;
    mica_status_t st;

    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK)
        return st;
    if (!pb->p->deconv)
        MICA__CUDNN_TRY(mica__cudnn.fwd(h, &one, d->x, x, d->w, w, d->conv,
                                        (cudnnConvolutionFwdAlgo_t)algo,
                                        workspace, ws_bytes, &zero, d->y, y));
    else
        MICA__CUDNN_TRY(mica__cudnn.bwd(h, &one, d->w, w, d->x, x, d->conv,
                                        (cudnnConvolutionBwdDataAlgo_t)algo,
                                        workspace, ws_bytes, &zero, d->y, y));
    if (bias)
        MICA__CUDNN_TRY(
            mica__cudnn.add_tensor(h, &one, d->b, bias, &one, d->y, y));
fail:
    return st;
}

/* ---- FusedConvolution: cuDNN's fused engine ------------------------------ */

/* The activation descriptors of the fused call, made once per process
 * (read-only once set): [0] identity, [1] ReLU (NaN propagated, as
 * Activation's relu keeps NaN). */
static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;
static cudnnActivationDescriptor_t acts[2];

static mica_status_t act_desc(int relu, cudnnActivationDescriptor_t *out,
                              mica_error_t *err)
{
    cudnnActivationDescriptor_t a = NULL;
    mica_status_t st = MICA_OK;

    pthread_mutex_lock(&act_lock);
    if (!acts[relu]) {
        MICA__CUDNN_TRY(mica__cudnn.create_act(&a));
        MICA__CUDNN_TRY(mica__cudnn.set_act(
            a, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
            CUDNN_PROPAGATE_NAN, 0.0));
        acts[relu] = a;
        a = NULL;
    }
    *out = acts[relu];
fail:
    if (a)
        mica__cudnn.destroy_act(a);
    pthread_mutex_unlock(&act_lock);
    return st;
}

/* Whether status s says cuDNN does not take the call (a refusal before
 * any work), not that running it failed. */
static int refused(cudnnStatus_t s)
{
#if CUDNN_MAJOR >= 9
    return (int)s / 1000 == CUDNN_STATUS_BAD_PARAM / 1000 ||
           (int)s / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000;
#else
    return s == CUDNN_STATUS_BAD_PARAM || s == CUDNN_STATUS_NOT_SUPPORTED;
#endif
}

mica_status_t mica__conv_dnn_run_fused(mica__conv_dnn_t *d,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, int32_t algo, const void *x,
                                       const void *w, const void *bias,
                                       const void *z, int relu, void *y,
                                       void *workspace, size_t ws_bytes,
                                       void *stream, mica_error_t *err)
{
    const float one = 1.0f, zero = 0.0f;
    cudnnActivationDescriptor_t act;
    cudnnHandle_t h;
    cudnnStatus_t s;
    mica_status_t st;

    /* cuDNN's documented limits: a bias; identity only with implicit
     * precomp GEMM. */
    if (pb->p->deconv || !bias ||
        (!relu && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM))
        return MICA_ERR_UNSUPPORTED;
    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK ||
        (st = act_desc(relu != 0, &act, err)) != MICA_OK)
        return st;
    /* Without z: alpha2 0, and z is y (which cuDNN allows). */
    s = mica__cudnn.fwd_bias_act(h, &one, d->x, x, d->w, w, d->conv,
                                 (cudnnConvolutionFwdAlgo_t)algo, workspace,
                                 ws_bytes, z ? &one : &zero, d->y,
                                 z ? z : y, d->b, bias, act, d->y, y);
    if (refused(s))
        return MICA_ERR_UNSUPPORTED;
    if (s != CUDNN_STATUS_SUCCESS) {
        mica_kit_host->set_error(err, "cudnnConvolutionBiasActivationForward "
                                 "failed: %s (%s:%d)",
                                 mica__cudnn.error_string(s), __FILE__,
                                 __LINE__);
        return MICA_ERR_DEVICE;
    }
    return MICA_OK;
}
