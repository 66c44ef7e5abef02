/*
 * modules/pointwise/pw_cpu.c - the Pointwise layer on the CPU: the
 * program evaluated over blocks of PW_B elements.
 *
 * For each class of outputs, a plan made once per layer (pw_cpu_new): a
 * list of actions, each loading a leaf into a slot or computing one
 * instruction from slots into a slot, slots reused once their value is
 * read for the last time (a handful of blocks, which stay in the first
 * level cache).  A block's run is then one tight loop per action: float
 * values in float[PW_B], integer and bool ones in int64_t[PW_B], each op
 * the scalar function its layer uses (elementwise.h, unary.h,
 * activation.h, scale.h, identity.h), inlined with a constant op so that
 * the compiler vectorizes the simple ones; exp, sigmoid and tanh are the
 * vec implementations' array functions (kit_vec.h: a few ulp from the
 * C library's, eight lanes with AVX2).  Loops have the constant
 * count PW_B (the last block is computed in full, only its first
 * elements stored), which the compiler vectorizes without a scalar
 * epilogue.
 *
 * Leaves are read through their view (pw_view.c): a float32 (or int64)
 * leaf read contiguously in a full block is used in place; otherwise the
 * block is filled run by run along the innermost dimension (a copy, a
 * conversion, one value repeated for a broadcast one), with the
 * coordinates carried from run to run, never divided per element.  A
 * float32 result that is an output is computed straight into the
 * output's memory.
 */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "activation.h"
#include "elementwise.h"
#include "identity.h"
#include "kit_cpu.h"
#include "kit_vec.h"
#include "pointwise.h"
#include "scale.h"
#include "unary.h"

#define PW_B 512
#define SLOT_BYTES (PW_B * 8)

/* One action of a plan. */
typedef struct act {
    int32_t load;    /* 1: load leaf `id`; 0: run instruction `id` */
    int32_t id;
    int32_t dst;     /* slot */
    int32_t src[3];  /* operands' slots */
    int32_t coef[3]; /* Scale: coefficients' slots, -1 */
} act_t;

typedef struct plan {
    int32_t nb_acts;
    act_t *acts;
    int32_t out_slot[PW_MAX_OUTPUTS]; /* per output of the class */
    int32_t nb_slots;
} plan_t;

struct pw_cpu {
    int32_t nb_cls;
    plan_t plan[PW_MAX_OUTPUTS];
    int32_t nb_slots;
};

/* ---- planning ----------------------------------------------------------- */

/* Value ids of a class: leaves 0..L-1, instruction i is L + i. */
typedef struct planner {
    const pw_prog_t *p;
    const pw_cls_t *c;
    int32_t nb_vals;
    int32_t *slot;    /* per value, -1 */
    int32_t *last;    /* per value: the last action reading it */
    int32_t nb_slots;
    uint8_t *busy;    /* per slot */
} planner_t;

static int32_t value_id(const planner_t *x, int32_t v)
{
    return PW_IS_INPUT(v) ? x->c->in_leaf[PW_INPUT_OF(v)]
                          : x->c->nb_leaves + v;
}

/* A free slot (the lowest). */
static int32_t take(planner_t *x)
{
    int32_t s;
    for (s = 0; s < x->nb_slots && x->busy[s]; s++)
        ;
    x->busy[s] = 1;
    if (s == x->nb_slots)
        x->nb_slots++;
    return s;
}

/* Append the load of leaf value id unless loaded. */
static void need_leaf(planner_t *x, plan_t *pl, int32_t id)
{
    act_t *a;
    if (x->slot[id] >= 0 || id < 0)
        return;
    a = &pl->acts[pl->nb_acts++];
    memset(a, -1, sizeof *a);
    a->load = 1;
    a->id = id;
}

/* The list of actions of class c, before slots. */
static void list_actions(planner_t *x, plan_t *pl)
{
    const pw_prog_t *p = x->p;
    const pw_cls_t *c = x->c;
    int32_t i, j, r, *seen = x->last; /* as a flag while listing */
    act_t *a;

    for (j = 0; j < x->nb_vals; j++)
        seen[j] = 0;
#define LEAF(id)                                                            \
    do {                                                                    \
        if ((id) >= 0 && !seen[id]) {                                       \
            seen[id] = 1;                                                   \
            need_leaf(x, pl, id);                                           \
        }                                                                   \
    } while (0)
    for (i = 0; i < p->nb_ins; i++) {
        if (!c->need[i])
            continue;
        for (j = 0; j < p->ins[i].nb_args; j++)
            if (PW_IS_INPUT(p->ins[i].arg[j]))
                LEAF(value_id(x, p->ins[i].arg[j]));
        for (r = 0; r < 3; r++)
            LEAF(c->coef_leaf[3 * i + r]);
        a = &pl->acts[pl->nb_acts++];
        memset(a, -1, sizeof *a);
        a->load = 0;
        a->id = i;
    }
    for (j = 0; j < c->nb_out; j++)
        if (PW_IS_INPUT(p->out[c->out[j]]))
            LEAF(value_id(x, p->out[c->out[j]]));
#undef LEAF
}

/* Slots for the actions of class c (linear scan; a result never shares
 * its slot with an operand). */
static void assign(planner_t *x, plan_t *pl)
{
    const pw_prog_t *p = x->p;
    const pw_cls_t *c = x->c;
    int32_t a, j, r, end = pl->nb_acts;

    for (j = 0; j < x->nb_vals; j++)
        x->last[j] = -1;
    for (a = 0; a < pl->nb_acts; a++) {
        const act_t *t = &pl->acts[a];
        if (t->load)
            continue;
        for (j = 0; j < p->ins[t->id].nb_args; j++)
            x->last[value_id(x, p->ins[t->id].arg[j])] = a;
        for (r = 0; r < 3; r++)
            if (c->coef_leaf[3 * t->id + r] >= 0)
                x->last[c->coef_leaf[3 * t->id + r]] = a;
    }
    for (j = 0; j < c->nb_out; j++)
        x->last[value_id(x, p->out[c->out[j]])] = end; /* kept */
    for (a = 0; a < pl->nb_acts; a++) {
        act_t *t = &pl->acts[a];
        int32_t self = t->load ? t->id : c->nb_leaves + t->id;
        if (!t->load) {
            for (j = 0; j < p->ins[t->id].nb_args; j++)
                t->src[j] = x->slot[value_id(x, p->ins[t->id].arg[j])];
            for (r = 0; r < 3; r++)
                if (c->coef_leaf[3 * t->id + r] >= 0)
                    t->coef[r] = x->slot[c->coef_leaf[3 * t->id + r]];
        }
        t->dst = x->slot[self] = take(x);
        if (x->last[self] < a)
            x->last[self] = a; /* read by nothing: free at once */
        for (j = 0; j < x->nb_vals; j++)
            if (x->last[j] == a && x->slot[j] >= 0)
                x->busy[x->slot[j]] = 0;
    }
    for (j = 0; j < c->nb_out; j++)
        pl->out_slot[j] = x->slot[value_id(x, p->out[c->out[j]])];
    pl->nb_slots = x->nb_slots;
}

void pw_cpu_free(pw_cpu_t *c)
{
    int32_t k;
    if (!c)
        return;
    for (k = 0; k < c->nb_cls; k++)
        free(c->plan[k].acts);
    free(c);
}

pw_cpu_t *pw_cpu_new(const pw_prog_t *p, mica_error_t *err)
{
    pw_cpu_t *cpu = calloc(1, sizeof *cpu);
    planner_t x;
    int32_t k, j;

    memset(&x, 0, sizeof x);
    if (!cpu)
        goto nomem;
    x.p = p;
    for (k = 0; k < p->nb_cls; k++) {
        plan_t *pl = &cpu->plan[k];
        x.c = &p->cls[k];
        x.nb_vals = x.c->nb_leaves + p->nb_ins;
        x.nb_slots = 0;
        free(x.slot);
        free(x.last);
        free(x.busy);
        x.slot = malloc(sizeof *x.slot * (size_t)x.nb_vals);
        x.last = malloc(sizeof *x.last * (size_t)x.nb_vals);
        x.busy = calloc((size_t)x.nb_vals + 1, 1);
        pl->acts = calloc((size_t)x.nb_vals + 1, sizeof *pl->acts);
        cpu->nb_cls = k + 1;
        if (!x.slot || !x.last || !x.busy || !pl->acts)
            goto nomem;
        for (j = 0; j < x.nb_vals; j++)
            x.slot[j] = -1;
        list_actions(&x, pl);
        assign(&x, pl);
        if (pl->nb_slots > cpu->nb_slots)
            cpu->nb_slots = pl->nb_slots;
    }
    free(x.slot);
    free(x.last);
    free(x.busy);
    return cpu;
nomem:
    free(x.slot);
    free(x.last);
    free(x.busy);
    pw_cpu_free(cpu);
    mica_kit_host->set_error(err, "out of host memory");
    return NULL;
}

/* The blocks of the slots, 64-byte aligned, then where each slot's
 * value is. */
size_t pw_cpu_workspace(const pw_cpu_t *c)
{
    return (size_t)c->nb_slots * (SLOT_BYTES + sizeof(void *)) + 64;
}

/* ---- conversions ------------------------------------------------------ */

/*
 * float16 and bfloat16 as mica/kit_half.h converts them (round to
 * nearest even, overflow to infinity, subnormals kept; a NaN keeps the
 * top bits of its payload and becomes quiet), written without branches
 * so that loops over blocks vectorize: the kit's functions take a branch
 * per case.  tests/test_mod_pointwise.c checks them against the kit on
 * every float16 value and on floats of every exponent.
 */
static inline uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* float16 bits to float: normal, subnormal (m * 2^-24), infinity, NaN. */
static inline float h2f(uint16_t h)
{
    uint32_t sgn = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu;
    uint32_t m = h & 0x3ffu;
    uint32_t normal = sgn | ((e + 112u) << 23) | (m << 13);
    uint32_t special = sgn | 0x7f800000u | (m << 13);
    uint32_t sub = sgn | fbits((float)m * 5.9604644775390625e-8f);
    return bitsf(e == 0 ? sub : e == 31 ? special : normal);
}

/* float to float16 and back: the value x would have as a float16. */
static inline float r16(float x)
{
    uint32_t u = fbits(x), sgn = u & 0x80000000u, a = u ^ sgn;
    uint32_t n = (a + 0xfffu + ((a >> 13) & 1u)) & ~0x1fffu;
    uint32_t sub = fbits((bitsf(a) + 0.5f) - 0.5f); /* to 2^-24 steps */
    uint32_t r = n >= 0x47800000u ? 0x7f800000u : n;
    r = a < 0x38800000u ? sub : r;
    r = a > 0x7f800000u ? (a | 0x00400000u) & ~0x1fffu : r;
    return bitsf(r | sgn);
}

/* float16 bits of a float that r16 rounded (exact). */
static inline uint16_t f2h_exact(float x)
{
    uint32_t u = fbits(x), sgn = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    uint32_t normal = ((a >> 13) - (112u << 10)) & 0x7fffu;
    /* m of m * 2^-24; only below 2^-14 (a larger value, an infinity or
     * a NaN would not convert) */
    uint32_t sub = (uint32_t)(bitsf(a < 0x38800000u ? a : 0u) * 16777216.0f);
    uint32_t special = 0x7c00u | ((a >> 13) & 0x3ffu);
    uint32_t r = a >= 0x7f800000u ? special : a < 0x38800000u ? sub : normal;
    return (uint16_t)(r | sgn);
}

static inline float bf2f(uint16_t h)
{
    return bitsf((uint32_t)h << 16);
}

/* float to bfloat16 and back. */
static inline float rbf(float x)
{
    uint32_t u = fbits(x);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    return bitsf((u & 0x7fffffffu) > 0x7f800000u ? (u | 0x00400000u) &
                                                        0xffff0000u
                                                  : r);
}

/*
 * x86's F16C instructions convert 8 values at once, exactly as above
 * (round to nearest even, subnormals kept, a NaN made quiet with the top
 * bits of its payload; but see h2f_f16c): used where the processor has
 * them.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PW_F16C 1
#define F16C_FN __attribute__((target("avx,f16c")))

static pthread_once_t f16c_once = PTHREAD_ONCE_INIT;
static int f16c_ok;

/* $MICA_POINTWISE_NO_F16C set: the portable conversions even where F16C
 * is (tests/test_pointwise_portable.sh checks them there too). */
static void f16c_probe(void)
{
    f16c_ok = mica__cpu_has_f16c() && !getenv("MICA_POINTWISE_NO_F16C");
}

static int f16c(void)
{
    pthread_once(&f16c_once, f16c_probe);
    return f16c_ok;
}

/* The instruction makes a signaling NaN quiet, which the kit's
 * conversion does not: 8 values with a NaN among them go one by one. */
static F16C_FN void h2f_f16c(float *restrict d, const uint16_t *restrict s,
                             int64_t n)
{
    const __m128i inf = _mm_set1_epi16(0x7c00), abs = _mm_set1_epi16(0x7fff);
    int64_t j = 0, k;
    for (; j + 8 <= n; j += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(s + j));
        /* |h| > 0x7c00 (signed 16-bit compare: |h| <= 0x7fff) */
        if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, abs), inf)))
            for (k = j; k < j + 8; k++)
                d[k] = h2f(s[k]);
        else
            _mm256_storeu_ps(d + j, _mm256_cvtph_ps(h));
    }
    for (; j < n; j++)
        d[j] = h2f(s[j]);
}

/* A block (PW_B, a multiple of 8). */
static F16C_FN void r16_f16c(float *d)
{
    int j;
    for (j = 0; j < PW_B; j += 8)
        _mm256_storeu_ps(d + j, _mm256_cvtph_ps(_mm256_cvtps_ph(
                                    _mm256_loadu_ps(d + j),
                                    _MM_FROUND_TO_NEAREST_INT)));
}

static F16C_FN void f2h_f16c(uint16_t *restrict o, const float *restrict f,
                             int64_t n)
{
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm_storeu_si128((__m128i *)(o + j),
                         _mm256_cvtps_ph(_mm256_loadu_ps(f + j),
                                         _MM_FROUND_TO_NEAREST_INT));
    for (; j < n; j++)
        o[j] = f2h_exact(f[j]);
}
#else
#define PW_F16C 0
#endif

/*
 * The loops of the evaluator compiled twice, for x86-64's baseline (SSE2)
 * and for AVX2 (twice the lanes), the processor choosing when the module
 * loads (GCC's and clang's function multiversioning).
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define PW_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define PW_WIDE
#endif

/* ---- leaves --------------------------------------------------------------- */

/* Loops of a count known only when they run are split into chunks of a
 * constant count, which the compiler vectorizes (at -O2, GCC vectorizes
 * only loops whose count it knows), and the rest. */
#define CHUNK 16
#define CHUNKED(n, j, stmt)                                                 \
    do {                                                                    \
        int64_t j##_0_ = 0, j##_k_;                                         \
        for (; j##_0_ + CHUNK <= (n); j##_0_ += CHUNK)                      \
            for (j##_k_ = 0; j##_k_ < CHUNK; j##_k_++) {                    \
                int64_t j = j##_0_ + j##_k_;                                \
                stmt;                                                       \
            }                                                               \
        for (; j##_0_ < (n); j##_0_++) {                                    \
            int64_t j = j##_0_;                                             \
            stmt;                                                           \
        }                                                                   \
    } while (0)

/* cnt elements of type t from p at element off, stride st, into the
 * float block d. */
PW_WIDE static void run_f(mica_dtype_t t, const void *p, int64_t off, int64_t st,
                  float *restrict d, int64_t cnt)
{
    if (t == MICA_FLOAT32) {
        const float *restrict s = (const float *)p + off;
        if (st == 1) {
            memcpy(d, s, (size_t)cnt * sizeof *d);
        } else if (st == 0) {
            float v = s[0];
            CHUNKED(cnt, j, d[j] = v);
        } else {
            CHUNKED(cnt, j, d[j] = s[j * st]);
        }
    } else {
        const uint16_t *restrict s = (const uint16_t *)p + off;
        if (st == 0) {
            float v = t == MICA_FLOAT16 ? h2f(s[0]) : bf2f(s[0]);
            CHUNKED(cnt, j, d[j] = v);
        } else if (t == MICA_FLOAT16 && st == 1) {
#if PW_F16C
            if (f16c()) {
                h2f_f16c(d, s, cnt);
                return;
            }
#endif
            CHUNKED(cnt, j, d[j] = h2f(s[j]));
        } else if (t == MICA_FLOAT16) {
            CHUNKED(cnt, j, d[j] = h2f(s[j * st]));
        } else if (st == 1) {
            CHUNKED(cnt, j, d[j] = bf2f(s[j]));
        } else {
            CHUNKED(cnt, j, d[j] = bf2f(s[j * st]));
        }
    }
}

/* Element i of an integer or bool tensor of type t, as int64. */
static inline int64_t ld_i(mica_dtype_t t, const void *p, int64_t i)
{
    switch (t) {
    case MICA_INT8: return ((const int8_t *)p)[i];
    case MICA_UINT8: return ((const uint8_t *)p)[i];
    case MICA_INT32: return ((const int32_t *)p)[i];
    case MICA_INT64: return ((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0; /* bool */
    }
}

PW_WIDE static void run_i(mica_dtype_t t, const void *p, int64_t off, int64_t st,
                  int64_t *restrict d, int64_t cnt)
{
    if (st == 0) {
        int64_t v = ld_i(t, p, off);
        CHUNKED(cnt, j, d[j] = v);
        return;
    }
#define RUN(T, CONV)                                                        \
    do {                                                                    \
        const T *restrict s = (const T *)p + off;                           \
        if (st == 1)                                                        \
            CHUNKED(cnt, j, d[j] = CONV(s[j]));                             \
        else                                                                \
            CHUNKED(cnt, j, d[j] = CONV(s[j * st]));                        \
    } while (0)
#define AS_IS(v) (int64_t)(v)
#define TRUTH(v) (int64_t)((v) != 0)
    switch (t) {
    case MICA_INT8: RUN(int8_t, AS_IS); break;
    case MICA_UINT8: RUN(uint8_t, AS_IS); break;
    case MICA_INT32: RUN(int32_t, AS_IS); break;
    case MICA_INT64: RUN(int64_t, AS_IS); break;
    default: RUN(uint8_t, TRUTH); break;
    }
#undef RUN
#undef AS_IS
#undef TRUTH
}

/*
 * Elements [i0, i0 + m) of leaf l (type t, memory p) through view v into
 * the block buf; returns where they are: buf, or p itself where a full
 * block lies there contiguously in the block's representation (float32,
 * int64).
 */
static const void *load(const pw_view_t *v, int32_t l, mica_dtype_t t,
                        const void *p, int64_t i0, int64_t m, void *buf)
{
    int64_t c[MICA_MAX_DIMS], off = 0, rest = i0, done = 0;
    int32_t k, r = v->rank, fl = pw_is_float(t);

    if (r == 0) { /* one element */
        if (fl)
            run_f(t, p, 0, 0, buf, PW_B);
        else
            run_i(t, p, 0, 0, buf, PW_B);
        return buf;
    }
    for (k = r - 1; k >= 0; k--) {
        c[k] = rest % v->d[k];
        rest /= v->d[k];
        off += c[k] * v->s[l][k];
    }
    if (v->s[l][r - 1] == 1 && m == PW_B && c[r - 1] + m <= v->d[r - 1] &&
        (t == MICA_FLOAT32 || t == MICA_INT64))
        return (const char *)p + (size_t)off * mica_dtype_size(t);
    while (done < m) {
        int64_t run = v->d[r - 1] - c[r - 1];
        if (run > m - done)
            run = m - done;
        if (fl)
            run_f(t, p, off, v->s[l][r - 1], (float *)buf + done, run);
        else
            run_i(t, p, off, v->s[l][r - 1], (int64_t *)buf + done, run);
        done += run;
        off += run * v->s[l][r - 1];
        c[r - 1] += run;
        for (k = r - 1; k > 0 && c[k] == v->d[k]; k--) {
            off -= c[k] * v->s[l][k];
            c[k] = 0;
            c[k - 1]++;
            off += v->s[l][k - 1];
        }
    }
    return buf;
}

/* ---- instructions ----------------------------------------------------- */

/* Round a float block to the values of type t (float16, bfloat16). */
PW_WIDE static void round_to(mica_dtype_t t, float *restrict d)
{
    int j;
#if PW_F16C
    if (t == MICA_FLOAT16 && f16c()) {
        r16_f16c(d);
        return;
    }
#endif
    if (t == MICA_FLOAT16)
        for (j = 0; j < PW_B; j++)
            d[j] = r16(d[j]);
    else if (t == MICA_BFLOAT16)
        for (j = 0; j < PW_B; j++)
            d[j] = rbf(d[j]);
}

/* An integer block brought back into type t (int32 wraps, int8
 * saturates, bool is 0 or 1). */
PW_WIDE static void norm_i(mica_dtype_t t, int64_t *restrict d)
{
    int j;
    switch (t) {
    case MICA_INT32:
        for (j = 0; j < PW_B; j++)
            d[j] = mica__ew_wrap32(d[j]);
        break;
    case MICA_INT8:
        for (j = 0; j < PW_B; j++)
            d[j] = mica__ew_sat8(d[j]);
        break;
    case MICA_BOOL:
        for (j = 0; j < PW_B; j++)
            d[j] = d[j] != 0;
        break;
    default:
        break;
    }
}

/* ElementWise's max and min (mica__ew_fmax: a NaN loses against a
 * number, +0 above -0), written so that the loop vectorizes. */
static inline float max_f(float a, float b)
{
    int32_t ia;
    memcpy(&ia, &a, sizeof ia);
    return (a > b) | (b != b) | ((a == b) & (ia >= 0)) ? a : b;
}

static inline float min_f(float a, float b)
{
    int32_t ia;
    memcpy(&ia, &a, sizeof ia);
    return (a < b) | (b != b) | ((a == b) & (ia < 0)) ? a : b;
}

PW_WIDE static void ew_float(int op, float *restrict d, const float *restrict a,
                     const float *restrict b)
{
    int j;
    switch (op) {
#define F(OP)                                                               \
    case OP:                                                                \
        for (j = 0; j < PW_B; j++)                                          \
            d[j] = mica__ew_f(OP, a[j], b[j]);                              \
        break;
    F(MICA__EW_SUM) F(MICA__EW_PROD) F(MICA__EW_SUB) F(MICA__EW_DIV)
    F(MICA__EW_POW) F(MICA__EW_FLOOR_DIV)
#undef F
    case MICA__EW_MAX:
        for (j = 0; j < PW_B; j++)
            d[j] = max_f(a[j], b[j]);
        break;
    case MICA__EW_MIN:
        for (j = 0; j < PW_B; j++)
            d[j] = min_f(a[j], b[j]);
        break;
    default:
        break;
    }
}

/* A comparison of float blocks into a bool block. */
PW_WIDE static void cmp_float(int op, int64_t *restrict d, const float *restrict a,
                      const float *restrict b)
{
    int j;
    switch (op) {
    case MICA__EW_EQUAL:
        for (j = 0; j < PW_B; j++)
            d[j] = a[j] == b[j];
        break;
    case MICA__EW_GREATER:
        for (j = 0; j < PW_B; j++)
            d[j] = a[j] > b[j];
        break;
    default:
        for (j = 0; j < PW_B; j++)
            d[j] = a[j] < b[j];
        break;
    }
}

PW_WIDE static void ew_int(int op, int sat, int64_t *restrict d,
                   const int64_t *restrict a, const int64_t *restrict b)
{
    int j;
    switch (op) {
#define I(OP)                                                               \
    case OP:                                                                \
        for (j = 0; j < PW_B; j++)                                          \
            d[j] = mica__ew_i(OP, a[j], b[j], sat);                         \
        break;
    I(MICA__EW_SUM) I(MICA__EW_PROD) I(MICA__EW_MAX) I(MICA__EW_MIN)
    I(MICA__EW_SUB) I(MICA__EW_DIV) I(MICA__EW_POW) I(MICA__EW_FLOOR_DIV)
    I(MICA__EW_AND) I(MICA__EW_OR) I(MICA__EW_XOR) I(MICA__EW_EQUAL)
    I(MICA__EW_GREATER) I(MICA__EW_LESS)
#undef I
    default:
        break;
    }
}

static void unary_float(int op, float *restrict d, const float *restrict x)
{
    int j;
    switch (op) {
#define U(OP)                                                               \
    case OP:                                                                \
        for (j = 0; j < PW_B; j++)                                          \
            d[j] = mica__unary_f(OP, x[j]);                                 \
        break;
    case MICA__UN_EXP: /* the kit's vector exp, as Unary's vec */
        mica__vec_exp_n(x, d, PW_B);
        break;
    U(MICA__UN_LOG) U(MICA__UN_SQRT) U(MICA__UN_RECIP)
    U(MICA__UN_ABS) U(MICA__UN_NEG) U(MICA__UN_SIN) U(MICA__UN_COS)
    U(MICA__UN_TAN) U(MICA__UN_SINH) U(MICA__UN_COSH) U(MICA__UN_ASIN)
    U(MICA__UN_ACOS) U(MICA__UN_ATAN) U(MICA__UN_ASINH) U(MICA__UN_ACOSH)
    U(MICA__UN_ATANH) U(MICA__UN_CEIL) U(MICA__UN_FLOOR) U(MICA__UN_ERF)
    U(MICA__UN_SIGN) U(MICA__UN_ROUND)
#undef U
    default: /* an op this list lacks: the same function, not inlined */
        for (j = 0; j < PW_B; j++)
            d[j] = mica__unary_f(op, x[j]);
        break;
    }
}

PW_WIDE static void act_float(int type, float alpha, float beta, float *restrict d,
                      const float *restrict x)
{
    int j;
    switch (type) {
#define A(T)                                                                \
    case T:                                                                 \
        for (j = 0; j < PW_B; j++)                                          \
            d[j] = mica__act_f(T, x[j], alpha, beta);                       \
        break;
    case MICA__ACT_SIGMOID: /* the kit's vector functions, as vec's */
        mica__vec_sigmoid_n(x, d, PW_B);
        break;
    case MICA__ACT_TANH:
        mica__vec_tanh_n(x, d, PW_B);
        break;
    /* fmaxf and fminf are calls into the C library: the vectors of
     * kit_vec.h instead, which give their results (as vec's) */
    case MICA__ACT_CLIP:
        for (j = 0; j < PW_B; j += MICA__VL)
            mica__v_store(d + j, mica__v_max(mica__v_set1(alpha),
                                             mica__v_min(mica__v_set1(beta),
                                                         mica__v_load(x + j))));
        break;
    case MICA__ACT_HARD_SIGMOID:
        for (j = 0; j < PW_B; j += MICA__VL)
            mica__v_store(d + j, mica__v_max(mica__v_set1(0.0f),
                                             mica__v_min(mica__v_set1(1.0f),
                                                         alpha * mica__v_load(x + j) + beta)));
        break;
    A(MICA__ACT_RELU) A(MICA__ACT_LEAKY_RELU) A(MICA__ACT_ELU) A(MICA__ACT_SELU)
    A(MICA__ACT_SOFTSIGN) A(MICA__ACT_SOFTPLUS) A(MICA__ACT_SCALED_TANH)
    A(MICA__ACT_THRESHOLDED_RELU) A(MICA__ACT_GELU_ERF)
    A(MICA__ACT_GELU_TANH)
#undef A
    default: /* a type this list lacks: the same function, not inlined */
        for (j = 0; j < PW_B; j++)
            d[j] = mica__act_f(type, x[j], alpha, beta);
        break;
    }
}

static const float zeros[PW_B], *ones;
static float ones_block[PW_B];

/* A value of type `from` (its block a: float or int64) cast to `to`
 * into d (float or int64), as Identity converts: through a double. */
PW_WIDE static void cast(mica_dtype_t from, mica_dtype_t to, void *restrict d,
                 const void *restrict a)
{
    const float *af = a;
    const int64_t *ai = a;
    float *df = d;
    int64_t *di = d;
    int j;

    if (pw_is_float(from) && to == MICA_FLOAT32) {
        memcpy(d, a, PW_B * sizeof(float)); /* exact */
        return;
    }
    if (pw_is_float(from) && pw_is_float(to)) {
        memcpy(d, a, PW_B * sizeof(float));
        round_to(to, d);
        return;
    }
    for (j = 0; j < PW_B; j++) {
        union {
            float f;
            uint16_t h;
            int8_t i8;
            uint8_t u8;
            int32_t i32;
            int64_t i64;
        } u;
        double v = pw_is_float(from) ? (double)af[j] : (double)ai[j];
        u.i64 = 0;
        mica__identity_store(&u, (int)to, 0, v);
        if (to == MICA_FLOAT32)
            df[j] = u.f;
        else if (to == MICA_FLOAT16)
            df[j] = mica_kit_half_to_float(u.h);
        else if (to == MICA_BFLOAT16)
            df[j] = mica_kit_bf16_to_float(u.h);
        else
            di[j] = ld_i(to, &u, 0);
    }
}

/* Run instruction i of p (result type t) into block d. */
/* Scale's formula over a block, apart so that its pointers are restrict
 * (as ew_float's) and the loop vectorizes. */
PW_WIDE static void scale_float(float *restrict d, const float *restrict x,
                                const float *restrict sh,
                                const float *restrict sc)
{
    int j;
    for (j = 0; j < PW_B; j++)
        d[j] = mica__scale(x[j], sh[j], sc[j], 1.0f, 0);
}

PW_WIDE static void scale_pow(float *restrict d, const float *restrict x,
                              const float *restrict sh,
                              const float *restrict sc,
                              const float *restrict pw)
{
    int j;
    for (j = 0; j < PW_B; j++)
        d[j] = mica__scale(x[j], sh[j], sc[j], pw[j], 1);
}

PW_WIDE static void exec(const pw_prog_t *p, int32_t i, const mica_dtype_t *in,
                 const mica_dtype_t *types, void *restrict d,
                 const void *const *src, const void *const *coef)
{
    const pw_ins_t *ins = &p->ins[i];
    mica_dtype_t t = types[i];
    mica_dtype_t a0;
    int j;

    if (ins->kind == PW_CONST) {
        if (pw_is_float(t)) {
            float v = (float)ins->fval, *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = v;
        } else {
            int64_t v = ins->ival, *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = v;
        }
        return;
    }
    a0 = pw_value_type(in, types, ins->arg[0]);
    switch (ins->kind) {
    case PW_EW:
        if (!pw_is_float(a0)) {
            ew_int(ins->op, a0 == MICA_INT8, d, src[0], src[1]);
            norm_i(t, d);
        } else if (t == MICA_BOOL) {
            cmp_float(ins->op, d, src[0], src[1]);
        } else {
            ew_float(ins->op, d, src[0], src[1]);
            round_to(t, d);
        }
        return;
    case PW_UN:
        if (!pw_is_float(a0)) {
            const int64_t *x = src[0];
            int64_t *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = mica__unary_i(ins->op, x[j]);
            norm_i(t, d);
        } else if (t == MICA_BOOL) {
            const float *x = src[0];
            int64_t *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = mica__unary_f(ins->op, x[j]) != 0.0f;
        } else {
            unary_float(ins->op, d, src[0]);
            round_to(t, d);
        }
        return;
    case PW_ACT:
        if (!pw_is_float(a0)) { /* relu */
            const int64_t *x = src[0];
            int64_t *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = x[j] < 0 ? 0 : x[j];
        } else {
            act_float(ins->op, ins->alpha, ins->beta, d, src[0]);
            round_to(t, d);
        }
        return;
    case PW_SELECT: {
        const int64_t *c = src[0];
        if (pw_is_float(t)) {
            const float *a = src[1], *b = src[2];
            float *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = c[j] ? a[j] : b[j];
        } else {
            const int64_t *a = src[1], *b = src[2];
            int64_t *o = d;
            for (j = 0; j < PW_B; j++)
                o[j] = c[j] ? a[j] : b[j];
        }
        return;
    }
    case PW_SCALE: {
        const float *x = src[0];
        const float *sh = coef[0] ? coef[0] : zeros;
        const float *sc = coef[1] ? coef[1] : ones;
        const float *pw = coef[2] ? coef[2] : ones;
        if (ins->use_power)
            scale_pow(d, x, sh, sc, pw);
        else
            scale_float(d, x, sh, sc);
        round_to(t, d);
        return;
    }
    default: /* PW_CAST */
        cast(a0, t, d, src[0]);
        return;
    }
}

/* ---- running ---------------------------------------------------------- */

/* Store m elements of value block s (type t) into p at element i0. */
PW_WIDE static void store(mica_dtype_t t, void *p, int64_t i0, const void *s,
                  int64_t m)
{
    const float *restrict f = s;
    const int64_t *restrict v = s;

    switch (t) {
    case MICA_FLOAT32:
        if ((const float *)p + i0 != f)
            memcpy((float *)p + i0, f, (size_t)m * sizeof *f);
        break;
    case MICA_FLOAT16: {
        uint16_t *restrict o = (uint16_t *)p + i0;
#if PW_F16C
        if (f16c()) {
            f2h_f16c(o, f, m);
            break;
        }
#endif
        CHUNKED(m, j, o[j] = f2h_exact(f[j]));
        break;
    }
    case MICA_BFLOAT16: {
        uint16_t *restrict o = (uint16_t *)p + i0;
        CHUNKED(m, j, o[j] = (uint16_t)(fbits(f[j]) >> 16));
        break;
    }
    case MICA_INT8: {
        int8_t *restrict o = (int8_t *)p + i0;
        CHUNKED(m, j, o[j] = (int8_t)v[j]);
        break;
    }
    case MICA_UINT8: case MICA_BOOL: {
        uint8_t *restrict o = (uint8_t *)p + i0;
        CHUNKED(m, j, o[j] = (uint8_t)v[j]);
        break;
    }
    case MICA_INT32: {
        int32_t *restrict o = (int32_t *)p + i0;
        CHUNKED(m, j, o[j] = (int32_t)v[j]);
        break;
    }
    default: /* int64 */
        if ((const int64_t *)p + i0 != v)
            memcpy((int64_t *)p + i0, v, (size_t)m * sizeof *v);
        break;
    }
}

static pthread_once_t ones_once = PTHREAD_ONCE_INIT;

static void make_ones(void)
{
    int j;
    for (j = 0; j < PW_B; j++)
        ones_block[j] = 1.0f;
    ones = ones_block;
}

/* The type of leaf l of class c. */
static mica_dtype_t leaf_type(const pw_cls_t *c, int32_t l,
                              const mica_tensor_desc_t *in)
{
    return c->leaf[l].input >= 0 ? in[c->leaf[l].input].dtype
                                 : MICA_FLOAT32;
}

/* The memory of leaf l of class c. */
static const void *leaf_mem(const pw_prog_t *p, const pw_cls_t *c,
                            int32_t l, const void *const *inputs)
{
    const pw_leaf_t *f = &c->leaf[l];
    if (f->input >= 0)
        return inputs[f->input];
    return p->coef[p->ins[f->ins].w[f->role]];
}

/* The output value that instruction i's result is, directly computed
 * into its memory in a full block: its index, or -1. */
static int32_t direct_out(const pw_prog_t *p, const pw_cls_t *c, int32_t i,
                          const mica_dtype_t *types)
{
    int32_t j;
    if (types[i] != MICA_FLOAT32 && types[i] != MICA_INT64)
        return -1;
    for (j = 0; j < c->nb_out; j++)
        if (p->out[c->out[j]] == i)
            return j;
    return -1;
}

mica_status_t pw_cpu_run(const pw_cpu_t *cpu, const pw_prog_t *p,
                         const mica_dtype_t *types,
                         const mica_tensor_desc_t *in,
                         const mica_tensor_desc_t *out,
                         const void *const *inputs, void *const *outputs,
                         const pw_view_t *views, void *scratch,
                         mica_error_t *err)
{
    mica_dtype_t it[PW_MAX_INPUTS];
    unsigned char *base = (unsigned char *)(((uintptr_t)scratch + 63) &
                                            ~(uintptr_t)63);
    const void **slot = (const void **)(base + (size_t)cpu->nb_slots *
                                                   SLOT_BYTES);
    int32_t k, a, j;

    (void)err;
    pthread_once(&ones_once, make_ones);
    for (k = 0; k < p->nb_inputs && k < PW_MAX_INPUTS; k++)
        it[k] = in[k].dtype;
    for (k = 0; k < p->nb_cls; k++) {
        const pw_cls_t *c = &p->cls[k];
        const plan_t *pl = &cpu->plan[k];
        const pw_view_t *v = &views[k];
        const void *at[6];
        int64_t i0, n = v->n;

        for (i0 = 0; i0 < n; i0 += PW_B) {
            int64_t m = n - i0 < PW_B ? n - i0 : PW_B;
            for (a = 0; a < pl->nb_acts; a++) {
                const act_t *t = &pl->acts[a];
                void *buf = base + (size_t)t->dst * SLOT_BYTES;
                int32_t o;
                if (t->load) {
                    slot[t->dst] = load(v, t->id, leaf_type(c, t->id, in),
                                        leaf_mem(p, c, t->id, inputs), i0, m,
                                        buf);
                    continue;
                }
                if (m == PW_B && (o = direct_out(p, c, t->id, types)) >= 0)
                    buf = (char *)outputs[c->out[o]] +
                          (size_t)i0 * mica_dtype_size(types[t->id]);
                for (j = 0; j < 3; j++)
                    at[j] = t->src[j] >= 0 ? slot[t->src[j]] : NULL;
                for (j = 0; j < 3; j++)
                    at[3 + j] = t->coef[j] >= 0 ? slot[t->coef[j]] : NULL;
                exec(p, t->id, it, types, buf, at, at + 3);
                slot[t->dst] = buf;
            }
            for (j = 0; j < c->nb_out; j++) {
                int32_t o = c->out[j];
                store(out[o].dtype, outputs[o], i0, slot[pl->out_slot[j]],
                      m);
            }
        }
    }
    return MICA_OK;
}
