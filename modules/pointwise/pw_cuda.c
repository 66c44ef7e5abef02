/*
 * modules/pointwise/pw_cuda.c - the Pointwise layer on CUDA: its kernels
 * compiled with NVRTC when the engine is built (pw_gen.c's source, for
 * the device's architecture), the code kept in the layer's saved state
 * (param `code`: CUBIN and PTX), loaded on each execution context
 * through the driver API and launched with cuLaunchKernel (which CUDA
 * graphs capture like any launch).
 *
 * The code's bytes, native little-endian:
 *   u32 magic "PWK1", u32 header bytes (64), u64 hash of the source and
 *   options it was compiled from, char[16] architecture ("90"), u64
 *   CUBIN bytes, u64 PTX bytes (its final NUL included), zeros to byte
 *   64, the CUBIN (64-byte aligned in an engine file, as weights are),
 *   the PTX.
 * A layer whose code was made from another source (an engine of another
 * version of mica) compiles again, which needs NVRTC.
 *
 * Compiling costs tenths of a second; the builder builds a network
 * several times (float16, formats) and networks repeat their pointwise
 * groups (a transformer's layers), so compiled code is also kept for the
 * process by source and architecture: each program compiles once.
 */
#include <config.h>

#include "mica/kit.h"

#if MICA_KIT_CUDA

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "mica/kit_cuda.h"

#include "kit_nvrtc.h"
#include "pointwise.h"
#include "pw_cuda.h"

#define MAGIC 0x314b5750u /* "PWK1" */
#define HEADER 64 /* the CUBIN 64-byte aligned where the state is */
#define THREADS 256

/* The variants of a class's kernel (pw_gen.c), in the order of names. */
enum { FLAT4 = 0, FLAT1, GEN4, GEN1, GEN64, NB_VARIANTS };
static const char *const variant_names[NB_VARIANTS] = {
    "flat4", "flat1", "gen4", "gen1", "gen64"};

/* NVRTC's options: no contraction of a * b + c into one rounding, so
 * that every operation rounds as the CPU reference's does; the headers'
 * plain inline functions (mica/types.h's) as device functions. */
static const char *const options[] = {"--std=c++17", "--fmad=false",
                                      "-default-device",
                                      "--diag-suppress=20044"};

struct pw_gpu {
    CUmodule module;
    CUfunction fn[PW_MAX_OUTPUTS][NB_VARIANTS];
    float *coef;        /* every weights' values on the device */
    int64_t *coef_at;   /* per weights: its first value in coef */
};

/* ---- the code's bytes ------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t pw_cuda_hash(const char *source)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;
    h = fnv(h, source, strlen(source));
    for (i = 0; i < sizeof options / sizeof options[0]; i++)
        h = fnv(h, options[i], strlen(options[i]) + 1);
    return h;
}

int pw_code_read(const void *bytes, size_t size, pw_code_t *c)
{
    const unsigned char *b = bytes;
    uint32_t magic, header;
    uint64_t nc, np;

    memset(c, 0, sizeof *c);
    if (!b || size < HEADER)
        return 0;
    memcpy(&magic, b, 4);
    memcpy(&header, b + 4, 4);
    memcpy(&c->hash, b + 8, 8);
    memcpy(c->arch, b + 16, 16);
    memcpy(&nc, b + 32, 8);
    memcpy(&np, b + 40, 8);
    if (magic != MAGIC || header != HEADER || c->arch[15] != '\0' ||
        nc > size - HEADER || np > size - HEADER - nc ||
        HEADER + nc + np != size || np == 0 || b[size - 1] != '\0')
        return 0;
    c->cubin = nc ? b + HEADER : NULL;
    c->cubin_size = (size_t)nc;
    c->ptx = (const char *)b + HEADER + nc;
    return 1;
}

/* The bytes of code compiled from a source of `hash` for `arch`. */
static unsigned char *code_bytes(uint64_t hash, const char *arch,
                                 const mica__nvrtc_code_t *code,
                                 size_t *size)
{
    uint32_t magic = MAGIC, header = HEADER;
    uint64_t nc = code->cubin_size, np = code->ptx_size;
    unsigned char *b;
    char a[16];

    *size = HEADER + code->cubin_size + code->ptx_size;
    if (!(b = calloc(1, *size)))
        return NULL;
    memset(a, 0, sizeof a);
    snprintf(a, sizeof a, "%s", arch);
    memcpy(b, &magic, 4);
    memcpy(b + 4, &header, 4);
    memcpy(b + 8, &hash, 8);
    memcpy(b + 16, a, 16);
    memcpy(b + 32, &nc, 8);
    memcpy(b + 40, &np, 8);
    if (nc)
        memcpy(b + HEADER, code->cubin, nc);
    memcpy(b + HEADER + nc, code->ptx, np);
    b[*size - 1] = '\0';
    return b;
}

/* ---- the process's code, by source ----------------------------------- */

typedef struct entry {
    char *source;
    char arch[16];
    uint64_t hash;
    unsigned char *bytes;
    size_t size;
} entry_t;

#define MAX_ENTRIES 512
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t cache[MAX_ENTRIES];
static int32_t nb_cache;
static int cache_fini_set;

static void cache_free(void)
{
    int32_t i;
    pthread_mutex_lock(&cache_lock);
    for (i = 0; i < nb_cache; i++) {
        free(cache[i].source);
        free(cache[i].bytes);
    }
    nb_cache = 0;
    cache_fini_set = 0;
    pthread_mutex_unlock(&cache_lock);
}

/* A copy of the cached bytes of (source, arch) into *out, or 0. */
static int cache_get(const char *source, uint64_t hash, const char *arch,
                     unsigned char **out, size_t *size)
{
    int32_t i;
    int found = 0;

    pthread_mutex_lock(&cache_lock);
    for (i = 0; i < nb_cache && !found; i++)
        if (cache[i].hash == hash && !strcmp(cache[i].arch, arch) &&
            !strcmp(cache[i].source, source) &&
            (*out = malloc(cache[i].size)) != NULL) {
            memcpy(*out, cache[i].bytes, cache[i].size);
            *size = cache[i].size;
            found = 1;
        }
    pthread_mutex_unlock(&cache_lock);
    return found;
}

/* Keep a copy (nothing when full or out of memory: only slower). */
static void cache_put(const char *source, uint64_t hash, const char *arch,
                      const unsigned char *bytes, size_t size)
{
    entry_t e;

    memset(&e, 0, sizeof e);
    e.source = malloc(strlen(source) + 1);
    e.bytes = malloc(size);
    if (!e.source || !e.bytes) {
        free(e.source);
        free(e.bytes);
        return;
    }
    strcpy(e.source, source);
    memcpy(e.bytes, bytes, size);
    e.hash = hash;
    e.size = size;
    snprintf(e.arch, sizeof e.arch, "%s", arch);
    pthread_mutex_lock(&cache_lock);
    if (!cache_fini_set && mica_kit_at_fini(cache_free) == 0)
        cache_fini_set = 1;
    if (nb_cache < MAX_ENTRIES && cache_fini_set) {
        cache[nb_cache++] = e;
        e.source = NULL;
        e.bytes = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    free(e.source);
    free(e.bytes);
}

/* Milliseconds on a monotonic clock. */
static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

mica_status_t pw_cuda_compile(const char *source, const char *name,
                              unsigned char **bytes, size_t *size,
                              mica_error_t *err)
{
    mica__nvrtc_code_t code;
    double t0;
    uint64_t hash = pw_cuda_hash(source);
    char arch[16];
    mica_status_t st;

    mica__nvrtc_arch(arch, sizeof arch);
    if (cache_get(source, hash, arch, bytes, size)) {
        mica_kit_host->log(MICA_LOG_DEBUG, name, "its kernels "
                           "were compiled before in this process");
        return MICA_OK;
    }
    t0 = clock_ms();
    st = mica__nvrtc_compile(source, "pointwise.cu", pw_nb_headers,
                             pw_header_texts, pw_header_names, arch,
                             (int32_t)(sizeof options / sizeof options[0]),
                             options, &code, err);
    if (st != MICA_OK)
        return st;
    mica_kit_host->log(MICA_LOG_INFO, name, "kernels compiled "
                       "with NVRTC for sm_%s in %.0f ms (%zu bytes of "
                       "CUBIN)", arch, clock_ms() - t0, code.cubin_size);
    *bytes = code_bytes(hash, arch, &code, size);
    mica__nvrtc_code_free(&code);
    if (!*bytes)
        return MICA_KIT_FAIL(err, "out of host memory for compiled code");
    cache_put(source, hash, arch, *bytes, *size);
    return MICA_OK;
}

/* ---- an execution context's code --------------------------------------- */

void pw_cuda_free(pw_gpu_t *g)
{
    if (!g)
        return;
    if (g->module)
        mica__cudrv.unload(g->module);
    if (g->coef)
        cudaFree(g->coef);
    free(g->coef_at);
    free(g);
}

/* Every weights' float32 values in one device buffer. */
static mica_status_t upload(pw_gpu_t *g, const pw_prog_t *p,
                            mica_error_t *err)
{
    int64_t total = 0, at = 0;
    int32_t w;
    float *host;

    if (!(g->coef_at = calloc((size_t)p->nb_w + 1, sizeof *g->coef_at)))
        return MICA_KIT_FAIL(err, "out of host memory");
    /* each weights at a multiple of 4 floats: 16-byte loads */
    for (w = 0; w < p->nb_w; w++)
        total += (p->coef_n[w] + 3) / 4 * 4;
    if (total == 0)
        return MICA_OK;
    if (!(host = calloc((size_t)total, sizeof *host)))
        return MICA_KIT_FAIL(err, "out of host memory for %lld "
                             "coefficients", (long long)total);
    for (w = 0; w < p->nb_w; w++) {
        g->coef_at[w] = at;
        memcpy(host + at, p->coef[w], (size_t)p->coef_n[w] * sizeof *host);
        at += (p->coef_n[w] + 3) / 4 * 4;
    }
    if (cudaMalloc((void **)&g->coef, (size_t)total * sizeof *host) !=
            cudaSuccess ||
        cudaMemcpy(g->coef, host, (size_t)total * sizeof *host,
                   cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaError_t e = cudaGetLastError();
        free(host);
        return MICA_KIT_FAIL(err, "cannot copy %lld coefficients to the "
                             "device: %s", (long long)total,
                             cudaGetErrorString(e));
    }
    free(host);
    return MICA_OK;
}

mica_status_t pw_cuda_init(const pw_prog_t *p, const pw_code_t *code,
                           const char *name, pw_gpu_t **out,
                           mica_error_t *err)
{
    pw_gpu_t *g = calloc(1, sizeof *g);
    char what[256], fname[32];
    mica_status_t st;
    int32_t c, k;

    *out = NULL;
    if (!g)
        return MICA_KIT_FAIL(err, "out of host memory");
    snprintf(what, sizeof what, "Pointwise layer '%s'", name);
    st = mica__cudrv_load(what, code->cubin, code->cubin_size, code->ptx,
                          &g->module, err);
    for (c = 0; c < p->nb_cls && st == MICA_OK; c++)
        for (k = 0; k < NB_VARIANTS && st == MICA_OK; k++) {
            CUresult r;
            snprintf(fname, sizeof fname, "pw%d_%s", (int)c,
                     variant_names[k]);
            r = mica__cudrv.function(&g->fn[c][k], g->module, fname);
            if (r != CUDA_SUCCESS)
                st = MICA_KIT_FAIL(err, "the code of %s has no kernel %s: "
                                   "corrupt", what, fname);
        }
    if (st == MICA_OK)
        st = upload(g, p, err);
    if (st != MICA_OK) {
        pw_cuda_free(g);
        return st;
    }
    *out = g;
    return MICA_OK;
}

/* ---- launches ------------------------------------------------------------ */

static int aligned(const void *p, size_t bytes)
{
    return (uintptr_t)p % bytes == 0;
}

/* The kernel for view v and these memories. */
static int variant(const pw_view_t *v, const pw_args_t *a,
                   const mica_dtype_t *lt, const mica_dtype_t *ot,
                   int32_t nb_out)
{
    int32_t l, k, j, r = v->rank;
    int flat = r <= 1, vec = 1, small = v->n <= INT32_MAX;

    for (l = 0; l < v->nb_leaves; l++) {
        int64_t inner = r ? v->s[l][r - 1] : 0, far = 0;
        if (r && inner != 0 && inner != 1)
            flat = vec = 0;
        if (inner == 1 && !aligned(a->leaf[l], 4 * mica_dtype_size(lt[l])))
            vec = 0;
        for (k = 0; k < r; k++) {
            far += (v->d[k] - 1) * v->s[l][k];
            if (inner == 1 && k < r - 1 && v->s[l][k] % 4)
                vec = 0;
        }
        if (far > INT32_MAX)
            small = 0;
    }
    for (j = 0; j < nb_out; j++)
        if (!aligned(a->out[j], 4 * mica_dtype_size(ot[j])))
            vec = 0;
    if (flat)
        return vec ? FLAT4 : FLAT1;
    if (!small)
        return GEN64;
    return vec && v->d[r - 1] % 4 == 0 ? GEN4 : GEN1;
}

mica_status_t pw_cuda_run(const pw_gpu_t *g, const pw_prog_t *p,
                          const mica_tensor_desc_t *in,
                          const mica_tensor_desc_t *out,
                          const void *const *inputs, void *const *outputs,
                          const pw_view_t *views, void *stream,
                          mica_error_t *err)
{
    int32_t c, l, j, k;

    for (c = 0; c < p->nb_cls; c++) {
        const pw_cls_t *cl = &p->cls[c];
        const pw_view_t *v = &views[c];
        mica_dtype_t lt[PW_MAX_LEAVES], ot[PW_MAX_OUTPUTS];
        pw_args_t a;
        void *params[1];
        int64_t units;
        int var;

        if (v->n == 0)
            continue;
        memset(&a, 0, sizeof a);
        a.n = v->n;
        a.rank = v->rank;
        for (k = 0; k < v->rank; k++)
            a.d[k] = v->d[k];
        for (l = 0; l < cl->nb_leaves; l++) {
            const pw_leaf_t *f = &cl->leaf[l];
            if (f->input >= 0) {
                a.leaf[l] = inputs[f->input];
                lt[l] = in[f->input].dtype;
            } else {
                a.leaf[l] = g->coef + g->coef_at[p->ins[f->ins].w[f->role]];
                lt[l] = MICA_FLOAT32;
            }
            for (k = 0; k < v->rank; k++)
                a.s[l][k] = v->s[l][k];
        }
        for (j = 0; j < cl->nb_out; j++) {
            a.out[j] = outputs[cl->out[j]];
            ot[j] = out[cl->out[j]].dtype;
        }
        var = variant(v, &a, lt, ot, cl->nb_out);
        units = var == FLAT4 || var == GEN4 ? (v->n + 3) / 4 : v->n;
        params[0] = &a;
        MICA__CU_CHECK(mica__cudrv.launch(
            g->fn[c][var], mica_kit_grid(units, THREADS), 1, 1, THREADS, 1,
            1, 0, (CUstream)stream, params, NULL));
    }
    return MICA_OK;
}

#endif /* MICA_KIT_CUDA */
