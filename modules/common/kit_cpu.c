/*
 * modules/common/kit_cpu.c - threads of the CPU implementations through
 * GNU OpenMP opened on first use (kit_cpu.h).
 */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>

#include "kit_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

/* libgomp's entry points (prototypes of libgomp's ABI, not in any
 * header: GOMP_parallel is what the compiler calls). */
typedef struct gomp_table {
    void (*parallel)(void (*fn)(void *), void *data, unsigned num_threads,
                     unsigned flags);
    int (*thread_num)(void);
    int (*num_threads)(void);
    int (*max_threads)(void);
    void (*set_num_threads)(int);
} gomp_table_t;

static gomp_table_t gomp;
static const mica_kit_sym_t gomp_syms[] = {
    MICA_KIT_SYM(gomp, parallel, "GOMP_parallel"),
    MICA_KIT_SYM(gomp, thread_num, "omp_get_thread_num"),
    MICA_KIT_SYM(gomp, num_threads, "omp_get_num_threads"),
    MICA_KIT_SYM(gomp, max_threads, "omp_get_max_threads"),
    MICA_KIT_SYM(gomp, set_num_threads, "omp_set_num_threads"),
};
static mica_kit_lib_t gomp_lib =
    MICA_KIT_LIB("GNU OpenMP", "libgomp.so.1", &gomp, gomp_syms);

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
/* 1 opened, -1 cannot be: loops run on the calling thread */
static int gomp_state;
static pthread_mutex_t gomp_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_env(void)
{
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        setenv("OMP_WAIT_POLICY", "passive", 0);
}

void mica__cpu_omp_env(void)
{
    pthread_once(&env_once, set_env);
}

/* Whether libgomp is open (opening it the first time). */
static int gomp_open(void)
{
    int s = __atomic_load_n(&gomp_state, __ATOMIC_ACQUIRE);
    if (s)
        return s > 0;
    pthread_mutex_lock(&gomp_lock);
    if (!gomp_state) {
        mica__cpu_omp_env();
        /* (a NULL error slot: the host ignores it) */
        s = mica_kit_lib_open(&gomp_lib, NULL) == MICA_OK ? 1 : -1;
        if (s < 0)
            mica_kit_host->log(MICA_LOG_WARNING, "kit",
                               "CPU layers run on one thread: GNU "
                               "OpenMP (libgomp.so.1) cannot be loaded");
        __atomic_store_n(&gomp_state, s, __ATOMIC_RELEASE);
    }
    s = gomp_state;
    pthread_mutex_unlock(&gomp_lock);
    return s > 0;
}

/* The count the context set, 0 if none (or an older host). */
static int32_t asked(void)
{
    const mica_host_t *h = mica_kit_host;
    return MICA_HOST_HAS(h, cpu_threads) ? h->cpu_threads() : 0;
}

int32_t mica__cpu_threads(void)
{
    int32_t n = asked();
    if (n > 0)
        return n;
    if (!gomp_open())
        return 1;
    n = gomp.max_threads();
    return n > 0 ? n : 1;
}

void mica__cpu_omp_threads(void)
{
    int32_t n = asked();
    if (n > 0 && gomp_open())
        gomp.set_num_threads(n);
}

typedef struct loop {
    mica__cpu_range_fn *fn;
    void *ctx;
    int64_t n, part;
} loop_t;

static void loop_body(void *data)
{
    const loop_t *l = data;
    int64_t t = gomp.thread_num(), nt = gomp.num_threads();
    int64_t begin, end;
    /* as many parts as threads came (fewer than asked, nested) */
    int64_t part = nt * l->part >= l->n ? l->part
                                        : ((l->n + nt - 1) / nt + 63) / 64 * 64;
    for (begin = t * part; begin < l->n; begin += nt * part) {
        end = begin + part < l->n ? begin + part : l->n;
        l->fn(l->ctx, begin, end);
    }
}

void mica__cpu_for(int64_t n, int64_t grain, mica__cpu_range_fn *fn,
                   void *ctx)
{
    int64_t k, want;
    loop_t l;

    if (grain < 1)
        grain = 1;
    /* (the context's count may be read before libgomp was opened) */
    if (n < 2 * grain || (want = mica__cpu_threads()) < 2 || !gomp_open()) {
        if (n > 0)
            fn(ctx, 0, n);
        return;
    }
    k = n / grain < want ? n / grain : want;
    l.fn = fn;
    l.ctx = ctx;
    l.n = n;
    l.part = ((n + k - 1) / k + 63) / 64 * 64;
    gomp.parallel(loop_body, &l, (unsigned)k, 0);
}

/* ---- CPU features --------------------------------------------------- */

static pthread_once_t f16c_once = PTHREAD_ONCE_INIT;
static int f16c_ok;

static int avx2_ok;

static void f16c_probe(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned a, b, c, d, lo, hi, fma;

    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    fma = (c >> 12) & 1u; /* FMA (12) */
    /* OSXSAVE (27), AVX (28), F16C (29) */
    if ((c & (7u << 27)) != (7u << 27))
        return;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    f16c_ok = (lo & 6u) == 6u; /* the OS saves SSE and AVX state */
    /* AVX2: leaf 7, EBX bit 5 */
    if (f16c_ok && fma && __get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        avx2_ok = (b >> 5) & 1u;
    }
#endif
}

int mica__cpu_has_f16c(void)
{
    pthread_once(&f16c_once, f16c_probe);
    return f16c_ok;
}

int mica__cpu_has_avx2_fma(void)
{
    pthread_once(&f16c_once, f16c_probe);
    return avx2_ok;
}
