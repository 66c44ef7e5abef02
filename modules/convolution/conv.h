/*
 * modules/convolution/conv.h - what the implementations of Convolution
 * and Deconvolution share: the layer's params, the problem of one run,
 * and each implementation's entry points.
 *
 * Layouts (row-major, channels first): the input is [..., C, (D,) H, W],
 * every dimension before C a batch dimension; the output [..., M, (D,)
 * H', W'].  Convolution's kernel is [M, C/G, (kD,) kH, kW]; Deconvolution's
 * [C, M/G, (kD,) kH, kW] (ONNX's ConvTranspose): input channel c of group
 * g = c / (C/G) feeds output maps g*M/G .. (g+1)*M/G - 1.  A 2D problem is
 * a 3D one of depth 1 (see kit_window.h).
 */
#ifndef MICA_MOD_CONV_H
#define MICA_MOD_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"
#include "kit_window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The params of one layer, read and checked once at create. */
typedef struct mica__conv_params {
    int32_t deconv;      /* 1: Deconvolution */
    mica__window_t win;
    int64_t m;           /* num_output_maps */
    int64_t groups;
    int64_t c;           /* input channels, as the kernel's size implies */
    int64_t kvol;        /* kD * kH * kW */
    const mica_weights_t *kernel; /* NULL: input 1 (TensorRT 10's kernel
                                     input), a bias then input 2 */
    const mica_weights_t *bias; /* NULL: none */
} mica__conv_params_t;

/* One run: the params and the sizes of the tensors. */
typedef struct mica__conv_problem {
    const mica__conv_params_t *p;
    mica_dtype_t dtype;  /* of input and output: float32 or float16 */
    int64_t n;           /* batch: the product of the dimensions before C */
    int64_t c, m;        /* input channels, output maps */
    int64_t in[3], out[3]; /* spatial sizes, depth 1 for 2D */
} mica__conv_problem_t;

/* The problem of input dims `x` (checked by shape inference). */
void mica__conv_problem(const mica__conv_params_t *p, mica_dtype_t dtype,
                        const mica_dims_t *x, mica__conv_problem_t *pb);

/* Element i of weights w as a float (float32 or float16 weights). */
float mica__conv_weight(const mica_weights_t *w, int64_t i);

/* The CPU reference (conv_ref.c): y from x, the layout above. */
void mica__conv_reference(const mica__conv_problem_t *pb, const void *x,
                          void *y);

/* ---- oneDNN (conv_onednn.c) ------------------------------------------- */

/* The oneDNN state of one layer instance: primitives for the last shape
 * seen, the weights in oneDNN's layout (kit_onednn.h's cache). */
typedef struct mica__dnnl_cache mica__conv_dnnl_t;

/* y from x; with `nhwc`, both channels last (a 2D Convolution with
 * input channels: mica__conv_dnnl_formats). */
mica_status_t mica__conv_dnnl_run(mica__conv_dnnl_t **state,
                                  const mica__conv_problem_t *pb, int nhwc,
                                  const void *x, void *y, mica_error_t *err);
void mica__conv_dnnl_free(mica__conv_dnnl_t *state);

/* Whether mica__conv_dnnl_run_post takes pb: a float32 Convolution with
 * input channels. */
int mica__conv_dnnl_post_takes(const mica__conv_problem_t *pb);

/*
 * As mica__conv_dnnl_run with a FusedConvolution's epilogue: y =
 * conv(x) + acc (acc NULL: nothing added; else float32 of y's size and
 * layout, y itself or apart from it; oneDNN's sum post-op), then with
 * `relu` y < 0 ? 0 : y (NaN stays NaN; on the host).  Float32 only (see
 * mica__conv_dnnl_post_takes).
 */
mica_status_t mica__conv_dnnl_run_post(mica__conv_dnnl_t **state,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, const float *x,
                                       const float *acc, int relu, float *y,
                                       mica_error_t *err);

/* ---- CUDA (conv_cuda.cu: hand-written kernels) ------------------------ */

/*
 * y from x on `stream`, one thread per output element: w and bias are
 * device arrays of the I/O type (bias may be NULL).  Takes every problem
 * of Convolution and Deconvolution: channels first (x, y and w in
 * mica's layouts), or with `nhwc` channels last, x [N, (D,) H, W, C], y
 * [N, (D',) H', W', M] and w in K(RS)C order, [A, k..., B] for mica's
 * [A, B, k...] (as cuDNN's NHWC filters; see mica__conv_gpu_set_nhwc).
 */
mica_status_t mica__conv_cuda(const mica__conv_problem_t *pb, int nhwc,
                              const void *x, const void *w, const void *bias,
                              void *y, void *stream, mica_error_t *err);

/* Fill n values of `dtype` at device address p with noise in [-1, 1)
 * on `stream` (for timing cuDNN's algorithms on data that is not zeros). */
mica_status_t mica__conv_cuda_fill(void *p, int64_t n, mica_dtype_t dtype,
                                   void *stream, mica_error_t *err);

/* ---- the CUDA state of both CUDA implementations (conv_gpu.c) --------- */

/*
 * The algorithm: a cuDNN algorithm (cudnnConvolutionFwdAlgo_t for
 * Convolution, cudnnConvolutionBwdDataAlgo_t for Deconvolution), or
 * MICA__CONV_DIRECT for the hand-written kernel; -1 until chosen.  The
 * cudnn implementation's tactics (mica/layer.h) are these algorithms:
 * tactic id = algorithm + 1 (ids are positive), so the kernel is 101;
 * and, for Convolution, the engine configurations of cuDNN's graph API
 * (conv_graph.c), ids from MICA__CG_TACTIC_BASE up.
 */
#define MICA__CONV_DIRECT 100
#define MICA__CONV_TACTIC(algo_) ((int32_t)(algo_) + 1)
#define MICA__CG_TACTIC_BASE 0x40000000
#define MICA__CG_IS_TACTIC(t_) ((int32_t)(t_) >= MICA__CG_TACTIC_BASE)
/* A FusedConvolution's tactic that runs a configuration of the
 * convolution and bias alone, then the epilogue kernel (what the layer
 * costs unfused, less a pass: autotune keeps it where cuDNN's fused
 * configurations are slower); the configuration's id without the bit. */
#define MICA__CG_PLAIN 0x20000000
#define MICA__CG_CONFIG(t_) ((int32_t)(t_) & ~MICA__CG_PLAIN)

/* What a graph-API plan computes after the convolution, as bits: + the
 * bias ([M] values), + an addend a of [1, M, 1...] (a per-map bias
 * tensor), + an addend z of y's shape and layout, then ReLU (in that
 * order, in float32). */
enum {
    MICA__CG_BIAS = 1,
    MICA__CG_Z = 2,
    MICA__CG_RELU = 4,
    MICA__CG_A = 8
};

typedef struct mica__conv_gpu mica__conv_gpu_t;

/* The state (NULL: out of memory); `use_cudnn` 0 for the hand-written
 * implementation alone. */
mica__conv_gpu_t *mica__conv_gpu_new(int use_cudnn);
void mica__conv_gpu_free(mica__conv_gpu_t *g);

/*
 * The tactics of a cudnn state configured at least once (0 before, and
 * for the hand-written implementation), up to `max` ids: first the
 * algorithm the choice takes at the opt shapes of the last configure
 * (mica__conv_dnn_choose), then the others heuristics rank as running
 * within the workspace cap, the FFT algorithms left out; the kernel's
 * tactic alone where cuDNN runs none of them.
 */
int32_t mica__conv_gpu_tactics(mica__conv_gpu_t *g, int32_t *ids,
                               int32_t max);
/* Use tactic `tactic` from now on: one of cuDNN's algorithms of the
 * layer's kind that the choice does not leave out, or the kernel's;
 * anything else fails (a cuda state has no tactics). */
mica_status_t mica__conv_gpu_set_tactic(mica__conv_gpu_t *g, int deconv,
                                        int32_t tactic, mica_error_t *err);

/*
 * The channels-last switch: with it, x and y are N(D)HWC (MICA_FORMAT_HWC
 * or DHWC), cuDNN gets NHWC descriptors and the weights are uploaded in
 * K(RS)C order, which the kernel reads too.  The layer sets it from its
 * input's format at configure (before the choice of algorithm) and at
 * each enqueue (a no-op unless it changed; then the weights are uploaded
 * again by mica__conv_gpu_init).
 */
void mica__conv_gpu_set_nhwc(mica__conv_gpu_t *g, int nhwc);

/*
 * The epilogue (MICA__CG_* bits) a FusedConvolution fuses into the
 * convolution where cuDNN's graph API takes it: its tactics are those of
 * that graph.  Set before configure; without it, the bias alone (where
 * the layer has one).
 */
void mica__conv_gpu_set_epilogue(mica__conv_gpu_t *g, int32_t epi);

/*
 * Choose the algorithm (the quickest cuDNN times at `opt`, see
 * mica__conv_dnn_choose) unless one is set, and record the workspace
 * enqueue may use: the most the algorithm needs at `opt` and at `hi`
 * (the profile's largest shapes).
 */
mica_status_t mica__conv_gpu_configure(mica__conv_gpu_t *g,
                                       const mica__conv_problem_t *opt,
                                       const mica__conv_problem_t *hi,
                                       mica_error_t *err);
/* The workspace bytes recorded by configure. */
size_t mica__conv_gpu_workspace(const mica__conv_gpu_t *g);

/* Upload the weights in `dtype` (once; again if the type changes). */
mica_status_t mica__conv_gpu_init(mica__conv_gpu_t *g,
                                  const mica__conv_params_t *p,
                                  mica_dtype_t dtype, mica_error_t *err);

/* Run: the chosen cuDNN algorithm where cuDNN takes the problem (one
 * without workspace if the recorded workspace is short), else the
 * hand-written kernel.  Which of them runs is worked out when the shape
 * changes, not at every run. */
mica_status_t mica__conv_gpu_run(mica__conv_gpu_t *g,
                                 const mica__conv_problem_t *pb,
                                 const void *x, void *y, void *workspace,
                                 void *stream, mica_error_t *err);

/* ---- cuDNN's graph API (conv_graph.c) ---------------------------------- */

/* One finalized execution plan, kept by conv_graph.c for the process. */
typedef struct mica__cg_plan mica__cg_plan_t;

/* Whether the graph API may take pb: a 2D or 3D Convolution in float32
 * or float16 without empty dimensions. */
int mica__cg_takes(const mica__conv_problem_t *pb);
/*
 * The engine configurations heuristics rank for pb with epilogue `epi`
 * (MICA__CG_*), best first, as tactic ids, up to max; 0 where cuDNN has
 * none (or cannot be opened).  Not yet planned: a configuration cuDNN
 * then refuses to plan is skipped where it would run.
 */
int32_t mica__cg_tactics(const mica__conv_problem_t *pb, int nhwc,
                         int32_t epi, int32_t *ids, int32_t max);
/*
 * The plan of configuration `tactic` (0, or one not found or not
 * planned: heuristics' first that cuDNN plans) for pb and epi, needing
 * at most ws_cap bytes of workspace (*ws gets them); planned on first
 * use, kept per calling thread (its cuDNN handle) and problem.
 * MICA_ERR_UNSUPPORTED where none will do.
 */
mica_status_t mica__cg_plan(const mica__conv_problem_t *pb, int nhwc,
                            int32_t epi, int32_t tactic, size_t ws_cap,
                            mica__cg_plan_t **plan, size_t *ws,
                            mica_error_t *err);
/* The tactic id of a plan's configuration. */
int32_t mica__cg_plan_tactic(const mica__cg_plan_t *p);
/* Whether a device pointer has the alignment plans assume (16 bytes). */
int mica__cg_aligned(const void *p);
/*
 * Run a plan on `stream`: y = relu?(conv(x, w) + bias? + a? + z?), as its
 * epilogue says; w and bias device arrays of the I/O type, a of M values
 * of the I/O type, z of y's shape and layout.  MICA_ERR_UNSUPPORTED, err
 * untouched, when the plan belongs to another thread's handle or a
 * pointer lacks the alignment: plan again.
 */
mica_status_t mica__cg_run(mica__cg_plan_t *p, const void *x, const void *w,
                           const void *bias, const void *a, const void *z,
                           void *y, void *workspace, void *stream,
                           mica_error_t *err);

/* ---- cuDNN (conv_cudnn.c) ---------------------------------------------- */

/* cuDNN's descriptors of one instance, set for the last problem. */
typedef struct mica__conv_dnn mica__conv_dnn_t;

mica__conv_dnn_t *mica__conv_dnn_new(void);
void mica__conv_dnn_free(mica__conv_dnn_t *d);
/* Whether cuDNN computes pb as mica does: symmetric padding, no empty
 * dimension, sizes within int. */
int mica__conv_dnn_takes(const mica__conv_problem_t *pb);
/*
 * The algorithm for pb, timed by cuDNN (cudnnFind...Ex) on scratch
 * buffers of pb's sizes with the workspace heuristics ask for within
 * `ws_cap` bytes: the quickest, or within 3% of it the one needing least
 * workspace, the FFT algorithms left out (see conv_cudnn.c).  Where the
 * memory to time it is lacking, heuristics' first choice within ws_cap;
 * MICA__CONV_DIRECT when cuDNN has none.  Kept per process and problem:
 * the same problem again costs nothing.
 */
mica_status_t mica__conv_dnn_choose(mica__conv_dnn_t *d,
                                    const mica__conv_problem_t *pb, int nhwc,
                                    size_t ws_cap, int32_t *algo,
                                    mica_error_t *err);
/*
 * Heuristics' ranking for pb (cudnnGet..._v7): the algorithms that run
 * within `ws_cap` bytes of workspace, the FFT ones left out, in their
 * order, up to `max` into algos; how many (0 where cuDNN cannot say).
 */
int32_t mica__conv_dnn_algos(mica__conv_dnn_t *d,
                             const mica__conv_problem_t *pb, int nhwc,
                             size_t ws_cap, int32_t *algos, int32_t max);
/* Whether algo is one of cuDNN's algorithms for Convolution (deconv 0)
 * or Deconvolution (1) that the choice does not leave out. */
int mica__conv_dnn_known(int deconv, int32_t algo);
/* The workspace of algo for pb; MICA_ERR_UNSUPPORTED if it cannot run
 * it. */
mica_status_t mica__conv_dnn_workspace(mica__conv_dnn_t *d,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, int32_t algo, size_t *bytes,
                                       mica_error_t *err);
/* The algorithm that needs no workspace (implicit GEMM, or algo 0). */
int32_t mica__conv_dnn_plain_algo(const mica__conv_problem_t *pb);
/* y from x with algo; w and bias device arrays of the I/O type. */
mica_status_t mica__conv_dnn_run(mica__conv_dnn_t *d,
                                 const mica__conv_problem_t *pb, int nhwc,
                                 int32_t algo, const void *x, const void *w,
                                 const void *bias, void *y, void *workspace,
                                 size_t ws_bytes, void *stream,
                                 mica_error_t *err);

/* ---- FusedConvolution on cuDNN's fused engine (fused_conv.c) ----------- */

/*
 * What mica__conv_gpu_run would run pb with (run with or without
 * workspace): the cuDNN algorithm (MICA__CONV_DIRECT: the hand-written
 * kernel), cuDNN's descriptors *dnn, the device weights *w and bias *b
 * (NULL: none), the workspace bytes *ws it takes and whether the layout
 * is channels last (*nhwc).  With cuDNN only (conv_gpu.c).
 */
int32_t mica__conv_gpu_cudnn(mica__conv_gpu_t *g,
                             const mica__conv_problem_t *pb,
                             int have_workspace, mica__conv_dnn_t **dnn,
                             const void **w, const void **b, size_t *ws,
                             int *nhwc, mica_error_t *err);

/*
 * The layer's whole epilogue (mica__conv_gpu_set_epilogue) fused by the
 * graph API's plan of its tactic: y = relu?(conv(x) + bias + a? + z?),
 * a (NULL: none) of [1, M, 1...], z (NULL: none) of y's shape and
 * layout.  *done 0, nothing queued, where the state runs no fused graph
 * configuration (a legacy algorithm, a MICA__CG_PLAIN tactic) or the
 * epilogue does not match (the caller then runs the convolution and its
 * epilogue apart).
 */
mica_status_t mica__conv_gpu_run_epilogue(mica__conv_gpu_t *g,
                                          const mica__conv_problem_t *pb,
                                          const void *x, const void *a,
                                          const void *z, void *y,
                                          void *workspace, void *stream,
                                          int *done, mica_error_t *err);

/*
 * y = act(conv(x) + z + bias) in one call (cudnnConvolutionBias-
 * ActivationForward; conv_cudnn.c): a Convolution (NCHW, or NHWC with
 * `nhwc`, z in the same layout) with
 * algorithm `algo`, `bias` of M values (required), z of y's shape (NULL:
 * none), act ReLU (`relu`) or nothing.  MICA_ERR_UNSUPPORTED, err
 * untouched, where cuDNN's fused engine does not take it (no bias, a
 * Deconvolution, no ReLU with another algorithm than implicit precomp
 * GEMM, or cuDNN refuses the call: not supported, or a bad param): the
 * caller runs the convolution and its epilogue apart.
 */
mica_status_t mica__conv_dnn_run_fused(mica__conv_dnn_t *d,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, int32_t algo, const void *x,
                                       const void *w, const void *bias,
                                       const void *z, int relu, void *y,
                                       void *workspace, size_t ws_bytes,
                                       void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_CONV_H */
