/*
 * modules/convolution/conv_graph.c - Convolution, and a FusedConvolution
 * with its epilogue, through cuDNN's graph (backend) API from C
 * (cudnnBackend* functions of the kit's lazily opened table, kit_cudnn.h):
 * one operation graph per problem, convolution then pointwise additions
 * of the bias and of an addend z and a ReLU, all fused where an engine
 * takes them (cuDNN's runtime-fusion engines and its precompiled fused
 * ones); heuristics' engine configurations are the layer's tactics,
 * which autotune times at build time.
 *
 * Why (issue 21): the legacy API reaches only its eight algorithms, and
 * cudnnConvolutionBiasActivationForward fuses only with one of them, so
 * that at batch 1 every FusedConvolution ran kernels sized for large
 * batches; the engines behind the graph API include split-K and small
 * tiles, and fuse the epilogue into the convolution's kernel.
 *
 * A tactic names one engine configuration: MICA__CG_TACTIC_BASE, the
 * engine's global index (bits 16..28) and a 16-bit hash of its knob
 * choices (bits 0..15), stable for a cuDNN version and GPU (bit 29 is
 * MICA__CG_PLAIN's, conv.h).  Plans are
 * finalized on first use and kept for the process per (cuDNN handle,
 * problem, epilogue): a handle belongs to one thread and device
 * (kit_handles.h), so one plan is never used by two threads at once.
 * Float32 problems leave out the engines that compute in TF32 (the
 * legacy path's CUDNN_FMA_MATH), every problem those that convert
 * inputs down, reduce in lower precision or use FFT (as the legacy
 * choice leaves FFT out).
 */
#include <config.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "kit_cudnn.h"

#define CG_MAX 24          /* configurations kept per problem */
#define CG_ALIGN 16        /* byte alignment the graph assumes */

enum {
    UID_X = 1,
    UID_W = 2,
    UID_B = 3,
    UID_Z = 4,
    UID_Y = 5,
    UID_A = 6,
    UID_V = 100
};

/* What a graph depends on; zeroed before it is filled (memcmp). */
typedef struct cg_key {
    int32_t nhwc, nd, dtype, epi, device, pad_;
    int64_t n, c, m, groups;
    int64_t in[3], out[3], k[3], stride[3], pre[3], post[3], dil[3];
} cg_key_t;

struct mica__cg_plan {
    cudnnBackendDescriptor_t plan;
    int64_t ws;
    int32_t epi, tactic;
    cudnnHandle_t h;
    /* The last variant pack and what it holds. */
    cudnnBackendDescriptor_t vp;
    const void *vp_ptr[6];
    void *vp_ws;
};

/* One problem's graph on one handle: heuristics' configurations and
 * their plans, made as asked. */
typedef struct cg_entry {
    cg_key_t key;
    cudnnHandle_t h;
    int made;                  /* 1: graph and heuristics done */
    cudnnBackendDescriptor_t descs[24]; /* tensors, ops: kept alive */
    int32_t nb_descs;
    cudnnBackendDescriptor_t graph; /* NULL: cuDNN has no graph for it */
    int32_t n;
    cudnnBackendDescriptor_t cfg[CG_MAX];
    int32_t tac[CG_MAX];
    int8_t state[CG_MAX];      /* 0 untried, 1 plan made, -1 refused */
    mica__cg_plan_t plan[CG_MAX];
    struct cg_entry *next;
} cg_entry_t;

static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_entry_t *cg_entries;

/* ---- small helpers ------------------------------------------------------ */

/* The calling thread's last refusal by cuDNN, for the debug log of a
 * problem without configurations. */
static _Thread_local char cg_fail[160];

static void failed(const char *what, int64_t attr, cudnnStatus_t s)
{
    snprintf(cg_fail, sizeof cg_fail, "%s%s%lld: %s", what,
             attr >= 0 ? " of attribute " : "", attr >= 0 ? (long long)attr
                                                          : 0LL,
             mica__cudnn.error_string(s));
}

/* Set one attribute; 0 on success. */
static int set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
               cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
    cudnnStatus_t s = mica__cudnn.be_set(d, a, t, n, (void *)v);
    if (s != CUDNN_STATUS_SUCCESS)
        failed("cudnnBackendSetAttribute", (int64_t)a, s);
    return s != CUDNN_STATUS_SUCCESS;
}

/* Finalize d (a `what`); 0 on success. */
static int fin(cudnnBackendDescriptor_t d, const char *what)
{
    cudnnStatus_t s = mica__cudnn.be_finalize(d);
    if (s != CUDNN_STATUS_SUCCESS)
        failed(what, -1, s);
    return s != CUDNN_STATUS_SUCCESS;
}

/* Make a descriptor of type t into e's list (kept until the process
 * ends); NULL when cuDNN refuses. */
static cudnnBackendDescriptor_t make(cg_entry_t *e,
                                     cudnnBackendDescriptorType_t t)
{
    cudnnBackendDescriptor_t d = NULL;
    if (e->nb_descs >= (int32_t)MICA_KIT_COUNT(e->descs) ||
        mica__cudnn.be_create(t, &d) != CUDNN_STATUS_SUCCESS)
        return NULL;
    e->descs[e->nb_descs++] = d;
    return d;
}

/* A tensor of `dims` (NC(D)HW order, nd + 2 of them) laid out channels
 * first, or channels last with nhwc; virtual ones are float. */
static cudnnBackendDescriptor_t tensor(cg_entry_t *e, int64_t uid,
                                       cudnnDataType_t type, int n,
                                       const int64_t *dims, int nhwc,
                                       int virt)
{
    cudnnBackendDescriptor_t d = make(e, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t stride[5], align = CG_ALIGN;
    bool is_virtual = virt != 0;
    int i;

    if (!d)
        return NULL;
    if (!nhwc) {
        for (i = n - 1; i >= 0; i--)
            stride[i] = i == n - 1 ? 1 : stride[i + 1] * dims[i + 1];
    } else {
        stride[1] = 1;
        for (i = n - 1; i >= 2; i--)
            stride[i] = i == n - 1 ? dims[1] : stride[i + 1] * dims[i + 1];
        stride[0] = stride[2] * dims[2];
    }
    if (set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type) ||
        set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, dims) ||
        set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, stride) ||
        set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) ||
        set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
            &align) ||
        set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
            &is_virtual) ||
        fin(d, "cudnnBackendFinalize of a tensor"))
        return NULL;
    return d;
}

/* A pointwise operation y = mode(x[, b]) in float. */
static cudnnBackendDescriptor_t pointwise(cg_entry_t *e,
                                          cudnnPointwiseMode_t mode,
                                          cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t b,
                                          cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pw = make(e, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnBackendDescriptor_t op;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;

    if (!pw || !x || !y ||
        set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1,
            &mode) ||
        set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1,
            &prec) ||
        fin(pw, "cudnnBackendFinalize of a pointwise descriptor"))
        return NULL;
    op = make(e, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    if (!op ||
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw) ||
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x) ||
        (b && set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b)) ||
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y) ||
        fin(op, "cudnnBackendFinalize of a pointwise operation"))
        return NULL;
    return op;
}

/* ---- the graph and heuristics ------------------------------------------ */

static void key_of(const mica__conv_problem_t *pb, int nhwc, int32_t epi,
                   int device, cg_key_t *k)
{
    const mica__window_t *w = &pb->p->win;
    int i;

    memset(k, 0, sizeof *k);
    k->nhwc = nhwc != 0;
    k->nd = w->nd;
    k->dtype = (int32_t)pb->dtype;
    k->epi = epi;
    k->device = device;
    k->n = pb->n;
    k->c = pb->c;
    k->m = pb->m;
    k->groups = pb->p->groups;
    for (i = 0; i < 3; i++) {
        k->in[i] = pb->in[i];
        k->out[i] = pb->out[i];
        k->k[i] = w->k[i];
        k->stride[i] = w->stride[i];
        k->pre[i] = w->pre[i];
        k->post[i] = w->post[i];
        k->dil[i] = w->dil[i];
    }
}

/* The operation graph of e->key on e->h into e->graph (left NULL where
 * cuDNN refuses a piece of it): the convolution, then pointwise adds of
 * the bias, the per-map addend and the full addend, then the ReLU, as
 * e->key.epi says. */
static void build_graph(cg_entry_t *e)
{
    const cg_key_t *k = &e->key;
    int nd = k->nd, n = nd + 2, i, nops = 0, uid = UID_V;
    int64_t xd[5], wd[5], yd[5], bd[5], pad0[3], pad1[3], st[3], dil[3];
    int64_t snd = nd;
    cudnnDataType_t t = k->dtype == MICA_FLOAT16 ? CUDNN_DATA_HALF
                                                 : CUDNN_DATA_FLOAT;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnBackendDescriptor_t x, w, y, conv, op, ops[5], cur, b, z, next;
    float one = 1.0f, zero = 0.0f;
    int last;

    xd[0] = yd[0] = k->n;
    xd[1] = k->c;
    yd[1] = wd[0] = k->m;
    wd[1] = k->c / k->groups;
    bd[0] = 1;
    bd[1] = k->m;
    for (i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        xd[2 + i] = k->in[j];
        yd[2 + i] = k->out[j];
        wd[2 + i] = k->k[j];
        bd[2 + i] = 1;
        pad0[i] = k->pre[j];
        pad1[i] = k->post[j];
        st[i] = k->stride[j];
        dil[i] = k->dil[j];
    }
    last = !(k->epi &
             (MICA__CG_BIAS | MICA__CG_A | MICA__CG_Z | MICA__CG_RELU));
    x = tensor(e, UID_X, t, n, xd, k->nhwc, 0);
    w = tensor(e, UID_W, t, n, wd, k->nhwc, 0);
    y = tensor(e, last ? UID_Y : uid++, last ? t : CUDNN_DATA_FLOAT, n, yd,
               k->nhwc, !last);
    conv = make(e, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    if (!x || !w || !y || !conv ||
        set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
            &comp) ||
        set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
            CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) ||
        set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
            &snd) ||
        set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nd,
            pad0) ||
        set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nd,
            pad1) ||
        set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
            nd, st) ||
        set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nd,
            dil) ||
        fin(conv, "cudnnBackendFinalize of the convolution descriptor"))
        return;
    op = make(e, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    if (!op ||
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x) ||
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w) ||
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y) ||
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv) ||
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
            CUDNN_TYPE_FLOAT, 1, &one) ||
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
            CUDNN_TYPE_FLOAT, 1, &zero) ||
        fin(op, "cudnnBackendFinalize of the convolution operation"))
        return;
    ops[nops++] = op;
    cur = y;
    /* The epilogue: + bias, + a, + z, relu; the last op writes y. */
    if (k->epi & MICA__CG_BIAS) {
        last = !(k->epi & (MICA__CG_A | MICA__CG_Z | MICA__CG_RELU));
        b = tensor(e, UID_B, t, n, bd, k->nhwc, 0);
        next = tensor(e, last ? UID_Y : uid++, last ? t : CUDNN_DATA_FLOAT,
                      n, yd, k->nhwc, !last);
        if (!(ops[nops++] = pointwise(e, CUDNN_POINTWISE_ADD, cur, b, next)))
            return;
        cur = next;
    }
    if (k->epi & MICA__CG_A) {
        last = !(k->epi & (MICA__CG_Z | MICA__CG_RELU));
        b = tensor(e, UID_A, t, n, bd, k->nhwc, 0);
        next = tensor(e, last ? UID_Y : uid++, last ? t : CUDNN_DATA_FLOAT,
                      n, yd, k->nhwc, !last);
        if (!(ops[nops++] = pointwise(e, CUDNN_POINTWISE_ADD, cur, b, next)))
            return;
        cur = next;
    }
    if (k->epi & MICA__CG_Z) {
        last = !(k->epi & MICA__CG_RELU);
        z = tensor(e, UID_Z, t, n, yd, k->nhwc, 0);
        next = tensor(e, last ? UID_Y : uid++, last ? t : CUDNN_DATA_FLOAT,
                      n, yd, k->nhwc, !last);
        if (!(ops[nops++] = pointwise(e, CUDNN_POINTWISE_ADD, cur, z, next)))
            return;
        cur = next;
    }
    if (k->epi & MICA__CG_RELU) {
        next = tensor(e, UID_Y, t, n, yd, k->nhwc, 0);
        if (!(ops[nops++] = pointwise(e, CUDNN_POINTWISE_RELU_FWD, cur, NULL,
                                      next)))
            return;
    }
    e->graph = make(e, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (e->graph &&
        (set(e->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, nops, ops) ||
         set(e->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
             &e->h) ||
         fin(e->graph, "cudnnBackendFinalize of the operation graph")))
        e->graph = NULL;
}

/* FNV-1a of the 64-bit words of v. */
static uint32_t hash_words(const int64_t *v, int n)
{
    uint32_t h = 2166136261u;
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < 8; j++)
            h = (h ^ (uint32_t)((uint64_t)v[i] >> (8 * j) & 0xff)) *
                16777619u;
    return h;
}

/*
 * The tactic id of configuration cfg, or 0 where it is to be left out
 * (its numerical notes, see the file's comment) or cannot be read.
 */
static int32_t tactic_of(cudnnBackendDescriptor_t cfg, int32_t dtype)
{
    cudnnBackendDescriptor_t eng = NULL, knobs[64];
    cudnnBackendNumericalNote_t notes[32];
    int64_t index = -1, n = 0, kv[2 * 64];
    int32_t tac = 0, i, nk = 0;

    memset(knobs, 0, sizeof knobs);
    if (mica__cudnn.be_create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) !=
            CUDNN_STATUS_SUCCESS ||
        mica__cudnn.be_get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &eng) !=
            CUDNN_STATUS_SUCCESS ||
        n != 1 ||
        mica__cudnn.be_get(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                           CUDNN_TYPE_INT64, 1, &n, &index) !=
            CUDNN_STATUS_SUCCESS ||
        index < 0 || index >= (1 << 13))
        goto done;
    if (mica__cudnn.be_get(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                           CUDNN_TYPE_NUMERICAL_NOTE,
                           (int64_t)MICA_KIT_COUNT(notes), &n, notes) !=
        CUDNN_STATUS_SUCCESS)
        goto done;
    for (i = 0; i < n && i < (int64_t)MICA_KIT_COUNT(notes); i++)
        if ((notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE &&
             dtype == MICA_FLOAT32) ||
            notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
            notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
            notes[i] == CUDNN_NUMERICAL_NOTE_FFT)
            goto done;
    for (i = 0; i < (int32_t)MICA_KIT_COUNT(knobs); i++)
        if (mica__cudnn.be_create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
                                  &knobs[i]) != CUDNN_STATUS_SUCCESS)
            goto done;
    if (mica__cudnn.be_get(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR,
                           (int64_t)MICA_KIT_COUNT(knobs), &n, knobs) !=
        CUDNN_STATUS_SUCCESS)
        goto done;
    for (i = 0; i < n && i < (int64_t)MICA_KIT_COUNT(knobs); i++) {
        cudnnBackendKnobType_t type;
        int64_t got = 0, value = 0;
        if (mica__cudnn.be_get(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                               CUDNN_TYPE_KNOB_TYPE, 1, &got, &type) !=
                CUDNN_STATUS_SUCCESS ||
            mica__cudnn.be_get(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                               CUDNN_TYPE_INT64, 1, &got, &value) !=
                CUDNN_STATUS_SUCCESS)
            goto done;
        kv[nk++] = (int64_t)type;
        kv[nk++] = value;
    }
    tac = MICA__CG_TACTIC_BASE | (int32_t)(index << 16) |
          (int32_t)((hash_words(kv, nk) ^ (hash_words(kv, nk) >> 16)) &
                    0xffff);
done:
    for (i = 0; i < (int32_t)MICA_KIT_COUNT(knobs); i++)
        if (knobs[i])
            mica__cudnn.be_destroy(knobs[i]);
    if (eng)
        mica__cudnn.be_destroy(eng);
    return tac;
}

/* Heuristics' configurations of e->graph (mode A, else the fallback
 * list), those left out dropped, into e->cfg and e->tac. */
static void heuristics(cg_entry_t *e, cudnnBackendHeurMode_t mode)
{
    cudnnBackendDescriptor_t heur = NULL, got[CG_MAX * 2];
    int64_t n = 0;
    int32_t i, j;

    memset(got, 0, sizeof got);
    if (mica__cudnn.be_create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) !=
            CUDNN_STATUS_SUCCESS ||
        set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e->graph) ||
        set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
            &mode) ||
        fin(heur, "cudnnBackendFinalize of the heuristics"))
        goto done;
    for (i = 0; i < (int32_t)MICA_KIT_COUNT(got); i++)
        if (mica__cudnn.be_create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                                  &got[i]) != CUDNN_STATUS_SUCCESS)
            goto done;
    if (mica__cudnn.be_get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR,
                           (int64_t)MICA_KIT_COUNT(got), &n, got) !=
        CUDNN_STATUS_SUCCESS)
        goto done;
    for (i = 0; i < n && i < (int64_t)MICA_KIT_COUNT(got) && e->n < CG_MAX;
         i++) {
        int32_t tac = tactic_of(got[i], e->key.dtype);
        int dup = 0;
        if (!tac)
            continue;
        for (j = 0; j < e->n; j++)
            dup |= e->tac[j] == tac;
        if (dup)
            continue;
        e->cfg[e->n] = got[i];
        e->tac[e->n++] = tac;
        got[i] = NULL; /* kept */
    }
done:
    for (i = 0; i < (int32_t)MICA_KIT_COUNT(got); i++)
        if (got[i])
            mica__cudnn.be_destroy(got[i]);
    if (heur)
        mica__cudnn.be_destroy(heur);
}

/* The entry of (pb, nhwc, epi) on the calling thread's handle, made
 * (graph and heuristics) on first use; NULL with err set when cuDNN or
 * memory fails, and an entry without graph where cuDNN has none. */
static cg_entry_t *entry(const mica__conv_problem_t *pb, int nhwc,
                         int32_t epi, cudnnHandle_t *hp, mica_error_t *err)
{
    cudnnHandle_t h;
    cg_entry_t *e;
    cg_key_t key;
    int dev = 0;

    if (mica__cudnn_handle(&h, NULL, err) != MICA_OK)
        return NULL;
    if (cudaGetDevice(&dev) != cudaSuccess)
        dev = -1;
    key_of(pb, nhwc, epi, dev, &key);
    pthread_mutex_lock(&cg_lock);
    for (e = cg_entries; e; e = e->next)
        if (e->h == h && memcmp(&e->key, &key, sizeof key) == 0)
            break;
    pthread_mutex_unlock(&cg_lock);
    if (hp)
        *hp = h;
    if (e)
        return e;
    /* Made outside the lock: only this thread uses its handle's. */
    if (!(e = calloc(1, sizeof *e))) {
        mica_kit_host->set_error(err, "out of host memory");
        return NULL;
    }
    e->key = key;
    e->h = h;
    cg_fail[0] = '\0';
    build_graph(e);
    if (e->graph) {
        heuristics(e, CUDNN_HEUR_MODE_A);
        if (e->n == 0)
            heuristics(e, CUDNN_HEUR_MODE_FALLBACK);
    }
    if (!e->n)
        mica_kit_host->log(MICA_LOG_DEBUG, "convolution",
                           "cuDNN's graph API has no configuration for "
                           "%lldx%lldx%lldx%lld -> %lld maps, kernel "
                           "%lldx%lld, groups %lld, %s%s, epilogue %d: %s",
                           (long long)key.n, (long long)key.c,
                           (long long)key.in[1], (long long)key.in[2],
                           (long long)key.m, (long long)key.k[1],
                           (long long)key.k[2], (long long)key.groups,
                           key.dtype == MICA_FLOAT16 ? "float16" : "float32",
                           key.nhwc ? " channels last" : "", (int)key.epi,
                           cg_fail[0] ? cg_fail
                                      : e->graph ? "heuristics offer none "
                                                   "that is kept"
                                                 : "no graph");
    e->made = 1;
    pthread_mutex_lock(&cg_lock);
    e->next = cg_entries;
    cg_entries = e;
    pthread_mutex_unlock(&cg_lock);
    return e;
}

/* The plan of configuration i of e, finalized now if it was not; NULL
 * where cuDNN refuses it. */
static mica__cg_plan_t *plan_of(cg_entry_t *e, int32_t i)
{
    mica__cg_plan_t *p = &e->plan[i];
    cudnnBackendDescriptor_t d = NULL;
    int64_t n = 0, ws = 0;

    if (e->state[i] > 0)
        return p;
    if (e->state[i] < 0)
        return NULL;
    e->state[i] = -1;
    cg_fail[0] = '\0';
    if (mica__cudnn.be_create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &d) !=
            CUDNN_STATUS_SUCCESS ||
        set(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
            &e->h) ||
        set(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e->cfg[i]) ||
        fin(d, "cudnnBackendFinalize of an execution plan") ||
        mica__cudnn.be_get(d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                           CUDNN_TYPE_INT64, 1, &n, &ws) !=
            CUDNN_STATUS_SUCCESS ||
        ws < 0) {
        if (d)
            mica__cudnn.be_destroy(d);
        mica_kit_host->log(MICA_LOG_DEBUG, "convolution", "cuDNN's graph "
                           "API: configuration %d of %lldx%lld -> %lld "
                           "maps not planned: %s", (int)e->tac[i],
                           (long long)e->key.n, (long long)e->key.c,
                           (long long)e->key.m, cg_fail);
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->plan = d;
    p->ws = ws;
    p->epi = e->key.epi;
    p->tactic = e->tac[i];
    p->h = e->h;
    e->state[i] = 1;
    return p;
}

/* ---- the entry points ------------------------------------------------- */

int mica__cg_takes(const mica__conv_problem_t *pb)
{
    const mica__window_t *w = &pb->p->win;
    int i;

    if (pb->p->deconv || pb->n < 1 || pb->c < 1 || pb->m < 1 ||
        pb->p->groups < 1 || (w->nd != 2 && w->nd != 3) ||
        (pb->dtype != MICA_FLOAT16 && pb->dtype != MICA_FLOAT32))
        return 0;
    for (i = 0; i < 3; i++)
        if (pb->in[i] < 1 || pb->out[i] < 1)
            return 0;
    return 1;
}

int32_t mica__cg_tactics(const mica__conv_problem_t *pb, int nhwc,
                         int32_t epi, int32_t *ids, int32_t max)
{
    cg_entry_t *e;
    int32_t i, n = 0;

    if (!mica__cg_takes(pb) || !(e = entry(pb, nhwc, epi, NULL, NULL)))
        return 0;
    for (i = 0; i < e->n && n < max; i++)
        ids[n++] = e->tac[i];
    return n;
}

mica_status_t mica__cg_plan(const mica__conv_problem_t *pb, int nhwc,
                            int32_t epi, int32_t tactic, size_t ws_cap,
                            mica__cg_plan_t **out, size_t *ws,
                            mica_error_t *err)
{
    cg_entry_t *e;
    int32_t i;

    *out = NULL;
    *ws = 0;
    if (!mica__cg_takes(pb))
        return MICA_ERR_UNSUPPORTED;
    if (!(e = entry(pb, nhwc, epi, NULL, err)))
        return MICA_ERR_DEVICE;
    /* The tactic asked for, else heuristics' first that cuDNN plans
     * within ws_cap. */
    for (i = 0; i < e->n && tactic; i++)
        if (e->tac[i] == tactic) {
            mica__cg_plan_t *p = plan_of(e, i);
            if (p && (size_t)p->ws <= ws_cap) {
                *out = p;
                *ws = (size_t)p->ws;
                return MICA_OK;
            }
            break;
        }
    for (i = 0; i < e->n; i++) {
        mica__cg_plan_t *p = plan_of(e, i);
        if (p && (size_t)p->ws <= ws_cap) {
            *out = p;
            *ws = (size_t)p->ws;
            return MICA_OK;
        }
    }
    return MICA_ERR_UNSUPPORTED;
}

int32_t mica__cg_plan_tactic(const mica__cg_plan_t *p)
{
    return p->tactic;
}

mica_status_t mica__cg_run(mica__cg_plan_t *p, const void *x, const void *w,
                           const void *bias, const void *a, const void *z,
                           void *y, void *workspace, void *stream,
                           mica_error_t *err)
{
    const void *ptr[6];
    int64_t uid[6];
    int32_t n = 0, i, same;
    cudnnHandle_t h;
    cudnnStatus_t s;
    mica_status_t st;

    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK)
        return st;
    if (h != p->h)
        return MICA_KIT_FAIL(err, "a cuDNN plan made on another thread's "
                             "handle (%s:%d)", __FILE__, __LINE__);
    ptr[n] = x;
    uid[n++] = UID_X;
    ptr[n] = w;
    uid[n++] = UID_W;
    ptr[n] = y;
    uid[n++] = UID_Y;
    if (p->epi & MICA__CG_BIAS) {
        ptr[n] = bias;
        uid[n++] = UID_B;
    }
    if (p->epi & MICA__CG_A) {
        ptr[n] = a;
        uid[n++] = UID_A;
    }
    if (p->epi & MICA__CG_Z) {
        ptr[n] = z;
        uid[n++] = UID_Z;
    }
    for (i = 0; i < n; i++)
        if (!ptr[i] || (uintptr_t)ptr[i] % CG_ALIGN)
            return MICA_ERR_UNSUPPORTED; /* checked by the caller first */
    same = p->vp && p->vp_ws == workspace;
    for (i = 0; i < n && same; i++)
        same = p->vp_ptr[i] == ptr[i];
    if (!same) {
        cudnnBackendDescriptor_t vp = NULL;
        if (mica__cudnn.be_create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
                                  &vp) != CUDNN_STATUS_SUCCESS ||
            set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                n, ptr) ||
            set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
                uid) ||
            set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                &workspace) ||
            mica__cudnn.be_finalize(vp) != CUDNN_STATUS_SUCCESS) {
            if (vp)
                mica__cudnn.be_destroy(vp);
            return MICA_KIT_FAIL(err, "cuDNN refuses the variant pack of a "
                                 "convolution plan (%s:%d)", __FILE__,
                                 __LINE__);
        }
        if (p->vp)
            mica__cudnn.be_destroy(p->vp);
        p->vp = vp;
        p->vp_ws = workspace;
        memset(p->vp_ptr, 0, sizeof p->vp_ptr);
        for (i = 0; i < n; i++)
            p->vp_ptr[i] = ptr[i];
    }
    s = mica__cudnn.be_execute(h, p->plan, p->vp);
    if (s != CUDNN_STATUS_SUCCESS)
        return MICA_KIT_FAIL(err, "cudnnBackendExecute of a convolution "
                             "plan (tactic %d) failed: %s (%s:%d)",
                             (int)p->tactic, mica__cudnn.error_string(s),
                             __FILE__, __LINE__);
    return MICA_OK;
}

int mica__cg_aligned(const void *p)
{
    return p && (uintptr_t)p % CG_ALIGN == 0;
}
