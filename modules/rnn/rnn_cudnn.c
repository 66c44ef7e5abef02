/*
 * modules/rnn/rnn_cudnn.c - the RNNv2 layer on cuDNN's RNN API
 * (cudnnRNNForward with RNN data descriptors).  Host code only, plain C,
 * so that the table of cuDNN functions is typed by cuDNN's C prototypes.
 *
 * Layouts.  x [N..., T, E] and y [N..., T, D*H] are cuDNN's
 * CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED as they are, with the
 * padding of y filled with zeros by cuDNN (sequence-major copies of x
 * and y, what PyTorch gives cuDNN, measured slower: bench/README.md).
 * cuDNN's hidden and cell
 * states are [L*D, N, H]; mica's are [N, L*D, H], so they go through the
 * workspace with a strided copy each way, except where the two are the
 * same memory (L*D = 1 or N = 1).  Pseudo-layer 2l + d is TensorRT's
 * layerIndex.
 *
 * Algorithm: CUDNN_RNN_ALGO_STANDARD, and where PyTorch's heuristics
 * pick it (float16, one unidirectional layer, no GRU, hidden and input
 * sizes multiples of 128, hidden at most 1024, a batch that is a
 * multiple of 8 up to 128, every sequence T long, a GPU of compute
 * capability 8.0 or more with 98 or more multiprocessors),
 * CUDNN_RNN_ALGO_PERSIST_STATIC through a second RNN descriptor that
 * shares the weight space (checked: same size, same places).
 *
 * Weights are packed once per instance (initialize) into cuDNN's weight
 * space, in the run's dtype and cuDNN's gate order: LSTM i, f, g, o for
 * TensorRT's i, o, f, c; GRU r, z, h for TensorRT's z, r, h.  Sequence
 * lengths: cuDNN wants them on the host (the data descriptors) and on
 * the device; a seq_lengths input is read back (one synchronization of
 * the stream) and checked, otherwise every length is T.
 *
 * Arithmetic: float32 with CUDNN_FMA_MATH (no TF32), float16 data with
 * float math and tensor cores, as PyTorch asks for.  cuDNN is not
 * linked: the kit's loader opens libcudnn.so.<major> on first use.
 */
#include <config.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit_cuda.h"
#include "mica/kit_half.h"

#include "rnn.h"

/* The cuDNN functions this file calls, filled by mica_kit_lib_open. */
static struct {
    MICA_KIT_FN(cudnnCreate) create;
    MICA_KIT_FN(cudnnDestroy) destroy;
    MICA_KIT_FN(cudnnSetStream) set_stream;
    MICA_KIT_FN(cudnnGetErrorString) error_string;
    MICA_KIT_FN(cudnnCreateTensorDescriptor) create_tensor;
    MICA_KIT_FN(cudnnDestroyTensorDescriptor) destroy_tensor;
    MICA_KIT_FN(cudnnSetTensorNdDescriptor) set_tensor;
    MICA_KIT_FN(cudnnCreateDropoutDescriptor) create_dropout;
    MICA_KIT_FN(cudnnDestroyDropoutDescriptor) destroy_dropout;
    MICA_KIT_FN(cudnnSetDropoutDescriptor) set_dropout;
    MICA_KIT_FN(cudnnCreateRNNDescriptor) create_rnn;
    MICA_KIT_FN(cudnnDestroyRNNDescriptor) destroy_rnn;
    MICA_KIT_FN(cudnnSetRNNDescriptor_v8) set_rnn;
    MICA_KIT_FN(cudnnCreateRNNDataDescriptor) create_data;
    MICA_KIT_FN(cudnnDestroyRNNDataDescriptor) destroy_data;
    MICA_KIT_FN(cudnnSetRNNDataDescriptor) set_data;
    MICA_KIT_FN(cudnnGetRNNWeightSpaceSize) weight_space_size;
    MICA_KIT_FN(cudnnGetRNNWeightParams) weight_params;
    MICA_KIT_FN(cudnnGetRNNTempSpaceSizes) temp_space_sizes;
    MICA_KIT_FN(cudnnRNNForward) forward;
} cudnn;

static const mica_kit_sym_t cudnn_syms[] = {
    MICA_KIT_SYM(cudnn, create, "cudnnCreate"),
    MICA_KIT_SYM(cudnn, destroy, "cudnnDestroy"),
    MICA_KIT_SYM(cudnn, set_stream, "cudnnSetStream"),
    MICA_KIT_SYM(cudnn, error_string, "cudnnGetErrorString"),
    MICA_KIT_SYM(cudnn, create_tensor, "cudnnCreateTensorDescriptor"),
    MICA_KIT_SYM(cudnn, destroy_tensor, "cudnnDestroyTensorDescriptor"),
    MICA_KIT_SYM(cudnn, set_tensor, "cudnnSetTensorNdDescriptor"),
    MICA_KIT_SYM(cudnn, create_dropout, "cudnnCreateDropoutDescriptor"),
    MICA_KIT_SYM(cudnn, destroy_dropout, "cudnnDestroyDropoutDescriptor"),
    MICA_KIT_SYM(cudnn, set_dropout, "cudnnSetDropoutDescriptor"),
    MICA_KIT_SYM(cudnn, create_rnn, "cudnnCreateRNNDescriptor"),
    MICA_KIT_SYM(cudnn, destroy_rnn, "cudnnDestroyRNNDescriptor"),
    MICA_KIT_SYM(cudnn, set_rnn, "cudnnSetRNNDescriptor_v8"),
    MICA_KIT_SYM(cudnn, create_data, "cudnnCreateRNNDataDescriptor"),
    MICA_KIT_SYM(cudnn, destroy_data, "cudnnDestroyRNNDataDescriptor"),
    MICA_KIT_SYM(cudnn, set_data, "cudnnSetRNNDataDescriptor"),
    MICA_KIT_SYM(cudnn, weight_space_size, "cudnnGetRNNWeightSpaceSize"),
    MICA_KIT_SYM(cudnn, weight_params, "cudnnGetRNNWeightParams"),
    MICA_KIT_SYM(cudnn, temp_space_sizes, "cudnnGetRNNTempSpaceSizes"),
    MICA_KIT_SYM(cudnn, forward, "cudnnRNNForward"),
};

static mica_kit_lib_t cudnn_lib =
    MICA_KIT_LIB("cuDNN", "libcudnn.so." MICA_KIT_STR(CUDNN_MAJOR), &cudnn,
                 cudnn_syms);

/* Check a cuDNN call in a function with `err` that returns a status. */
#define CUDNN_CHECK(call)                                                   \
    do {                                                                    \
        cudnnStatus_t cudnn_check_s_ = (call);                              \
        if (cudnn_check_s_ != CUDNN_STATUS_SUCCESS) {                       \
            mica_kit_host->set_error(err, "%s failed: %s (%s:%d)", #call,   \
                                     cudnn.error_string(cudnn_check_s_),    \
                                     __FILE__, __LINE__);                   \
            return MICA_ERR_DEVICE;                                         \
        }                                                                   \
    } while (0)

/* Workspace regions are aligned to this many bytes. */
#define ALIGN 256

struct mica__rnn_cudnn {
    cudnnHandle_t handle;
    cudnnDropoutDescriptor_t dropout;
    cudnnRNNDescriptor_t rnn;
    cudnnRNNDescriptor_t rnn_p;         /* persistent; NULL: not used */
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, md, bd; /* md, bd: weight params queries */
    mica_dtype_t dtype;                 /* of the RNN descriptor */
    int rnn_set;
    int64_t max_batch, max_steps;       /* configured bounds */
    size_t temp_bytes;                  /* cuDNN's scratch at the bounds */
    void *weights;                      /* device weight space */
    size_t weight_bytes;
    int32_t *lens;                      /* pinned, max_batch */
    int64_t lens_cap;
    int64_t desc_batch, desc_steps;     /* what xd, yd, hd hold; -1: unset */
};

static size_t align_up(size_t n)
{
    return (n + ALIGN - 1) / ALIGN * ALIGN;
}

static cudnnDataType_t data_type(mica_dtype_t t)
{
    return t == MICA_FLOAT16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

/* cuDNN's gate (linLayerID of the input matrix) of TensorRT's gate g. */
static int32_t cudnn_gate(int op, int32_t g)
{
    static const int32_t lstm[4] = {0, 3, 1, 2}; /* i o f c -> i f g o */
    static const int32_t gru[3] = {1, 0, 2};     /* z r h -> r z h */
    if (op == MICA__RNN_LSTM)
        return lstm[g];
    if (op == MICA__RNN_GRU)
        return gru[g];
    return 0;
}

void mica__rnn_cudnn_destroy(mica__rnn_cudnn_t *s)
{
    if (!s)
        return;
    /* Made after cuDNN was opened: its table is filled. */
    if (s->xd)
        cudnn.destroy_data(s->xd);
    if (s->yd)
        cudnn.destroy_data(s->yd);
    if (s->hd)
        cudnn.destroy_tensor(s->hd);
    if (s->md)
        cudnn.destroy_tensor(s->md);
    if (s->bd)
        cudnn.destroy_tensor(s->bd);
    if (s->rnn)
        cudnn.destroy_rnn(s->rnn);
    if (s->rnn_p)
        cudnn.destroy_rnn(s->rnn_p);
    if (s->dropout)
        cudnn.destroy_dropout(s->dropout);
    if (s->handle)
        cudnn.destroy(s->handle);
    if (s->weights)
        cudaFree(s->weights);
    if (s->lens)
        cudaFreeHost(s->lens);
    free(s);
}

/* A new state with cuDNN open and every descriptor made. */
static mica_status_t make_state(mica__rnn_cudnn_t **out, mica_error_t *err)
{
    mica__rnn_cudnn_t *s;
    mica_status_t st;

    if ((st = mica_kit_lib_open(&cudnn_lib, err)) != MICA_OK)
        return st;
    s = calloc(1, sizeof *s);
    if (!s)
        return MICA_KIT_FAIL(err, "out of host memory for cuDNN's state");
    *out = s; /* freed by the caller's destroy on failure */
    s->desc_batch = s->desc_steps = -1;
    CUDNN_CHECK(cudnn.create(&s->handle));
    CUDNN_CHECK(cudnn.create_dropout(&s->dropout));
    CUDNN_CHECK(cudnn.create_rnn(&s->rnn));
    CUDNN_CHECK(cudnn.create_data(&s->xd));
    CUDNN_CHECK(cudnn.create_data(&s->yd));
    CUDNN_CHECK(cudnn.create_tensor(&s->hd));
    CUDNN_CHECK(cudnn.create_tensor(&s->md));
    CUDNN_CHECK(cudnn.create_tensor(&s->bd));
    /* No dropout (inference): no state memory, as PyTorch does. */
    CUDNN_CHECK(cudnn.set_dropout(s->dropout, s->handle, 0.0f, NULL, 0, 0));
    return MICA_OK;
}

/* Set RNN descriptor d for dtype t and algorithm `algo`. */
static mica_status_t set_rnn_desc(mica__rnn_cudnn_t *s, cudnnRNNDescriptor_t d,
                                  cudnnRNNAlgo_t algo, const mica__rnn_t *p,
                                  mica_dtype_t t, mica_error_t *err)
{
    static const cudnnRNNMode_t modes[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH,
                                           CUDNN_LSTM, CUDNN_GRU};
    if (p->input_size > INT32_MAX)
        return MICA_KIT_FAIL(err, "input size %" PRId64 " is too large for "
                             "cuDNN", p->input_size);
    CUDNN_CHECK(cudnn.set_rnn(
        d, algo, modes[p->op], CUDNN_RNN_DOUBLE_BIAS,
        p->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
        p->skip ? CUDNN_SKIP_INPUT : CUDNN_LINEAR_INPUT, data_type(t),
        CUDNN_DATA_FLOAT,
        t == MICA_FLOAT16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH,
        (int32_t)p->input_size, p->hidden, p->hidden, p->layers, s->dropout,
        CUDNN_RNN_PADDED_IO_ENABLED));
    return MICA_OK;
}

/*
 * Whether the layer and the GPU are of the kind where PyTorch runs the
 * persistent algorithm (the batch and the lengths are checked per run,
 * see use_persist).
 */
static int persist_candidate(const mica__rnn_t *p, mica_dtype_t t)
{
    int dev = 0, major = 0, minor = 0, sms = 0;

    if (t != MICA_FLOAT16 || p->layers != 1 || p->dirs != 1 ||
        p->op == MICA__RNN_GRU || p->skip || p->hidden > 1024 ||
        p->hidden % 128 != 0 || p->input_size % 128 != 0)
        return 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                               dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                               dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
            cudaSuccess)
        return 0;
    return major >= 8 && minor != 6 && sms >= 98;
}

/* Whether a run of `batch` sequences (`ragged`: lengths not all T) takes
 * the persistent descriptor. */
static int use_persist(const mica__rnn_cudnn_t *s, const mica__rnn_t *p,
                       int64_t batch, int ragged)
{
    if (!s->rnn_p || ragged || batch % 8 != 0 || batch > 128)
        return 0;
    return p->op == MICA__RNN_LSTM || batch < 96 || p->hidden < 896;
}

/* Forget the persistent descriptor: every run takes the standard one. */
static void drop_persist(mica__rnn_cudnn_t *s)
{
    if (s->rnn_p)
        cudnn.destroy_rnn(s->rnn_p);
    s->rnn_p = NULL;
}

/* Set the RNN descriptors for dtype t: the standard one, and the
 * persistent one where it may serve (a refusal of cuDNN's there only
 * leaves it out). */
static mica_status_t set_rnn(mica__rnn_cudnn_t *s, const mica__rnn_t *p,
                             mica_dtype_t t, mica_error_t *err)
{
    mica_status_t st;

    if ((st = set_rnn_desc(s, s->rnn, CUDNN_RNN_ALGO_STANDARD, p, t, err)) !=
        MICA_OK)
        return st;
    drop_persist(s);
    if (persist_candidate(p, t)) {
        CUDNN_CHECK(cudnn.create_rnn(&s->rnn_p));
        if (set_rnn_desc(s, s->rnn_p, CUDNN_RNN_ALGO_PERSIST_STATIC, p, t,
                         err) != MICA_OK)
            drop_persist(s);
    }
    s->dtype = t;
    s->rnn_set = 1;
    s->desc_batch = s->desc_steps = -1;
    return MICA_OK;
}

/*
 * Set the data and state descriptors for `batch` sequences of `steps`,
 * with lengths s->lens (NULL in `lens`: all `steps`, and kept until the
 * shape changes).
 */
static mica_status_t set_shapes(mica__rnn_cudnn_t *s, const mica__rnn_t *p,
                                int64_t batch, int64_t steps, int ragged,
                                mica_error_t *err)
{
    static const double zero = 0.0; /* the padding: 0 as float or half */
    cudnnDataType_t dt = data_type(s->dtype);
    int dims[3], strides[3];
    int64_t b;

    if (!ragged && batch == s->desc_batch && steps == s->desc_steps)
        return MICA_OK;
    if (batch > INT_MAX || steps > INT_MAX ||
        (int64_t)p->layers * p->dirs * batch * p->hidden > INT_MAX)
        return MICA_KIT_FAIL(err, "%" PRId64 " sequences of %" PRId64
                             " steps are too many for cuDNN", batch, steps);
    if (batch > s->lens_cap)
        return MICA_KIT_FAIL(err, "%" PRId64 " sequences, more than the %"
                             PRId64 " configured", batch, s->lens_cap);
    if (!ragged)
        for (b = 0; b < batch; b++)
            s->lens[b] = (int32_t)steps;
    CUDNN_CHECK(cudnn.set_data(s->xd, dt,
                               CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                               (int)steps, (int)batch, (int)p->input_size,
                               s->lens, (void *)&zero));
    CUDNN_CHECK(cudnn.set_data(s->yd, dt,
                               CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                               (int)steps, (int)batch, p->dirs * p->hidden,
                               s->lens, (void *)&zero));
    dims[0] = p->layers * p->dirs;
    dims[1] = (int)batch;
    dims[2] = p->hidden;
    strides[0] = dims[1] * dims[2];
    strides[1] = dims[2];
    strides[2] = 1;
    CUDNN_CHECK(cudnn.set_tensor(s->hd, dt, 3, dims, strides));
    s->desc_batch = ragged ? -1 : batch;
    s->desc_steps = ragged ? -1 : steps;
    return MICA_OK;
}

mica_status_t mica__rnn_cudnn_configure(mica__rnn_cudnn_t **sp,
                                        const mica__rnn_t *p,
                                        mica_dtype_t dtype, int64_t max_batch,
                                        int64_t max_steps, mica_error_t *err)
{
    mica__rnn_cudnn_t *s;
    mica_status_t st;
    size_t reserve = 0;

    if (!*sp && (st = make_state(sp, err)) != MICA_OK)
        return st;
    s = *sp;
    if (s->rnn_set && s->dtype != dtype) {
        if (s->weights) /* packed for another dtype */
            return MICA_KIT_FAIL(err, "configured for %s after its weights "
                                 "were packed for %s",
                                 mica_kit_host->dtype_name(dtype),
                                 mica_kit_host->dtype_name(s->dtype));
        s->rnn_set = 0;
    }
    if (!s->rnn_set && (st = set_rnn(s, p, dtype, err)) != MICA_OK)
        return st;
    if (max_batch > s->lens_cap) {
        if (s->lens)
            cudaFreeHost(s->lens);
        s->lens = NULL;
        s->lens_cap = 0;
        MICA_KIT_CUDA_CHECK(cudaHostAlloc((void **)&s->lens,
                                          sizeof(int32_t) *
                                              (size_t)(max_batch ? max_batch : 1),
                                          cudaHostAllocDefault));
        s->lens_cap = max_batch;
    }
    s->max_batch = max_batch;
    s->max_steps = max_steps;
    s->temp_bytes = 0;
    if (max_batch > 0 && max_steps > 0) {
        /* The persistent algorithm's scratch at its largest batch. */
        int64_t pb = max_batch < 128 ? max_batch : 128;
        size_t temp = 0;
        if (s->rnn_p && pb >= 8) {
            if ((st = set_shapes(s, p, pb - pb % 8, max_steps, 0, err)) !=
                MICA_OK)
                return st;
            if (cudnn.temp_space_sizes(s->handle, s->rnn_p,
                                       CUDNN_FWD_MODE_INFERENCE, s->xd,
                                       &temp, &reserve) !=
                CUDNN_STATUS_SUCCESS) {
                drop_persist(s); /* refused: standard only */
                temp = 0;
            }
        }
        if ((st = set_shapes(s, p, max_batch, max_steps, 0, err)) != MICA_OK)
            return st;
        CUDNN_CHECK(cudnn.temp_space_sizes(s->handle, s->rnn,
                                           CUDNN_FWD_MODE_INFERENCE, s->xd,
                                           &s->temp_bytes, &reserve));
        if (temp > s->temp_bytes)
            s->temp_bytes = temp;
    }
    return MICA_OK;
}

/* Bytes of one state tensor [L*D, N, H] at the configured batch. */
static size_t state_bytes(const mica__rnn_cudnn_t *s, const mica__rnn_t *p)
{
    return (size_t)p->layers * (size_t)p->dirs * (size_t)s->max_batch *
           (size_t)p->hidden * mica_dtype_size(s->dtype);
}

/* Workspace: cuDNN's scratch, four transposed states, the lengths. */
size_t mica__rnn_cudnn_workspace(const mica__rnn_cudnn_t *s,
                                 const mica__rnn_t *p)
{
    if (!s)
        return 0;
    return align_up(s->temp_bytes) + 4 * align_up(state_bytes(s, p)) +
           align_up(sizeof(int32_t) * (size_t)s->max_batch);
}

/* Value i of float32 or float16 weights w; 0 when w is NULL. */
static float value(const mica_weights_t *w, int64_t i)
{
    if (!w)
        return 0.0f;
    if (w->dtype == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)w->values)[i]);
    return ((const float *)w->values)[i];
}

/* Write `n` values w[at..] + plus[at..] (plus may be NULL) into the host
 * staging buffer at byte offset `off`, as dtype t. */
static void stage(unsigned char *host, size_t off, const mica_weights_t *w,
                  const mica_weights_t *plus, int64_t at, int64_t n,
                  mica_dtype_t t)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        float v = value(w, at + i) + value(plus, at + i);
        if (t == MICA_FLOAT16) {
            uint16_t h = mica_kit_float_to_half(v);
            memcpy(host + off + 2 * (size_t)i, &h, 2);
        } else {
            memcpy(host + off + 4 * (size_t)i, &v, 4);
        }
    }
}

/* Write the H x H identity at byte offset `off`, as dtype t. */
static void stage_identity(unsigned char *host, size_t off, int64_t H,
                           mica_dtype_t t)
{
    const size_t es = mica_dtype_size(t);
    const uint16_t one16 = mica_kit_float_to_half(1.0f);
    const float one32 = 1.0f;
    int64_t i;
    memset(host + off, 0, (size_t)(H * H) * es);
    for (i = 0; i < H; i++)
        memcpy(host + off + (size_t)(i * H + i) * es,
               t == MICA_FLOAT16 ? (const void *)&one16 : (const void *)&one32,
               es);
}

/* Whether the bias values [at, at + n) of w are all zero (w NULL: yes). */
static int zero_bias(const mica_weights_t *w, int64_t at, int64_t n)
{
    int64_t i;
    for (i = 0; w && i < n; i++)
        if (value(w, at + i) != 0.0f)
            return 0;
    return 1;
}

/*
 * Stage gate g of entry e (layer l, direction d) into `host`: its input
 * and recurrent matrices and biases, at the places cuDNN gives.  Skip
 * mode's layer 0 has no input matrix (the identity where cuDNN has a
 * place for one).  An input bias without a place is
 * added to the recurrent one, which is the same sum for every gate but
 * GRU's hidden gate (where it must then be zero).
 */
static mica_status_t stage_gate(mica__rnn_cudnn_t *s, const mica__rnn_t *p,
                                int32_t l, int32_t d, int32_t g,
                                unsigned char *host, mica_error_t *err)
{
    const int32_t e = l * p->dirs + d, G = p->gates;
    const int64_t H = p->hidden, in = mica__rnn_in_size(p, l);
    const mica_weights_t *wb = p->wb ? &p->wb[e] : NULL;
    const mica_weights_t *rb = p->rb ? &p->rb[e] : NULL;
    const mica_weights_t *fold = NULL;
    const unsigned char *base = s->weights;
    int32_t k;

    for (k = 0; k < 2; k++) { /* 0: input part, 1: recurrent part */
        const mica_weights_t *m = k ? &p->r[e] : mica__rnn_w(p, l, d);
        const mica_weights_t *bias = k ? rb : wb;
        int64_t cols = k ? H : in;
        void *maddr = NULL, *baddr = NULL;
        CUDNN_CHECK(cudnn.weight_params(s->handle, s->rnn, e, s->weight_bytes,
                                        s->weights,
                                        k * G + cudnn_gate(p->op, g), s->md,
                                        &maddr, s->bd, &baddr));
        if (m && !maddr)
            return MICA_KIT_FAIL(err, "cuDNN has no place for the %s matrix "
                                 "of layer %d, gate %d", k ? "recurrent"
                                 : "input", (int)l, (int)g);
        if (m)
            stage(host, (size_t)((unsigned char *)maddr - base), m, NULL,
                  g * H * cols, H * cols, s->dtype);
        else if (maddr) /* skip mode's identity, should cuDNN want it */
            stage_identity(host, (size_t)((unsigned char *)maddr - base), H,
                           s->dtype);
        if (baddr) {
            stage(host, (size_t)((unsigned char *)baddr - base), bias,
                  k ? fold : NULL, g * H, H, s->dtype);
        } else if (!zero_bias(bias, g * H, H)) {
            if (k == 1 || (p->op == MICA__RNN_GRU && g == MICA__GRU_H))
                return MICA_KIT_FAIL(err, "cuDNN has no place for the %s "
                                     "bias of layer %d, gate %d, which is "
                                     "not zero", k ? "recurrent" : "input",
                                     (int)l, (int)g);
            fold = bias;
        }
    }
    return MICA_OK;
}

/* Whether the persistent descriptor puts every matrix and bias at the
 * places the standard one does, in a weight space of the same size (so
 * that one packing serves both). */
static int same_weight_space(mica__rnn_cudnn_t *s, const mica__rnn_t *p)
{
    size_t bytes = 0;
    int32_t e, id;

    if (cudnn.weight_space_size(s->handle, s->rnn_p, &bytes) !=
            CUDNN_STATUS_SUCCESS ||
        bytes != s->weight_bytes)
        return 0;
    for (e = 0; e < p->layers * p->dirs; e++)
        for (id = 0; id < 2 * p->gates; id++) {
            void *m0 = NULL, *b0 = NULL, *m1 = NULL, *b1 = NULL;
            if (cudnn.weight_params(s->handle, s->rnn, e, s->weight_bytes,
                                    s->weights, id, s->md, &m0, s->bd,
                                    &b0) != CUDNN_STATUS_SUCCESS ||
                cudnn.weight_params(s->handle, s->rnn_p, e, s->weight_bytes,
                                    s->weights, id, s->md, &m1, s->bd,
                                    &b1) != CUDNN_STATUS_SUCCESS ||
                m0 != m1 || b0 != b1)
                return 0;
        }
    return 1;
}

mica_status_t mica__rnn_cudnn_initialize(mica__rnn_cudnn_t *s,
                                         const mica__rnn_t *p, void *stream,
                                         mica_error_t *err)
{
    unsigned char *host = NULL;
    mica_status_t st = MICA_OK;
    int32_t l, d, g;
    (void)stream;

    if (s->weights)
        return MICA_OK;
    CUDNN_CHECK(cudnn.weight_space_size(s->handle, s->rnn, &s->weight_bytes));
    MICA_KIT_CUDA_CHECK(cudaMalloc(&s->weights,
                                   s->weight_bytes ? s->weight_bytes : 1));
    host = calloc(1, s->weight_bytes ? s->weight_bytes : 1);
    if (!host)
        return MICA_KIT_FAIL(err, "out of host memory packing %zu bytes of "
                             "weights", s->weight_bytes);
    for (l = 0; l < p->layers && st == MICA_OK; l++)
        for (d = 0; d < p->dirs && st == MICA_OK; d++)
            for (g = 0; g < p->gates && st == MICA_OK; g++)
                st = stage_gate(s, p, l, d, g, host, err);
    if (st == MICA_OK && s->rnn_p && !same_weight_space(s, p))
        drop_persist(s);
    if (st == MICA_OK) {
        cudaError_t e = cudaMemcpy(s->weights, host, s->weight_bytes,
                                   cudaMemcpyHostToDevice);
        if (e != cudaSuccess)
            st = MICA_KIT_FAIL(err, "cudaMemcpy of %zu bytes of weights "
                               "failed: %s", s->weight_bytes,
                               cudaGetErrorString(e));
    }
    free(host);
    if (st != MICA_OK) {
        cudaFree(s->weights);
        s->weights = NULL;
    }
    return st;
}

/*
 * Copy a state between mica's [N, LD, H] and cuDNN's [LD, N, H] (to_cudnn
 * says which way), `es` bytes an element.
 */
static mica_status_t swap_state(void *dst, const void *src, int64_t n,
                                int64_t ld, int64_t h, size_t es,
                                int to_cudnn, cudaStream_t stream,
                                mica_error_t *err)
{
    const size_t row = (size_t)h * es;
    int64_t i;
    for (i = 0; i < ld; i++) {
        /* Rows of index i: stride ld*h in mica's layout, h in cuDNN's. */
        unsigned char *dm = (unsigned char *)dst + (size_t)i * row;
        const unsigned char *sm = (const unsigned char *)src + (size_t)i * row;
        if (to_cudnn)
            MICA_KIT_CUDA_CHECK(cudaMemcpy2DAsync(
                (unsigned char *)dst + (size_t)(i * n) * row, row, sm,
                (size_t)ld * row, row, (size_t)n, cudaMemcpyDeviceToDevice,
                stream));
        else
            MICA_KIT_CUDA_CHECK(cudaMemcpy2DAsync(
                dm, (size_t)ld * row,
                (const unsigned char *)src + (size_t)(i * n) * row, row, row,
                (size_t)n, cudaMemcpyDeviceToDevice, stream));
    }
    return MICA_OK;
}

/* Final states when there is no step: the initial ones, or zeros. */
static mica_status_t no_steps(const mica__rnn_t *p, const mica__rnn_run_t *run,
                              const void *const *inputs, void *const *outputs,
                              cudaStream_t stream, mica_error_t *err)
{
    size_t bytes = (size_t)(run->batch * p->layers * p->dirs * p->hidden) *
                   mica_dtype_size(run->dtype);
    int32_t k;
    for (k = 1; k <= (p->op == MICA__RNN_LSTM ? 2 : 1); k++) {
        const void *init = k == 1 ? (run->has_h ? inputs[MICA__RNN_IN_H] : NULL)
                                  : (run->has_c ? inputs[MICA__RNN_IN_C] : NULL);
        if (init)
            MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(outputs[k], init, bytes,
                                                cudaMemcpyDeviceToDevice,
                                                stream));
        else
            MICA_KIT_CUDA_CHECK(cudaMemsetAsync(outputs[k], 0, bytes, stream));
    }
    return MICA_OK;
}

mica_status_t mica__rnn_cudnn_enqueue(mica__rnn_cudnn_t *s,
                                      const mica__rnn_t *p,
                                      const mica__rnn_run_t *run,
                                      const void *const *inputs,
                                      void *const *outputs, void *workspace,
                                      void *stream, mica_error_t *err)
{
    cudaStream_t cs = (cudaStream_t)stream;
    const int64_t N = run->batch, LD = (int64_t)p->layers * p->dirs;
    const int lstm = p->op == MICA__RNN_LSTM, direct = LD == 1 || N == 1;
    const size_t es = mica_dtype_size(run->dtype), sb = state_bytes(s, p);
    unsigned char *ws = workspace;
    void *hx = NULL, *cx = NULL, *hy = outputs[1], *cy = lstm ? outputs[2] : NULL;
    const int32_t *dev_lens;
    size_t temp = 0, reserve = 0;
    int64_t b;
    int ragged = 0;
    cudnnRNNDescriptor_t rnn = s->rnn;
    mica_status_t st;

    if (run->dtype != s->dtype || !s->weights)
        return MICA_KIT_FAIL(err, "run in %s but initialized for %s",
                             mica_kit_host->dtype_name(run->dtype),
                             s->weights ? mica_kit_host->dtype_name(s->dtype)
                                        : "nothing");
    if (N > s->max_batch || run->steps > s->max_steps)
        return MICA_KIT_FAIL(err, "%" PRId64 " sequences of %" PRId64 " steps "
                             "exceed the configured %" PRId64 " of %" PRId64,
                             N, run->steps, s->max_batch, s->max_steps);
    if (run->steps == 0)
        return no_steps(p, run, inputs, outputs, cs, err);
    if (!ws)
        return MICA_KIT_FAIL(err, "no workspace");
    /* Lengths: on the host for the descriptors, on the device for cuDNN. */
    dev_lens = (const int32_t *)(ws + align_up(s->temp_bytes) + 4 * align_up(sb));
    if (run->has_lens) {
        dev_lens = inputs[MICA__RNN_IN_LENS];
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(s->lens, dev_lens,
                                            sizeof(int32_t) * (size_t)N,
                                            cudaMemcpyDeviceToHost, cs));
        MICA_KIT_CUDA_CHECK(cudaStreamSynchronize(cs));
        if ((st = mica__rnn_check_lens(s->lens, N, run->steps, err)) != MICA_OK)
            return st;
        for (b = 0; b < N; b++)
            ragged |= s->lens[b] != run->steps;
    } else if ((st = mica__rnn_cuda_fill_i32((int32_t *)dev_lens, N,
                                             (int32_t)run->steps, stream,
                                             err)) != MICA_OK) {
        return st;
    }
    if ((st = set_shapes(s, p, N, run->steps, run->has_lens, err)) != MICA_OK)
        return st;
    if (use_persist(s, p, N, ragged) &&
        cudnn.temp_space_sizes(s->handle, s->rnn_p, CUDNN_FWD_MODE_INFERENCE,
                               s->xd, &temp, &reserve) ==
            CUDNN_STATUS_SUCCESS &&
        temp <= s->temp_bytes)
        rnn = s->rnn_p;
    CUDNN_CHECK(cudnn.temp_space_sizes(s->handle, rnn,
                                       CUDNN_FWD_MODE_INFERENCE, s->xd, &temp,
                                       &reserve));
    if (temp > s->temp_bytes)
        return MICA_KIT_FAIL(err, "cuDNN asks for %zu bytes of scratch, more "
                             "than the %zu reserved", temp, s->temp_bytes);
    /* States: in place where both layouts agree, else swapped. */
    if (run->has_h)
        hx = (void *)inputs[MICA__RNN_IN_H];
    if (run->has_c)
        cx = (void *)inputs[MICA__RNN_IN_C];
    if (!direct) {
        unsigned char *st_ws = ws + align_up(s->temp_bytes);
        if (hx && (st = swap_state(st_ws, hx, N, LD, p->hidden, es, 1, cs,
                                   err)) != MICA_OK)
            return st;
        if (cx && (st = swap_state(st_ws + align_up(sb), cx, N, LD, p->hidden,
                                   es, 1, cs, err)) != MICA_OK)
            return st;
        hx = hx ? st_ws : NULL;
        cx = cx ? st_ws + align_up(sb) : NULL;
        hy = st_ws + 2 * align_up(sb);
        cy = lstm ? st_ws + 3 * align_up(sb) : NULL;
    }
    CUDNN_CHECK(cudnn.set_stream(s->handle, cs));
    CUDNN_CHECK(cudnn.forward(s->handle, rnn, CUDNN_FWD_MODE_INFERENCE,
                              dev_lens, s->xd, inputs[MICA__RNN_IN_X], s->yd,
                              outputs[0], s->hd, hx, hy, s->hd, cx, cy,
                              s->weight_bytes, s->weights, s->temp_bytes,
                              s->temp_bytes ? ws : NULL, 0, NULL));
    if (!direct) {
        if ((st = swap_state(outputs[1], hy, N, LD, p->hidden, es, 0, cs,
                             err)) != MICA_OK)
            return st;
        if (lstm && (st = swap_state(outputs[2], cy, N, LD, p->hidden, es, 0,
                                     cs, err)) != MICA_OK)
            return st;
    }
    return MICA_OK;
}
