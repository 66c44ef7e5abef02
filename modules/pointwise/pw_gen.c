/*
 * modules/pointwise/pw_gen.c - the CUDA C++ source of a typed Pointwise
 * program, compiled by NVRTC when the engine is built (pw_cuda.c).
 *
 * The source includes the families' own headers (elementwise.h, unary.h,
 * activation.h, scale.h, identity.h, mica/kit_half.h: pw_headers.c holds
 * their text), so that each op is the very function its layer's CPU
 * reference and CUDA kernel use.  Per class of outputs c:
 *
 *   pw<c>_body   one element: the leaves' values in, the outputs' out,
 *                each instruction one line (float values rounded to
 *                float16/bfloat16 after each, integers brought back into
 *                their type, as the layers store them);
 *   pw<c>_flat4  the view is flat (every leaf the output's shape, or one
 *                value): 4 elements per thread with 16-byte (float32)
 *                loads and stores where aligned, then the tail;
 *   pw<c>_flat1  flat, one element per thread (unaligned memory);
 *   pw<c>_gen4   any view, 32-bit coordinates, 4 elements of one
 *                innermost run per thread: leaves read contiguously
 *                loaded as vectors, broadcast ones loaded once (a bias
 *                per channel, a row);
 *   pw<c>_gen1   any view, 32-bit coordinates, one element per thread;
 *   pw<c>_gen64  any view, 64-bit coordinates.
 * All are grid-stride loops over pw_args_t (pw_args.h); the host picks
 * one per launch (pw_cuda.c).
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"

#include "pointwise.h"

/* A growing string; `bad` set once memory ran out. */
typedef struct sb {
    char *s;
    size_t n, cap;
    int bad;
} sb_t;

static void put(sb_t *b, const char *fmt, ...) MICA_PRINTF(2, 3);
static void put(sb_t *b, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (b->bad)
        return;
    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->bad = 1;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        {
            size_t cap = b->cap * 2 + (size_t)k + 1;
            char *s = realloc(b->s, cap);
            if (!s) {
                b->bad = 1;
                return;
            }
            b->s = s;
            b->cap = cap;
        }
    }
}

/* What every program's source starts with: storage and compute types
 * per dtype (pw_t), element and 4-element loads and stores, rounding
 * and casts. */
static const char prelude[] =
    "#include \"mica/kit_half.h\"\n"
    "#include \"elementwise.h\"\n"
    "#include \"unary.h\"\n"
    "#include \"activation.h\"\n"
    "#include \"scale.h\"\n"
    "#include \"identity.h\"\n"
    "#include \"pw_args.h\"\n"
    "\n"
    "typedef long long pw_i;\n"
    "#define PW_D __device__ __forceinline__\n"
    "template <int T> struct pw_t;\n"
    "#define PW_T(T_, S_, C_, LD, ST) template <> struct pw_t<T_> { "
    "typedef S_ S; typedef C_ C; static PW_D C ld(S s) { return LD; } "
    "static PW_D S st(C c) { return ST; } };\n"
    "PW_T(MICA_FLOAT32, float, float, s, c)\n"
    "PW_T(MICA_FLOAT16, unsigned short, float, mica_kit_half_to_float(s), "
    "mica_kit_float_to_half(c))\n"
    "PW_T(MICA_BFLOAT16, unsigned short, float, mica_kit_bf16_to_float(s), "
    "mica_kit_float_to_bf16(c))\n"
    "PW_T(MICA_INT8, signed char, pw_i, (pw_i)s, (S)c)\n"
    "PW_T(MICA_UINT8, unsigned char, pw_i, (pw_i)s, (S)c)\n"
    "PW_T(MICA_INT32, int, pw_i, (pw_i)s, (S)c)\n"
    "PW_T(MICA_INT64, long long, pw_i, (pw_i)s, (S)c)\n"
    "PW_T(MICA_BOOL, unsigned char, pw_i, (pw_i)(s != 0), (S)(c != 0))\n"
    "template <typename S> struct alignas(sizeof(S) * 4 > 16 ? 16 : "
    "sizeof(S) * 4) pw_v4 { S v[4]; };\n"
    "template <int T> PW_D typename pw_t<T>::C pw_ld(const void *p, "
    "long long i)\n"
    "{ return pw_t<T>::ld(((const typename pw_t<T>::S *)p)[i]); }\n"
    "template <int T> PW_D void pw_st(void *p, long long i, "
    "typename pw_t<T>::C c)\n"
    "{ ((typename pw_t<T>::S *)p)[i] = pw_t<T>::st(c); }\n"
    "template <int T> PW_D void pw_ld4(const void *p, long long i, bool vec, "
    "typename pw_t<T>::C *o)\n"
    "{\n"
    "    typedef typename pw_t<T>::S S;\n"
    "    if (vec) {\n"
    "        const pw_v4<S> q = *(const pw_v4<S> *)((const S *)p + i);\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 4; j++) o[j] = pw_t<T>::ld(q.v[j]);\n"
    "    } else {\n"
    "        const typename pw_t<T>::C c = pw_ld<T>(p, i);\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 4; j++) o[j] = c;\n"
    "    }\n"
    "}\n"
    "template <int T> PW_D void pw_st4(void *p, long long i, "
    "const typename pw_t<T>::C *o)\n"
    "{\n"
    "    typedef typename pw_t<T>::S S;\n"
    "    pw_v4<S> q;\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 4; j++) q.v[j] = pw_t<T>::st(o[j]);\n"
    "    *(pw_v4<S> *)((S *)p + i) = q;\n"
    "}\n"
    "PW_D float pw_r16(float x) "
    "{ return mica_kit_half_to_float(mica_kit_float_to_half(x)); }\n"
    "PW_D float pw_rbf(float x) "
    "{ return mica_kit_bf16_to_float(mica_kit_float_to_bf16(x)); }\n"
    "template <int T> PW_D typename pw_t<T>::C pw_cast(double v)\n"
    "{ typename pw_t<T>::S s; mica__identity_store(&s, T, 0, v); "
    "return pw_t<T>::ld(s); }\n"
    "\n";

/* The C names of dtypes' enum values, as the headers spell them. */
static const char *dt(mica_dtype_t t)
{
    switch (t) {
    case MICA_FLOAT32: return "MICA_FLOAT32";
    case MICA_FLOAT16: return "MICA_FLOAT16";
    case MICA_BFLOAT16: return "MICA_BFLOAT16";
    case MICA_INT8: return "MICA_INT8";
    case MICA_UINT8: return "MICA_UINT8";
    case MICA_INT32: return "MICA_INT32";
    case MICA_INT64: return "MICA_INT64";
    default: return "MICA_BOOL";
    }
}

/* The compute type of dtype t. */
static const char *ct(mica_dtype_t t)
{
    return pw_is_float(t) ? "float" : "pw_i";
}

/* A float as an exact C++ literal (hexadecimal). */
static void lit(sb_t *b, float v)
{
    put(b, "%af", (double)v);
}

/* The expression of value v in class c's body. */
static void value(sb_t *b, const pw_cls_t *c, int32_t v)
{
    if (PW_IS_INPUT(v))
        put(b, "x%d", (int)c->in_leaf[PW_INPUT_OF(v)]);
    else
        put(b, "v%d", (int)v);
}

/* Bring value vK, of type t, back into its type (as its layer stores
 * it). */
static void settle(sb_t *b, int32_t k, mica_dtype_t t)
{
    switch (t) {
    case MICA_FLOAT16: put(b, "    v%d = pw_r16(v%d);\n", (int)k, (int)k);
        break;
    case MICA_BFLOAT16: put(b, "    v%d = pw_rbf(v%d);\n", (int)k, (int)k);
        break;
    case MICA_INT32:
        put(b, "    v%d = mica__ew_wrap32(v%d);\n", (int)k, (int)k);
        break;
    case MICA_INT8:
        put(b, "    v%d = mica__ew_sat8(v%d);\n", (int)k, (int)k);
        break;
    case MICA_BOOL: put(b, "    v%d = v%d != 0;\n", (int)k, (int)k); break;
    default: break;
    }
}

/* Instruction k of p in class c's body. */
static void instruction(sb_t *b, const pw_prog_t *p, const pw_cls_t *c,
                        int32_t k, const mica_dtype_t *in,
                        const mica_dtype_t *types)
{
    const pw_ins_t *ins = &p->ins[k];
    mica_dtype_t t = types[k], a0;
    int32_t r;

    put(b, "    %s v%d = ", ct(t), (int)k);
    if (ins->kind == PW_CONST) { /* its bits: exact, NaN and infinities */
        float f = (float)ins->fval;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        if (pw_is_float(t))
            put(b, "__uint_as_float(0x%08xu);\n", (unsigned)u);
        else
            put(b, "(pw_i)0x%016llxULL;\n",
                (unsigned long long)ins->ival);
        return;
    }
    a0 = pw_value_type(in, types, ins->arg[0]);
    switch (ins->kind) {
    case PW_EW:
        if (pw_is_float(a0))
            put(b, "mica__ew_f(%d, ", (int)ins->op);
        else
            put(b, "mica__ew_i(%d, ", (int)ins->op);
        value(b, c, ins->arg[0]);
        put(b, ", ");
        value(b, c, ins->arg[1]);
        if (!pw_is_float(a0))
            put(b, ", %d", a0 == MICA_INT8);
        put(b, ")%s;\n", pw_is_float(a0) && t == MICA_BOOL ? " != 0.0f" : "");
        break;
    case PW_UN:
        put(b, "mica__unary_%s(%d, ", pw_is_float(a0) ? "f" : "i",
            (int)ins->op);
        value(b, c, ins->arg[0]);
        put(b, ")%s;\n", pw_is_float(a0) && t == MICA_BOOL ? " != 0.0f" : "");
        break;
    case PW_ACT:
        if (!pw_is_float(a0)) { /* relu */
            value(b, c, ins->arg[0]);
            put(b, " < 0 ? 0 : ");
            value(b, c, ins->arg[0]);
            put(b, ";\n");
            break;
        }
        put(b, "mica__act_f(%d, ", (int)ins->op);
        value(b, c, ins->arg[0]);
        put(b, ", ");
        lit(b, ins->alpha);
        put(b, ", ");
        lit(b, ins->beta);
        put(b, ");\n");
        break;
    case PW_SELECT:
        value(b, c, ins->arg[0]);
        put(b, " ? ");
        value(b, c, ins->arg[1]);
        put(b, " : ");
        value(b, c, ins->arg[2]);
        put(b, ";\n");
        return; /* its operands are of its type already */
    case PW_SCALE:
        put(b, "mica__scale(");
        value(b, c, ins->arg[0]);
        for (r = 0; r < 3; r++) {
            int32_t l = c->coef_leaf[3 * k + r];
            put(b, ", ");
            if (l >= 0)
                put(b, "x%d", (int)l);
            else
                put(b, "%s", r == 0 ? "0.0f" : "1.0f");
        }
        put(b, ", %d);\n", (int)ins->use_power);
        break;
    default: /* PW_CAST */
        if (pw_is_float(a0) && t == MICA_FLOAT32) {
            value(b, c, ins->arg[0]);
            put(b, ";\n");
        } else if (pw_is_float(a0) && pw_is_float(t)) {
            put(b, "%s(", t == MICA_FLOAT16 ? "pw_r16" : "pw_rbf");
            value(b, c, ins->arg[0]);
            put(b, ");\n");
        } else {
            put(b, "pw_cast<%s>((double)", dt(t));
            value(b, c, ins->arg[0]);
            put(b, ");\n");
        }
        return; /* a cast makes a value of its type */
    }
    settle(b, k, t);
}

/* The dtype of leaf l of class c. */
static mica_dtype_t leaf_dt(const pw_cls_t *c, int32_t l,
                            const mica_dtype_t *in)
{
    return c->leaf[l].input >= 0 ? in[c->leaf[l].input] : MICA_FLOAT32;
}

/* The most instructions of a body inlined into each kernel. */
#define BODY_INLINE 48

/* Class k's body: pw<k>_body(leaves..., &outputs...). */
static void body(sb_t *b, const pw_prog_t *p, int32_t k,
                 const mica_dtype_t *in, const mica_dtype_t *types)
{
    const pw_cls_t *c = &p->cls[k];
    int32_t l, i, j;

    int32_t nb = 0;

    for (i = 0; i < p->nb_ins; i++)
        nb += c->need[i];
    /* a long body is compiled once, called from each kernel: the
     * kernels stay small, and NVRTC quick */
    put(b, "%s void pw%d_body(",
        nb > BODY_INLINE ? "__device__ __noinline__" : "PW_D", (int)k);
    for (l = 0; l < c->nb_leaves; l++)
        put(b, "%s%s x%d", l ? ", " : "", ct(leaf_dt(c, l, in)), (int)l);
    for (j = 0; j < c->nb_out; j++) {
        int32_t v = p->out[c->out[j]];
        put(b, ", %s &y%d", ct(pw_value_type(in, types, v)), (int)j);
    }
    put(b, ")\n{\n");
    for (i = 0; i < p->nb_ins; i++)
        if (c->need[i])
            instruction(b, p, c, i, in, types);
    for (j = 0; j < c->nb_out; j++) {
        put(b, "    y%d = ", (int)j);
        value(b, c, p->out[c->out[j]]);
        put(b, ";\n");
    }
    put(b, "}\n\n");
}

/* One kernel of class k: its loads, the body, its stores.  mode 0: flat
 * (offset i along a leaf of stride 1), 1: 32-bit coordinates, 2: 64-bit;
 * vec: 4 elements per thread. */
static void kernel(sb_t *b, const pw_prog_t *p, int32_t k,
                   const mica_dtype_t *in, const mica_dtype_t *types,
                   const char *suffix, int mode, int vec)
{
    const pw_cls_t *c = &p->cls[k];
    const char *I = mode == 1 ? "unsigned" : "long long";
    int32_t l, j;

    put(b, "extern \"C\" __global__ void __launch_bounds__(256) "
        "pw%d_%s(const pw_args_t a)\n{\n", (int)k, suffix);
    put(b, "    const %s n = (%s)a.n, step = (%s)gridDim.x * blockDim.x;\n",
        I, I, I);
    if (mode)
        put(b, "    const int r = a.rank;\n");
    put(b, "    %s g = (%s)blockIdx.x * blockDim.x + threadIdx.x;\n", I, I);
    put(b, "    for (; g < %s; g += step) {\n", vec ? "(n >> 2)" : "n");
    put(b, "        const %s i = %s;\n", I, vec ? "g << 2" : "g");
    if (mode) {
        put(b, "        %s rest = i", I);
        for (l = 0; l < c->nb_leaves; l++)
            put(b, ", o%d = 0", (int)l);
        put(b, ";\n#pragma unroll\n"
            "        for (int k = MICA_MAX_DIMS - 1; k >= 0; k--) {\n"
            "            if (k >= r) continue;\n"
            "            const %s dk = (%s)a.d[k], ck = rest %% dk;\n"
            "            rest /= dk;\n", I, I);
        for (l = 0; l < c->nb_leaves; l++)
            put(b, "            o%d += ck * (%s)a.s[%d][k];\n", (int)l, I,
                (int)l);
        put(b, "        }\n");
    }
    for (l = 0; l < c->nb_leaves; l++) {
        mica_dtype_t t = leaf_dt(c, l, in);
        char off[64];
        if (mode)
            snprintf(off, sizeof off, "(long long)o%d", (int)l);
        else
            snprintf(off, sizeof off, "a.s[%d][0] ? (long long)i : 0LL",
                     (int)l);
        if (vec)
            put(b, "        %s x%d[4];\n        pw_ld4<%s>(a.leaf[%d], %s, "
                "a.s[%d][%s] != 0, x%d);\n", ct(t), (int)l, dt(t), (int)l,
                off, (int)l, mode ? "r - 1" : "0", (int)l);
        else
            put(b, "        const %s x%d = pw_ld<%s>(a.leaf[%d], %s);\n",
                ct(t), (int)l, dt(t), (int)l, off);
    }
    for (j = 0; j < c->nb_out; j++)
        put(b, "        %s y%d%s;\n",
            ct(pw_value_type(in, types, p->out[c->out[j]])), (int)j,
            vec ? "[4]" : "");
    if (vec)
        put(b, "#pragma unroll\n        for (int j = 0; j < 4; j++)\n    ");
    put(b, "        pw%d_body(", (int)k);
    for (l = 0; l < c->nb_leaves; l++)
        put(b, "%sx%d%s", l ? ", " : "", (int)l, vec ? "[j]" : "");
    for (j = 0; j < c->nb_out; j++)
        put(b, ", y%d%s", (int)j, vec ? "[j]" : "");
    put(b, ");\n");
    for (j = 0; j < c->nb_out; j++)
        put(b, "        pw_st%s<%s>(a.out[%d], (long long)i, y%d);\n",
            vec ? "4" : "",
            dt(pw_value_type(in, types, p->out[c->out[j]])), (int)j,
            (int)j);
    put(b, "    }\n");
    if (vec && !mode) {
        /* the tail of a flat view: one element per thread */
        put(b, "    for (long long i = ((long long)n & ~3LL) + "
            "(long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
            "i += step) {\n");
        for (l = 0; l < c->nb_leaves; l++) {
            mica_dtype_t t = leaf_dt(c, l, in);
            put(b, "        const %s x%d = pw_ld<%s>(a.leaf[%d], a.s[%d][0] "
                "? i : 0LL);\n", ct(t), (int)l, dt(t), (int)l, (int)l);
        }
        for (j = 0; j < c->nb_out; j++)
            put(b, "        %s y%d;\n",
                ct(pw_value_type(in, types, p->out[c->out[j]])), (int)j);
        put(b, "        pw%d_body(", (int)k);
        for (l = 0; l < c->nb_leaves; l++)
            put(b, "%sx%d", l ? ", " : "", (int)l);
        for (j = 0; j < c->nb_out; j++)
            put(b, ", y%d", (int)j);
        put(b, ");\n");
        for (j = 0; j < c->nb_out; j++)
            put(b, "        pw_st<%s>(a.out[%d], i, y%d);\n",
                dt(pw_value_type(in, types, p->out[c->out[j]])), (int)j,
                (int)j);
        put(b, "    }\n");
    }
    put(b, "}\n\n");
}

char *pw_gen_source(const pw_prog_t *p, const mica_dtype_t *in,
                    int32_t nb_in, const mica_dtype_t *types)
{
    sb_t b;
    int32_t k;

    (void)nb_in;
    memset(&b, 0, sizeof b);
    b.cap = 16384;
    if (!(b.s = malloc(b.cap)))
        return NULL;
    b.s[0] = '\0';
    put(&b, "%s", prelude);
    for (k = 0; k < p->nb_cls; k++) {
        body(&b, p, k, in, types);
        kernel(&b, p, k, in, types, "flat4", 0, 1);
        kernel(&b, p, k, in, types, "flat1", 0, 0);
        kernel(&b, p, k, in, types, "gen4", 1, 1);
        kernel(&b, p, k, in, types, "gen1", 1, 0);
        kernel(&b, p, k, in, types, "gen64", 2, 0);
    }
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
