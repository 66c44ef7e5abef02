/*
 * modules/rnn/rnn.h - the RNNv2 layer's shared definitions: its params as
 * create() checked them, the CPU reference, and the cuDNN implementation's
 * entry points (rnn_cudnn.c) and kernels (rnn_cuda.cu).
 *
 * Gate order within one weights entry is TensorRT's (RNNGateType):
 * relu/tanh one gate; LSTM input, output, forget, cell; GRU update, reset,
 * hidden.  Entry k of each list is layer k / D, direction k % D (0
 * forward, 1 backward), as TensorRT's layerIndex 2l + d.
 */
#ifndef MICA_RNN_H
#define MICA_RNN_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `op`, in the order of the enum's names. */
enum { MICA__RNN_RELU = 0, MICA__RNN_TANH = 1, MICA__RNN_LSTM = 2,
       MICA__RNN_GRU = 3 };

/* Gates within an LSTM entry and a GRU entry (TensorRT's order). */
enum { MICA__LSTM_I = 0, MICA__LSTM_O = 1, MICA__LSTM_F = 2,
       MICA__LSTM_C = 3 };
enum { MICA__GRU_Z = 0, MICA__GRU_R = 1, MICA__GRU_H = 2 };

/* Inputs by position. */
enum { MICA__RNN_IN_X = 0, MICA__RNN_IN_H = 1, MICA__RNN_IN_C = 2,
       MICA__RNN_IN_LENS = 3 };

/*
 * The params of one layer, checked by create().  The weights point into
 * the layer's own fields (valid as long as the layer).  In skip mode `w`
 * has no entries for layer 0: w_entry() says where a layer's are.
 * wb and rb are NULL when the biases are absent (zeros).
 */
typedef struct mica__rnn {
    int op;
    int32_t layers;       /* L */
    int32_t hidden;       /* H */
    int32_t max_seq;
    int32_t dirs;         /* D: 1 or 2 */
    int32_t skip;         /* input_mode skip */
    int32_t gates;        /* G: 1, 4 or 3 */
    int64_t input_size;   /* E: from weights[0], or H in skip mode */
    const mica_weights_t *w, *r, *wb, *rb;
} mica__rnn_t;

/* Gates of an op. */
static inline int32_t mica__rnn_gates(int op)
{
    return op == MICA__RNN_LSTM ? 4 : op == MICA__RNN_GRU ? 3 : 1;
}

/* The input weights of layer l, direction d; NULL in skip mode's layer 0
 * (the identity). */
static inline const mica_weights_t *mica__rnn_w(const mica__rnn_t *p,
                                                int32_t l, int32_t d)
{
    if (p->skip)
        return l == 0 ? NULL : &p->w[(l - 1) * p->dirs + d];
    return &p->w[l * p->dirs + d];
}

/* Input size of layer l: E for the first, D*H after it. */
static inline int64_t mica__rnn_in_size(const mica__rnn_t *p, int32_t l)
{
    return l == 0 ? p->input_size : (int64_t)p->dirs * p->hidden;
}

/*
 * Read and check the params of `fields` into *p (weights pointing into
 * `fields`): 1, or 0 with err set naming the list, the entry and both
 * sizes.
 */
int mica__rnn_read_params(const mica_fields_t *fields, mica__rnn_t *p,
                          mica_error_t *err);

/*
 * The shapes of one run, from the descriptors: X [N..., T, E], batch the
 * product of N..., and which optional inputs are given.
 */
typedef struct mica__rnn_run {
    int64_t batch, steps, in_size;
    int has_h, has_c, has_lens;
    mica_dtype_t dtype;
} mica__rnn_run_t;

/*
 * Check the run's descriptors against the params (ranks, sizes, types of
 * the inputs given, and T <= max_seq_length) and fill *run.  Fails with
 * one line naming the input and both sizes.
 */
mica_status_t mica__rnn_check_run(const mica__rnn_t *p,
                                  const mica_tensor_desc_t *in, int32_t nb_in,
                                  const void *const *inputs,
                                  mica__rnn_run_t *run, mica_error_t *err);

/* Whether every length is within 1..steps; else fails naming the first
 * one that is not. */
mica_status_t mica__rnn_check_lens(const int32_t *lens, int64_t batch,
                                   int64_t steps, mica_error_t *err);

/* Bytes of host scratch the reference needs for up to `steps` steps. */
size_t mica__rnn_ref_workspace(const mica__rnn_t *p, int64_t steps);

/*
 * The CPU reference: outputs[0] Y, outputs[1] final hidden, outputs[2]
 * final cell (LSTM), from the inputs of a checked run.  Sums in double,
 * keeps the states in double, rounds each output once.  `ws` holds
 * mica__rnn_ref_workspace(p, run->steps) bytes.
 */
mica_status_t mica__rnn_reference(const mica__rnn_t *p,
                                  const mica__rnn_run_t *run,
                                  const void *const *inputs,
                                  void *const *outputs, void *ws,
                                  mica_error_t *err);

/* ---- oneDNN (rnn_onednn.c), where configure found it -------------------- */

#ifdef MICA_HAVE_ONEDNN
/* One instance's oneDNN state (NULL until its first run). */
typedef struct mica__rnn_dnnl mica__rnn_dnnl_t;

/*
 * Run a checked run through oneDNN's RNN primitives where they compute
 * it (float32, input mode linear, every sequence of length T): *taken 1.
 * *taken 0 (MICA_OK): the caller runs the reference (also where oneDNN
 * cannot be loaded: a warning naming layer `name`, once).
 */
mica_status_t mica__rnn_dnnl_run(mica__rnn_dnnl_t **state, const char *name,
                                 const mica__rnn_t *p,
                                 const mica__rnn_run_t *run,
                                 const void *const *inputs,
                                 void *const *outputs, int *taken,
                                 mica_error_t *err);
void mica__rnn_dnnl_free(mica__rnn_dnnl_t *state, const mica__rnn_t *p);
#endif

/* ---- cuDNN (rnn_cudnn.c), with CUDA and cuDNN only ---------------------- */

/* One layer instance's cuDNN state: handle, descriptors, weight space. */
typedef struct mica__rnn_cudnn mica__rnn_cudnn_t;

/*
 * Make or update *s for runs of `dtype` with at most `max_batch`
 * sequences of at most `max_steps` steps: opens cuDNN, sets the RNN
 * descriptor, sizes the scratch.  No weights yet (see _initialize).
 */
mica_status_t mica__rnn_cudnn_configure(mica__rnn_cudnn_t **s,
                                        const mica__rnn_t *p,
                                        mica_dtype_t dtype, int64_t max_batch,
                                        int64_t max_steps, mica_error_t *err);

/* Workspace bytes enqueue needs within the configured bounds. */
size_t mica__rnn_cudnn_workspace(const mica__rnn_cudnn_t *s,
                                 const mica__rnn_t *p);

/* Pack the weights into cuDNN's weight space (once per instance), in
 * cuDNN's gate order and the configured dtype. */
mica_status_t mica__rnn_cudnn_initialize(mica__rnn_cudnn_t *s,
                                         const mica__rnn_t *p, void *stream,
                                         mica_error_t *err);

/* Run one checked run on `stream`. */
mica_status_t mica__rnn_cudnn_enqueue(mica__rnn_cudnn_t *s,
                                      const mica__rnn_t *p,
                                      const mica__rnn_run_t *run,
                                      const void *const *inputs,
                                      void *const *outputs, void *workspace,
                                      void *stream, mica_error_t *err);

/* Free *s's handle, descriptors and memory (NULL: nothing). */
void mica__rnn_cudnn_destroy(mica__rnn_cudnn_t *s);

/* ---- kernels (rnn_cuda.cu) ---------------------------------------------- */

/* dst[i] = value for i < n, on `stream`. */
mica_status_t mica__rnn_cuda_fill_i32(int32_t *dst, int64_t n, int32_t value,
                                      void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_RNN_H */
