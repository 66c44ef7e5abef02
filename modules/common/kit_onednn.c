/*
 * modules/common/kit_onednn.c - oneDNN opened on first use, the CPU
 * engine, and the runner of one primitive on plain buffers (see
 * kit_onednn.h).
 */
#include <config.h>

#include "kit_onednn.h"
#include "kit_cpu.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit_half.h"

MICA_KIT_API mica__dnnl_table_t mica__dnnl;

static const mica_kit_sym_t dnnl_syms[] = {
    MICA_KIT_SYM(mica__dnnl, engine_create, "dnnl_engine_create"),
    MICA_KIT_SYM(mica__dnnl, stream_create, "dnnl_stream_create"),
    MICA_KIT_SYM(mica__dnnl, stream_wait, "dnnl_stream_wait"),
    MICA_KIT_SYM(mica__dnnl, stream_destroy, "dnnl_stream_destroy"),
    MICA_KIT_SYM(mica__dnnl, md_by_tag, "dnnl_memory_desc_init_by_tag"),
    MICA_KIT_SYM(mica__dnnl, md_by_strides,
                 "dnnl_memory_desc_init_by_strides"),
    MICA_KIT_SYM(mica__dnnl, md_equal, "dnnl_memory_desc_equal"),
    MICA_KIT_SYM(mica__dnnl, md_size, "dnnl_memory_desc_get_size"),
    MICA_KIT_SYM(mica__dnnl, memory_create, "dnnl_memory_create"),
    MICA_KIT_SYM(mica__dnnl, memory_set, "dnnl_memory_set_data_handle"),
    MICA_KIT_SYM(mica__dnnl, memory_get, "dnnl_memory_get_data_handle"),
    MICA_KIT_SYM(mica__dnnl, memory_destroy, "dnnl_memory_destroy"),
    MICA_KIT_SYM(mica__dnnl, memory_md, "dnnl_memory_get_memory_desc"),
    MICA_KIT_SYM(mica__dnnl, pd_create, "dnnl_primitive_desc_create"),
    MICA_KIT_SYM(mica__dnnl, pd_query_md, "dnnl_primitive_desc_query_md"),
    MICA_KIT_SYM(mica__dnnl, pd_destroy, "dnnl_primitive_desc_destroy"),
    MICA_KIT_SYM(mica__dnnl, primitive_create, "dnnl_primitive_create"),
    MICA_KIT_SYM(mica__dnnl, execute, "dnnl_primitive_execute"),
    MICA_KIT_SYM(mica__dnnl, primitive_destroy, "dnnl_primitive_destroy"),
    MICA_KIT_SYM(mica__dnnl, reorder_pd,
                 "dnnl_reorder_primitive_desc_create"),
    MICA_KIT_SYM(mica__dnnl, conv_desc,
                 "dnnl_dilated_convolution_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, deconv_desc,
                 "dnnl_dilated_deconvolution_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, pool_desc, "dnnl_pooling_v2_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, lrn_desc, "dnnl_lrn_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, ip_desc, "dnnl_inner_product_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, matmul_desc, "dnnl_matmul_desc_init"),
    MICA_KIT_SYM(mica__dnnl, status_text, "dnnl_status2str"),
    MICA_KIT_SYM(mica__dnnl, engine_destroy, "dnnl_engine_destroy"),
    MICA_KIT_SYM(mica__dnnl, attr_create, "dnnl_primitive_attr_create"),
    MICA_KIT_SYM(mica__dnnl, attr_destroy, "dnnl_primitive_attr_destroy"),
    MICA_KIT_SYM(mica__dnnl, attr_set_post_ops,
                 "dnnl_primitive_attr_set_post_ops"),
    MICA_KIT_SYM(mica__dnnl, post_ops_create, "dnnl_post_ops_create"),
    MICA_KIT_SYM(mica__dnnl, post_ops_destroy, "dnnl_post_ops_destroy"),
    MICA_KIT_SYM(mica__dnnl, post_ops_append_sum, "dnnl_post_ops_append_sum"),
    MICA_KIT_SYM(mica__dnnl, binary_desc, "dnnl_binary_desc_init"),
    MICA_KIT_SYM(mica__dnnl, rnn_desc, "dnnl_vanilla_rnn_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, lstm_desc, "dnnl_lstm_forward_desc_init"),
    MICA_KIT_SYM(mica__dnnl, lbr_gru_desc, "dnnl_lbr_gru_forward_desc_init"),
};

static mica_kit_lib_t dnnl_lib =
    MICA_KIT_LIB("oneDNN", "libdnnl.so." MICA_KIT_STR(DNNL_VERSION_MAJOR),
                 &mica__dnnl, dnnl_syms);

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static dnnl_engine_t engine;

/* The module's fini: the engine goes before the module's code does (the
 * library stays loaded, see mica_kit_lib_open). */
static void engine_release(void)
{
    pthread_mutex_lock(&engine_lock);
    if (engine)
        mica__dnnl.engine_destroy(engine);
    engine = NULL;
    pthread_mutex_unlock(&engine_lock);
}

mica_status_t mica__dnnl_open(mica_error_t *err)
{
    mica_status_t st;
    dnnl_status_t s = dnnl_success;

    /* OpenMP's wait policy, read once when oneDNN loads libgomp */
    mica__cpu_omp_env();
    if ((st = mica_kit_lib_open(&dnnl_lib, err)) != MICA_OK)
        return st;
    pthread_mutex_lock(&engine_lock);
    /* One engine for the module's life, released by its fini. */
    if (!engine) {
        s = mica__dnnl.engine_create(&engine, dnnl_cpu, 0);
        if (s == dnnl_success && mica_kit_at_fini(engine_release) != 0) {
            mica__dnnl.engine_destroy(engine);
            engine = NULL;
            s = dnnl_out_of_memory;
        }
    }
    pthread_mutex_unlock(&engine_lock);
    if (s != dnnl_success) {
        mica_kit_host->set_error(err, "oneDNN cannot make a CPU engine: %s",
                                 mica__dnnl.status_text(s));
        return MICA_ERR_DEVICE;
    }
    return MICA_OK;
}

dnnl_engine_t mica__dnnl_engine(void)
{
    return engine;
}

mica_status_t mica__dnnl_plain(dnnl_memory_desc_t *md, int n,
                               const int64_t *dims, mica_error_t *err)
{
    dnnl_dims_t d, strides;
    mica_status_t st = MICA_OK;
    int i;

    if (n < 1 || n > DNNL_MAX_NDIMS)
        return MICA_KIT_FAIL(err, "oneDNN takes 1 to %d dimensions, not %d",
                             DNNL_MAX_NDIMS, n);
    for (i = n - 1; i >= 0; i--) {
        d[i] = dims[i];
        strides[i] = i == n - 1 ? 1 : strides[i + 1] * d[i + 1];
    }
    MICA__DNNL_TRY(mica__dnnl.md_by_strides(md, n, d, dnnl_f32, strides));
fail:
    return st;
}

mica_status_t mica__dnnl_post_sum(dnnl_primitive_attr_t *attr,
                                  mica_error_t *err)
{
    dnnl_post_ops_t ops = NULL;
    mica_status_t st = MICA_OK;

    *attr = NULL;
    MICA__DNNL_TRY(mica__dnnl.post_ops_create(&ops));
    MICA__DNNL_TRY(mica__dnnl.post_ops_append_sum(ops, 1.0f));
    MICA__DNNL_TRY(mica__dnnl.attr_create(attr));
    MICA__DNNL_TRY(mica__dnnl.attr_set_post_ops(*attr, ops));
fail:
    if (ops)
        mica__dnnl.post_ops_destroy(ops);
    if (st != MICA_OK && *attr) {
        mica__dnnl.attr_destroy(*attr);
        *attr = NULL;
    }
    return st;
}

static int64_t volume(const dnnl_memory_desc_t *md)
{
    int64_t v = 1;
    int i;
    for (i = 0; i < md->ndims; i++)
        v *= md->dims[i];
    return v;
}

/* A reorder primitive from `from` to `to`. */
static mica_status_t make_reorder(dnnl_primitive_t *out,
                                  const dnnl_memory_desc_t *from,
                                  const dnnl_memory_desc_t *to,
                                  mica_error_t *err)
{
    dnnl_primitive_desc_t rpd = NULL;
    mica_status_t st = MICA_OK;

    MICA__DNNL_TRY(
        mica__dnnl.reorder_pd(&rpd, from, engine, to, engine, NULL));
    MICA__DNNL_TRY(mica__dnnl.primitive_create(out, rpd));
fail:
    if (rpd)
        mica__dnnl.pd_destroy(rpd);
    return st;
}

/* *mem in layout md, and a reorder in *prim (from plain to md when
 * `in`, else from md to plain) if md is not plain; else nothing. */
static mica_status_t layout(const dnnl_memory_desc_t *md,
                            const dnnl_memory_desc_t *plain, int in,
                            dnnl_memory_t *mem, dnnl_primitive_t *prim,
                            mica_error_t *err)
{
    mica_status_t st = MICA_OK;

    if (mica__dnnl.md_equal(md, plain))
        return MICA_OK;
    MICA__DNNL_TRY(
        mica__dnnl.memory_create(mem, md, engine, DNNL_MEMORY_ALLOCATE));
    st = make_reorder(prim, in ? plain : md, in ? md : plain, err);
fail:
    return st;
}

/* Weights in the primitive's layout `md`, from plain float32 values. */
static mica_status_t load_weights(mica__dnnl_run_t *run,
                                  const dnnl_memory_desc_t *md,
                                  const dnnl_memory_desc_t *plain,
                                  const float *w, mica_error_t *err)
{
    dnnl_memory_t user = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_exec_arg_t args[2];
    mica_status_t st = MICA_OK;

    MICA__DNNL_TRY(mica__dnnl.memory_create(&run->weights, md, engine,
                                            DNNL_MEMORY_ALLOCATE));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&user, plain, engine,
                                            (void *)(uintptr_t)w));
    if ((st = make_reorder(&reorder, plain, md, err)) != MICA_OK)
        goto fail;
    args[0].arg = DNNL_ARG_FROM;
    args[0].memory = user;
    args[1].arg = DNNL_ARG_TO;
    args[1].memory = run->weights;
    MICA__DNNL_TRY(mica__dnnl.execute(reorder, run->stream, 2, args));
    MICA__DNNL_TRY(mica__dnnl.stream_wait(run->stream));
fail:
    if (reorder)
        mica__dnnl.primitive_destroy(reorder);
    if (user)
        mica__dnnl.memory_destroy(user);
    return st;
}

mica_status_t mica__dnnl_run_make(mica__dnnl_run_t *run,
                                  dnnl_primitive_desc_t pd,
                                  const dnnl_memory_desc_t *src_plain,
                                  const dnnl_memory_desc_t *dst_plain,
                                  const dnnl_memory_desc_t *weights_plain,
                                  const float *weights, const float *bias,
                                  int64_t bias_count, mica_error_t *err)
{
    const dnnl_memory_desc_t *md;
    mica_status_t st = MICA_OK;
    void *handle = NULL;

    memset(run, 0, sizeof *run);
    run->src_count = volume(src_plain);
    run->dst_count = volume(dst_plain);
    MICA__DNNL_TRY(mica__dnnl.stream_create(&run->stream, engine,
                                            dnnl_stream_default_flags));
    MICA__DNNL_TRY(mica__dnnl.primitive_create(&run->prim, pd));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&run->src_user, src_plain, engine,
                                            DNNL_MEMORY_NONE));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&run->dst_user, dst_plain, engine,
                                            DNNL_MEMORY_NONE));
    md = mica__dnnl.pd_query_md(pd, dnnl_query_src_md, 0);
    if ((st = layout(md, src_plain, 1, &run->src, &run->reorder_in, err)) !=
        MICA_OK)
        goto fail;
    md = mica__dnnl.pd_query_md(pd, dnnl_query_dst_md, 0);
    if ((st = layout(md, dst_plain, 0, &run->dst, &run->reorder_out, err)) !=
        MICA_OK)
        goto fail;
    if (weights_plain && !weights) {
        /* Weights given at each run, in their plain layout. */
        MICA__DNNL_TRY(mica__dnnl.memory_create(&run->weights, weights_plain,
                                                engine, DNNL_MEMORY_NONE));
        run->w_count = volume(weights_plain);
        run->has_weights = 1;
    } else if (weights_plain) {
        md = mica__dnnl.pd_query_md(pd, dnnl_query_weights_md, 0);
        if ((st = load_weights(run, md, weights_plain, weights, err)) !=
            MICA_OK)
            goto fail;
        run->has_weights = 1;
    }
    if (bias) {
        md = mica__dnnl.pd_query_md(pd, dnnl_query_weights_md, 1);
        MICA__DNNL_TRY(mica__dnnl.memory_create(&run->bias, md, engine,
                                                DNNL_MEMORY_ALLOCATE));
        /* A bias is a plain vector in every layout. */
        MICA__DNNL_TRY(mica__dnnl.memory_get(run->bias, &handle));
        memcpy(handle, bias, (size_t)bias_count * sizeof *bias);
        run->has_bias = 1;
    }
fail:
    mica__dnnl.pd_destroy(pd);
    if (st != MICA_OK)
        mica__dnnl_run_free(run);
    return st;
}

/* The run's float16 copies, allocated once. */
static mica_status_t copies(mica__dnnl_run_t *run, mica_error_t *err)
{
    if (!run->src32)
        run->src32 = malloc((size_t)(run->src_count ? run->src_count : 1) *
                            sizeof(float));
    if (!run->dst32)
        run->dst32 = malloc((size_t)(run->dst_count ? run->dst_count : 1) *
                            sizeof(float));
    if (!run->src32 || !run->dst32)
        return MICA_KIT_FAIL(err, "out of host memory");
    return MICA_OK;
}

mica_status_t mica__dnnl_run_exec2(mica__dnnl_run_t *run,
                                   mica_dtype_t dtype, const void *x,
                                   const void *w, void *y, mica_error_t *err)
{
    const float *wf = w;
    mica_status_t st = MICA_OK;
    int64_t i;

    if (dtype == MICA_FLOAT16) {
        if (!run->w32 &&
            !(run->w32 = malloc((size_t)(run->w_count ? run->w_count : 1) *
                                sizeof(float))))
            return MICA_KIT_FAIL(err, "out of host memory");
        for (i = 0; i < run->w_count; i++)
            run->w32[i] = mica_kit_half_to_float(((const uint16_t *)w)[i]);
        wf = run->w32;
    }
    MICA__DNNL_TRY(mica__dnnl.memory_set(run->weights,
                                         (void *)(uintptr_t)wf));
    st = mica__dnnl_run_exec(run, dtype, x, y, err);
fail:
    return st;
}

/* One primitive executed on the run's stream (not waited for). */
static mica_status_t execute(dnnl_primitive_t prim, dnnl_stream_t stream,
                             int n, const dnnl_exec_arg_t *args,
                             mica_error_t *err)
{
    mica_status_t st = MICA_OK;

    mica__cpu_omp_threads(); /* the run's thread count */
    MICA__DNNL_TRY(mica__dnnl.execute(prim, stream, n, args));
fail:
    return st;
}

/* A reorder's execution from `from` to `to`. */
static mica_status_t move(dnnl_primitive_t reorder, dnnl_stream_t stream,
                          dnnl_memory_t from, dnnl_memory_t to,
                          mica_error_t *err)
{
    dnnl_exec_arg_t args[2];

    args[0].arg = DNNL_ARG_FROM;
    args[0].memory = from;
    args[1].arg = DNNL_ARG_TO;
    args[1].memory = to;
    return execute(reorder, stream, 2, args, err);
}

/* The accumulator `acc` (plain) into the primitive's destination: a
 * copy into y where that is plain (none when acc is y), else a reorder
 * into the destination's layout, made at the first call. */
static mica_status_t accumulator(mica__dnnl_run_t *run, const float *acc,
                                 float *y, mica_error_t *err)
{
    const dnnl_memory_desc_t *plain, *md;
    mica_status_t st = MICA_OK;

    if (!run->dst) {
        if (acc != y)
            memmove(y, acc, (size_t)run->dst_count * sizeof *y);
        return MICA_OK;
    }
    if (!run->reorder_acc) {
        MICA__DNNL_TRY(mica__dnnl.memory_md(run->dst_user, &plain));
        MICA__DNNL_TRY(mica__dnnl.memory_md(run->dst, &md));
        MICA__DNNL_TRY(mica__dnnl.memory_create(&run->acc_user, plain,
                                                engine, DNNL_MEMORY_NONE));
        if ((st = make_reorder(&run->reorder_acc, plain, md, err)) !=
            MICA_OK)
            goto fail;
    }
    MICA__DNNL_TRY(mica__dnnl.memory_set(run->acc_user,
                                         (void *)(uintptr_t)acc));
    st = move(run->reorder_acc, run->stream, run->acc_user, run->dst, err);
fail:
    return st;
}

/* Run on float32 x into y (acc: see mica__dnnl_run_exec_acc; NULL:
 * none) and wait. */
static mica_status_t run_f32(mica__dnnl_run_t *run, const float *x,
                             const float *acc, float *y, mica_error_t *err)
{
    dnnl_exec_arg_t args[5];
    int n = 0;
    mica_status_t st = MICA_OK;

    MICA__DNNL_TRY(mica__dnnl.memory_set(run->src_user,
                                         (void *)(uintptr_t)x));
    MICA__DNNL_TRY(mica__dnnl.memory_set(run->dst_user, y));
    if (run->reorder_in &&
        (st = move(run->reorder_in, run->stream, run->src_user, run->src,
                   err)) != MICA_OK)
        goto fail;
    if (acc && (st = accumulator(run, acc, y, err)) != MICA_OK)
        goto fail;
    args[n].arg = DNNL_ARG_SRC;
    args[n++].memory = run->src ? run->src : run->src_user;
    args[n].arg = DNNL_ARG_DST;
    args[n++].memory = run->dst ? run->dst : run->dst_user;
    if (run->has_weights) {
        args[n].arg = DNNL_ARG_WEIGHTS;
        args[n++].memory = run->weights;
    }
    if (run->has_bias) {
        args[n].arg = DNNL_ARG_BIAS;
        args[n++].memory = run->bias;
    }
    if (run->src1_user) {
        args[n].arg = DNNL_ARG_SRC_1;
        args[n++].memory = run->src1_user;
    }
    if ((st = execute(run->prim, run->stream, n, args, err)) != MICA_OK)
        goto fail;
    if (run->reorder_out &&
        (st = move(run->reorder_out, run->stream, run->dst, run->dst_user,
                   err)) != MICA_OK)
        goto fail;
    MICA__DNNL_TRY(mica__dnnl.stream_wait(run->stream));
fail:
    return st;
}

mica_status_t mica__dnnl_run_exec(mica__dnnl_run_t *run, mica_dtype_t dtype,
                                  const void *x, void *y, mica_error_t *err)
{
    mica_status_t st;
    int64_t i;

    if (dtype != MICA_FLOAT16)
        return run_f32(run, x, NULL, y, err);
    if ((st = copies(run, err)) != MICA_OK)
        return st;
    for (i = 0; i < run->src_count; i++)
        run->src32[i] = mica_kit_half_to_float(((const uint16_t *)x)[i]);
    if ((st = run_f32(run, run->src32, NULL, run->dst32, err)) != MICA_OK)
        return st;
    for (i = 0; i < run->dst_count; i++)
        ((uint16_t *)y)[i] = mica_kit_float_to_half(run->dst32[i]);
    return MICA_OK;
}

mica_status_t mica__dnnl_run_exec_acc(mica__dnnl_run_t *run, const float *x,
                                      const float *acc, float *y,
                                      mica_error_t *err)
{
    return run_f32(run, x, acc, y, err);
}

mica_status_t mica__dnnl_run_src1(mica__dnnl_run_t *run,
                                  const dnnl_memory_desc_t *md,
                                  mica_error_t *err)
{
    mica_status_t st = MICA_OK;

    MICA__DNNL_TRY(mica__dnnl.memory_create(&run->src1_user, md, engine,
                                            DNNL_MEMORY_NONE));
fail:
    return st;
}

mica_status_t mica__dnnl_run_exec_binary(mica__dnnl_run_t *run,
                                         const float *x0, const float *x1,
                                         float *y, mica_error_t *err)
{
    mica_status_t st = MICA_OK;

    assert(run->src1_user);
    MICA__DNNL_TRY(mica__dnnl.memory_set(run->src1_user,
                                         (void *)(uintptr_t)x1));
    st = run_f32(run, x0, NULL, y, err);
fail:
    return st;
}

void mica__dnnl_run_free(mica__dnnl_run_t *run)
{
    dnnl_memory_t *mems[] = {&run->src_user, &run->dst_user, &run->src,
                             &run->dst, &run->weights, &run->bias,
                             &run->acc_user, &run->src1_user};
    size_t i;

    for (i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (*mems[i])
            mica__dnnl.memory_destroy(*mems[i]);
    if (run->reorder_in)
        mica__dnnl.primitive_destroy(run->reorder_in);
    if (run->reorder_out)
        mica__dnnl.primitive_destroy(run->reorder_out);
    if (run->reorder_acc)
        mica__dnnl.primitive_destroy(run->reorder_acc);
    if (run->prim)
        mica__dnnl.primitive_destroy(run->prim);
    if (run->stream)
        mica__dnnl.stream_destroy(run->stream);
    free(run->src32);
    free(run->dst32);
    free(run->w32);
    memset(run, 0, sizeof *run);
}

struct mica__dnnl_cache {
    mica__dnnl_run_t run;
    int made;
    int32_t threads; /* the thread count it was made for */
    size_t key_size;
    unsigned char key[]; /* key_size bytes: what the runner was made for */
};

mica_status_t mica__dnnl_cached(mica__dnnl_cache_t **cache, const void *key,
                                size_t key_size, mica__dnnl_make_fn *make,
                                const void *problem, mica__dnnl_run_t **run,
                                mica_error_t *err)
{
    mica__dnnl_cache_t *c = *cache;
    mica_status_t st;
    int32_t threads;

    if (!c) {
        if ((st = mica__dnnl_open(err)) != MICA_OK)
            return st;
        if (!(c = *cache = calloc(1, sizeof *c + key_size)))
            return MICA_KIT_FAIL(err, "out of host memory");
        c->key_size = key_size;
    }
    assert(c->key_size == key_size);
    /* oneDNN plans a primitive for the threads it is made with: made
     * again for another count */
    threads = mica__cpu_threads();
    mica__cpu_omp_threads();
    if (c->made && (memcmp(c->key, key, key_size) != 0 ||
                    c->threads != threads)) {
        mica__dnnl_run_free(&c->run);
        c->made = 0;
    }
    if (!c->made) {
        if ((st = make(&c->run, problem, err)) != MICA_OK)
            return st;
        c->made = 1;
        c->threads = threads;
        memcpy(c->key, key, key_size);
    }
    *run = &c->run;
    return MICA_OK;
}

void mica__dnnl_cache_free(mica__dnnl_cache_t *c)
{
    if (!c)
        return;
    mica__dnnl_run_free(&c->run);
    free(c);
}

const float *mica__dnnl_floats(const mica_weights_t *w, float **owned)
{
    int64_t i;

    *owned = NULL;
    if (w->dtype == MICA_FLOAT32)
        return w->values;
    *owned = malloc((size_t)(w->count ? w->count : 1) * sizeof(float));
    if (!*owned)
        return NULL;
    for (i = 0; i < w->count; i++)
        (*owned)[i] = mica_kit_half_to_float(((const uint16_t *)w->values)[i]);
    return *owned;
}
