/*
 * modules/common/kit_onednn.h - oneDNN for the modules' CPU
 * implementations: the library opened on first use, one CPU engine, and a
 * runner that executes one primitive on plain (row-major) float32 or
 * float16 buffers.  Part of the module kit's CNN helpers
 * (libmicamodkit_nn.la), built when configure found oneDNN's headers; not
 * installed.
 *
 * oneDNN (libdnnl.so.<major>) is not linked: like cuBLAS and cuDNN it is
 * opened with the kit's loader the first time a layer is created, so that
 * loading a module maps neither it nor its OpenMP and OpenCL libraries,
 * and a module built with oneDNN still loads where it is missing (its
 * oneDNN layers then fail to build, saying so).  Its functions are called
 * through the table `mica__dnnl`, typed by dnnl.h's prototypes.
 *
 * The runner (mica__dnnl_run_t) takes a primitive descriptor whose source
 * and destination may be in any layout (oneDNN's choice: blocked layouts
 * are its fast ones) and its weights and bias as plain float32 arrays:
 * it reorders the weights once into the primitive's layout, and at each
 * run the source in and the destination out around the primitive when
 * their layouts are not plain.  float16 data is converted to float32
 * copies (oneDNN's CPU kernels compute float32 here).
 *
 * Post-ops (mica__dnnl_post_sum): a primitive made with a sum post-op
 * adds the destination's prior values to its result; its runner then
 * runs with an accumulator (mica__dnnl_run_exec_acc), a plain float32
 * tensor of the destination's size that is put into the destination
 * (reordered into the primitive's layout where that is not plain)
 * before the primitive runs.
 */
#ifndef MICA_KIT_ONEDNN_H
#define MICA_KIT_ONEDNN_H

#include <stddef.h>
#include <stdint.h>

#include <dnnl.h>
#include <dnnl_debug.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The oneDNN functions the modules call, filled by mica__dnnl_open. */
typedef struct mica__dnnl_table {
    MICA_KIT_FN(dnnl_engine_create) engine_create;
    MICA_KIT_FN(dnnl_stream_create) stream_create;
    MICA_KIT_FN(dnnl_stream_wait) stream_wait;
    MICA_KIT_FN(dnnl_stream_destroy) stream_destroy;
    MICA_KIT_FN(dnnl_memory_desc_init_by_tag) md_by_tag;
    MICA_KIT_FN(dnnl_memory_desc_init_by_strides) md_by_strides;
    MICA_KIT_FN(dnnl_memory_desc_equal) md_equal;
    MICA_KIT_FN(dnnl_memory_desc_get_size) md_size;
    MICA_KIT_FN(dnnl_memory_create) memory_create;
    MICA_KIT_FN(dnnl_memory_set_data_handle) memory_set;
    MICA_KIT_FN(dnnl_memory_get_data_handle) memory_get;
    MICA_KIT_FN(dnnl_memory_destroy) memory_destroy;
    MICA_KIT_FN(dnnl_memory_get_memory_desc) memory_md;
    MICA_KIT_FN(dnnl_primitive_desc_create) pd_create;
    MICA_KIT_FN(dnnl_primitive_desc_query_md) pd_query_md;
    MICA_KIT_FN(dnnl_primitive_desc_destroy) pd_destroy;
    MICA_KIT_FN(dnnl_primitive_create) primitive_create;
    MICA_KIT_FN(dnnl_primitive_execute) execute;
    MICA_KIT_FN(dnnl_primitive_destroy) primitive_destroy;
    MICA_KIT_FN(dnnl_reorder_primitive_desc_create) reorder_pd;
    MICA_KIT_FN(dnnl_dilated_convolution_forward_desc_init) conv_desc;
    MICA_KIT_FN(dnnl_dilated_deconvolution_forward_desc_init) deconv_desc;
    MICA_KIT_FN(dnnl_pooling_v2_forward_desc_init) pool_desc;
    MICA_KIT_FN(dnnl_lrn_forward_desc_init) lrn_desc;
    MICA_KIT_FN(dnnl_inner_product_forward_desc_init) ip_desc;
    MICA_KIT_FN(dnnl_matmul_desc_init) matmul_desc;
    MICA_KIT_FN(dnnl_status2str) status_text;
    MICA_KIT_FN(dnnl_engine_destroy) engine_destroy;
    MICA_KIT_FN(dnnl_primitive_attr_create) attr_create;
    MICA_KIT_FN(dnnl_primitive_attr_destroy) attr_destroy;
    MICA_KIT_FN(dnnl_primitive_attr_set_post_ops) attr_set_post_ops;
    MICA_KIT_FN(dnnl_post_ops_create) post_ops_create;
    MICA_KIT_FN(dnnl_post_ops_destroy) post_ops_destroy;
    MICA_KIT_FN(dnnl_post_ops_append_sum) post_ops_append_sum;
    MICA_KIT_FN(dnnl_binary_desc_init) binary_desc;
    MICA_KIT_FN(dnnl_vanilla_rnn_forward_desc_init) rnn_desc;
    MICA_KIT_FN(dnnl_lstm_forward_desc_init) lstm_desc;
    MICA_KIT_FN(dnnl_lbr_gru_forward_desc_init) lbr_gru_desc;
} mica__dnnl_table_t;

extern MICA_KIT_API mica__dnnl_table_t mica__dnnl;

/*
 * Open oneDNN (once) and make the module's CPU engine: MICA_OK, or
 * MICA_ERR_NOT_FOUND / MICA_ERR_DEVICE with err set ("oneDNN is needed
 * but cannot be loaded: ...").  Call it from a layer's create.
 */
MICA_KIT_API mica_status_t mica__dnnl_open(mica_error_t *err);

/* The CPU engine (after a successful mica__dnnl_open). */
MICA_KIT_API dnnl_engine_t mica__dnnl_engine(void);

/*
 * Check a oneDNN call in a function returning mica_status_t with `err`
 * in scope: "dnnl_primitive_create(...) failed: unimplemented
 * (conv_onednn.c:42)" and MICA_ERR_UNSUPPORTED for an unimplemented
 * primitive, MICA_ERR_DEVICE otherwise.  Jumps to `fail` with st set
 * (the function's one cleanup label).
 */
#define MICA__DNNL_TRY(call)                                                \
    do {                                                                    \
        dnnl_status_t dnnl_s_ = (call);                                     \
        if (dnnl_s_ != dnnl_success) {                                      \
            mica_kit_host->set_error(err, "%s failed: %s (%s:%d)", #call,   \
                                     mica__dnnl.status_text(dnnl_s_),       \
                                     __FILE__, __LINE__);                   \
            st = dnnl_s_ == dnnl_unimplemented ? MICA_ERR_UNSUPPORTED       \
                                               : MICA_ERR_DEVICE;           \
            goto fail;                                                      \
        }                                                                   \
    } while (0)

/* A plain (row-major) float32 memory descriptor of n dims. */
MICA_KIT_API mica_status_t mica__dnnl_plain(dnnl_memory_desc_t *md, int n,
                                            const int64_t *dims,
                                            mica_error_t *err);

/* One primitive with plain I/O (see the file's comment). */
typedef struct mica__dnnl_run {
    dnnl_stream_t stream;
    dnnl_primitive_t prim;
    dnnl_primitive_t reorder_in, reorder_out; /* NULL: plain already */
    dnnl_memory_t src_user, dst_user;         /* plain, the caller's data */
    dnnl_memory_t src, dst;                   /* the primitive's layouts */
    dnnl_memory_t weights, bias;              /* NULL: none */
    int64_t src_count, dst_count, w_count;    /* elements */
    float *src32, *dst32, *w32;               /* float16 I/O copies */
    int32_t has_weights, has_bias;
    dnnl_primitive_t reorder_acc;  /* accumulator into dst, made at its
                                    * first run where dst is not plain */
    dnnl_memory_t acc_user;        /* plain, the accumulator's data */
    dnnl_memory_t src1_user;       /* a binary primitive's second source
                                    * (mica__dnnl_run_src1); NULL: none */
} mica__dnnl_run_t;

/*
 * The attributes of a primitive with a sum post-op: y = result + y's
 * prior values (the accumulator of mica__dnnl_run_exec_acc).  The
 * caller passes *attr to dnnl_primitive_desc_create and destroys it
 * (mica__dnnl.attr_destroy).  oneDNN's ReLU post-op is not offered: it
 * makes NaN of -inf (0 * -inf), where Activation's relu gives 0.
 */
MICA_KIT_API mica_status_t mica__dnnl_post_sum(dnnl_primitive_attr_t *attr,
                                               mica_error_t *err);

/*
 * Make `run` from primitive descriptor `pd` (consumed: destroyed here,
 * also on failure): `src_plain` and `dst_plain` are the plain layouts of
 * the caller's buffers; `weights_plain` (NULL: none) describes `weights`,
 * float32 values reordered now into the primitive's layout, or, with
 * `weights` NULL, the layout of weights that every run passes
 * (mica__dnnl_run_exec2: the primitive must take that layout);
 * `bias_count` float32 values of `bias` (NULL: none) are copied.  On
 * failure the run is freed and zeroed.
 */
MICA_KIT_API mica_status_t mica__dnnl_run_make(
    mica__dnnl_run_t *run, dnnl_primitive_desc_t pd,
    const dnnl_memory_desc_t *src_plain, const dnnl_memory_desc_t *dst_plain,
    const dnnl_memory_desc_t *weights_plain, const float *weights,
    const float *bias, int64_t bias_count, mica_error_t *err);

/*
 * Run on x (src_count elements) into y (dst_count), both of `dtype`
 * (float32 or float16), and wait for it.
 */
MICA_KIT_API mica_status_t mica__dnnl_run_exec(mica__dnnl_run_t *run,
                                               mica_dtype_t dtype,
                                               const void *x, void *y,
                                               mica_error_t *err);

/* As mica__dnnl_run_exec with the weights `w` of this run (of `dtype`,
 * in the layout run_make was given). */
MICA_KIT_API mica_status_t mica__dnnl_run_exec2(mica__dnnl_run_t *run,
                                                mica_dtype_t dtype,
                                                const void *x, const void *w,
                                                void *y, mica_error_t *err);

/*
 * As mica__dnnl_run_exec, float32 only, for a primitive made with a sum
 * post-op (mica__dnnl_post_sum): `acc` (dst_count float32 values, the
 * caller's plain layout; it may be y itself) is what the primitive adds
 * its result to.  y and acc are the same buffer or do not overlap.
 */
MICA_KIT_API mica_status_t mica__dnnl_run_exec_acc(mica__dnnl_run_t *run,
                                                   const float *x,
                                                   const float *acc,
                                                   float *y,
                                                   mica_error_t *err);

/*
 * A second source for a binary primitive's runner (after run_make, which
 * is given the first source): described by `md`, the layout of the data
 * every run passes (mica__dnnl_run_exec_binary), which the primitive
 * must take as it is (no reorder).
 */
MICA_KIT_API mica_status_t mica__dnnl_run_src1(mica__dnnl_run_t *run,
                                               const dnnl_memory_desc_t *md,
                                               mica_error_t *err);

/* Run a binary primitive's runner on float32 x0 and x1 into y. */
MICA_KIT_API mica_status_t mica__dnnl_run_exec_binary(mica__dnnl_run_t *run,
                                                      const float *x0,
                                                      const float *x1,
                                                      float *y,
                                                      mica_error_t *err);

/* Release everything of run and zero it (a zeroed run: nothing). */
MICA_KIT_API void mica__dnnl_run_free(mica__dnnl_run_t *run);

/*
 * A layer's runner kept for the last shape it ran: the onednn state of an
 * instance (its layer holds a pointer, NULL until the first run).
 */
typedef struct mica__dnnl_cache mica__dnnl_cache_t;

/* Make `run` for `problem` (a module's own type), as mica__dnnl_run_make
 * does: on failure the run is left freed. */
typedef mica_status_t mica__dnnl_make_fn(mica__dnnl_run_t *run,
                                         const void *problem,
                                         mica_error_t *err);

/*
 * The runner of *cache for `key` (key_size bytes, what decides the
 * primitive; the same size at every call on a cache) into *run: at the
 * first call oneDNN is opened and *cache allocated; `make` (given
 * `problem`) makes the runner when none is made yet, or again when `key`
 * differs from the one it was made for.  Then the caller runs it
 * (mica__dnnl_run_exec or _exec2).  A failed make leaves none made: the
 * next call tries again.
 */
MICA_KIT_API mica_status_t mica__dnnl_cached(mica__dnnl_cache_t **cache,
                                             const void *key,
                                             size_t key_size,
                                             mica__dnnl_make_fn *make,
                                             const void *problem,
                                             mica__dnnl_run_t **run,
                                             mica_error_t *err);

/* Release a cache and its runner (NULL: nothing). */
MICA_KIT_API void mica__dnnl_cache_free(mica__dnnl_cache_t *cache);

/*
 * Weights as float32: `w` itself when it is float32, else a malloc'd
 * converted copy in *owned (free it); NULL if memory runs out.
 */
MICA_KIT_API const float *mica__dnnl_floats(const mica_weights_t *w,
                                            float **owned);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_ONEDNN_H */
