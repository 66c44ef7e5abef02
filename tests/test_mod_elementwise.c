/*
 * tests/test_mod_elementwise.c - the ElementWise module: every op and type
 * against values computed here (double arithmetic, broadcasting done
 * independently), integer edge cases as literals, broadcasting, empty
 * tensors, the vector and strided CUDA paths, each on the CPU's default
 * implementation (oneDNN's where built) and on the reference; the
 * formats each takes and oneDNN's in channels last; and the error
 * messages.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define I8 MICA_INT8
#define I32 MICA_INT32
#define BOOL MICA_BOOL

static const char *const arith[] = {"sum", "prod", "max", "min", "sub",
                                    "div", "pow", "floor_div"};

/* The implementation the CPU runs pin (NULL: the highest priority), put
 * in front of the labels. */
static const char *pass_pin;

static int is_cmp(const char *op)
{
    return !strcmp(op, "equal") || !strcmp(op, "greater") ||
           !strcmp(op, "less");
}

static int is_logic(const char *op)
{
    return !strcmp(op, "and") || !strcmp(op, "or") || !strcmp(op, "xor");
}

/* int32 results wrap modulo 2^32, int8 results saturate. */
static double fit(mica_dtype_t t, double v)
{
    if (t == I8)
        return v > 127 ? 127 : v < -128 ? -128 : v;
    if (t == I32) {
        double m = fmod(v + 2147483648.0, 4294967296.0);
        if (m < 0)
            m += 4294967296.0;
        return m - 2147483648.0;
    }
    return v;
}

/* Integer power, exactly (small results only), 1/a^n truncated. */
static double ipow(double a, double e)
{
    double r = 1;
    int i;
    if (e < 0)
        return a == 1 ? 1 : a == -1 ? (fmod(-e, 2) == 1 ? -1 : 1) : 0;
    for (i = 0; i < (int)e; i++)
        r *= a;
    return r;
}

static double ref(const char *op, mica_dtype_t t, double a, double b)
{
    int fl = t == F32 || t == F16;
    if (!strcmp(op, "sum")) return fit(t, a + b);
    if (!strcmp(op, "prod")) return fit(t, a * b);
    if (!strcmp(op, "max")) return fmax(a, b);
    if (!strcmp(op, "min")) return fmin(a, b);
    if (!strcmp(op, "sub")) return fit(t, a - b);
    if (!strcmp(op, "div"))
        return fl ? a / b : b == 0 ? 0 : fit(t, trunc(a / b));
    if (!strcmp(op, "pow")) return fl ? pow(a, b) : fit(t, ipow(a, b));
    if (!strcmp(op, "floor_div"))
        return fl ? floor(a / b) : b == 0 ? 0 : fit(t, floor(a / b));
    if (!strcmp(op, "and")) return a != 0 && b != 0;
    if (!strcmp(op, "or")) return a != 0 || b != 0;
    if (!strcmp(op, "xor")) return (a != 0) != (b != 0);
    if (!strcmp(op, "equal")) return a == b;
    if (!strcmp(op, "greater")) return a > b;
    if (!strcmp(op, "less")) return a < b;
    return NAN;
}

/* Check `op` on a (dims da) and b (dims db) of type t, rank nd. */
static void check(const char *op, mica_dtype_t t, int nd, const int64_t *da,
                  const double *va, const int64_t *db, const double *vb,
                  const char *what)
{
    th_tensor_t in[2], want;
    int64_t od[MICA_MAX_DIMS], i, n;
    mica_dtype_t to = is_cmp(op) || is_logic(op) ? BOOL : t;
    double tol = t == F16 ? 1e-3 : t == F32 ? 1e-5 : 0;
    char label[256];
    int k;

    for (k = 0; k < nd; k++)
        od[k] = da[k] == 1 ? db[k] : da[k];
    in[0] = th_tensor(t, nd, da, va);
    in[1] = th_tensor(t, nd, db, vb);
    want = th_tensor(to, nd, od, NULL);
    n = th_volume(&want);
    for (i = 0; i < n; i++) {
        int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
        for (k = nd - 1; k >= 0; k--) {
            int64_t c = rem % od[k];
            rem /= od[k];
            ia += (da[k] == 1 ? 0 : c) * sa;
            ib += (db[k] == 1 ? 0 : c) * sb;
            sa *= da[k];
            sb *= db[k];
        }
        th_set(&want, i, ref(op, t, th_get(&in[0], ia), th_get(&in[1], ib)));
    }
    snprintf(label, sizeof label, "%s%s%s %s %s", pass_pin ? pass_pin : "",
             pass_pin ? ": " : "", op, mica_dtype_name(t), what);
    th_check(label, "ElementWise", th_f_str(th_fields(), "op", op), 2, in, 1,
             &want, tol);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want);
}

/* Same shape, one row of n values. */
static void check1(const char *op, mica_dtype_t t, int64_t n,
                   const double *va, const double *vb, const char *what)
{
    check(op, t, 1, &n, va, &n, vb, what);
}

/* A literal case: a op b must give `want` (all [n], type t -> tw). */
static void literal(const char *op, mica_dtype_t t, mica_dtype_t tw, int n,
                    const double *va, const double *vb, const double *vw,
                    const char *what)
{
    int64_t d = n;
    th_tensor_t in[2], want;
    char label[256];

    in[0] = th_tensor(t, 1, &d, va);
    in[1] = th_tensor(t, 1, &d, vb);
    want = th_tensor(tw, 1, &d, vw);
    snprintf(label, sizeof label, "%s%s%s %s %s", pass_pin ? pass_pin : "",
             pass_pin ? ": " : "", op, mica_dtype_name(t), what);
    th_check(label, "ElementWise", th_f_str(th_fields(), "op", op), 2, in, 1,
             &want, 0);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want);
}

static void fails(const char *label, const char *op, mica_dtype_t ta,
                  int na, const int64_t *da, mica_dtype_t tb, int nb,
                  const int64_t *db, int nb_in, const char *needle)
{
    th_tensor_t in[2];
    th_fields_t *f = th_fields();
    in[0] = th_tensor(ta, na, da, NULL);
    in[1] = th_tensor(tb, nb, db, NULL);
    if (op)
        th_f_str(f, "op", op);
    th_check_error(label, "ElementWise", f, nb_in, in, 1, needle);
    th_free(&in[0]);
    th_free(&in[1]);
}

static void every_op(void)
{
    static const double fa[] = {-3.5, -1, 0.5, 2, 3.25, 7};
    static const double fb[] = {2, -4, 1.5, 0.5, 3, -2.5};
    static const double ia[] = {-7, -1, 0, 5, 9, 100, -100, 7};
    static const double ib[] = {2, -3, 4, 0, -2, 3, 2, -2};
    static const double ca[] = {1, 2, 3, -1, 0, 5};
    static const double cb[] = {1, 3, 2, -1, 1, 5};
    static const double la[] = {0, 0, 1, 1};
    static const double lb[] = {0, 1, 0, 1};
    static const mica_dtype_t nums[] = {F32, F16, I32, I8};
    static const char *const cmps[] = {"equal", "greater", "less"};
    static const char *const logic[] = {"and", "or", "xor", "equal"};
    size_t o, t;

    for (o = 0; o < sizeof arith / sizeof *arith; o++)
        for (t = 0; t < 4; t++) {
            int fl = nums[t] == F32 || nums[t] == F16;
            check1(arith[o], nums[t], fl ? 6 : 8, fl ? fa : ia, fl ? fb : ib,
                   "same shape");
        }
    for (o = 0; o < 3; o++)
        for (t = 0; t < 4; t++)
            check1(cmps[o], nums[t], 6, ca, cb, "same shape");
    for (o = 0; o < 4; o++)
        check1(logic[o], BOOL, 4, la, lb, "truth table");
}

static void integer_edges(void)
{
    static const double a1[] = {2147483647, -2147483647 - 1.0, 65536, 7, -7};
    static const double b1[] = {1, -1, 65536, 2, 2};
    static const double sum[] = {-2147483647 - 1.0, 2147483647, 131072, 9, -5};
    static const double prod[] = {2147483647, -2147483647 - 1.0, 0, 14, -14};
    static const double div[] = {2147483647, -2147483647 - 1.0, 1, 3, -3};
    static const double fdiv[] = {2147483647, -2147483647 - 1.0, 1, 3, -4};
    static const double z1[] = {5, -5, 0, 0, 0};
    static const double z2[] = {-1, -2, -3, -1, -2};
    static const double zw[] = {0, 0, 0, 0, 0};
    static const double p1[] = {2, -3, 3, 0, 1, -1};
    static const double p2[] = {10, 3, 21, -1, -5, -3};
    static const double pw[] = {1024, -27, 10460353203.0 - 2 * 4294967296.0,
                                0, 1, -1};
    static const double s1[] = {100, -100, 16, -128, 2, -2};
    static const double s2[] = {100, 100, 16, -1, 7, 7};
    static const double ssum[] = {127, 0, 32, -128, 9, 5};
    static const double ssub[] = {0, -128, 0, -127, -5, -9};
    static const double sprod[] = {127, -128, 127, 127, 14, -14};
    static const double sdiv[] = {1, -1, 1, 127, 0, 0};
    static const double spow[] = {127, 127, 127, 0, 127, -128};

    literal("sum", I32, I32, 5, a1, b1, sum, "wraps");
    literal("prod", I32, I32, 5, a1, b1, prod, "wraps");
    literal("div", I32, I32, 5, a1, b1, div, "truncates");
    literal("floor_div", I32, I32, 5, a1, b1, fdiv, "floors");
    literal("div", I32, I32, 5, z1, zw, zw, "by zero gives 0");
    literal("floor_div", I32, I32, 5, z1, zw, zw, "by zero gives 0");
    literal("pow", I32, I32, 5, zw, z2, zw, "0 to a negative power gives 0");
    literal("pow", I32, I32, 6, p1, p2, pw, "exact, wraps, negative powers");
    literal("sum", I8, I8, 6, s1, s2, ssum, "saturates");
    literal("sub", I8, I8, 6, s1, s2, ssub, "saturates");
    literal("prod", I8, I8, 6, s1, s2, sprod, "saturates");
    literal("div", I8, I8, 6, s1, s2, sdiv, "saturates");
    literal("pow", I8, I8, 6, s1, s2, spow, "saturates");
}

/* literal() on the CPU alone (one TAP result): CUDA refuses the type. */
static void literal_cpu(const char *op, mica_dtype_t t, mica_dtype_t tw,
                        int n, const double *va, const double *vb,
                        const double *vw, const char *what)
{
    int64_t d = n;
    th_tensor_t in[2], want;
    char label[256];

    in[0] = th_tensor(t, 1, &d, va);
    in[1] = th_tensor(t, 1, &d, vb);
    want = th_tensor(tw, 1, &d, vw);
    snprintf(label, sizeof label, "%s%s%s %s %s", pass_pin ? pass_pin : "",
             pass_pin ? ": " : "", op, mica_dtype_name(t), what);
    th_check_cpu(label, "ElementWise", th_f_str(th_fields(), "op", op), 2,
                 in, &want, 0, 0);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want);
}

/* The `op` enum's values of the ops below (modules/elementwise/
 * elementwise.h): th_instance passes fields unchecked, an enum as its
 * value. */
enum { OP_SUM = 0, OP_BITWISE_AND = 14 };

/* CUDA's ElementWise refuses op on inputs of type t (its
 * supports_format, asked without a GPU). */
static void fails_on_cuda(const char *label, int op, mica_dtype_t t)
{
    th_refused(label, "ElementWise", MICA_DEVICE_CUDA, "cuda",
               th_f_int(th_fields(), "op", op), t, 2);
}

/* The types only the CPU reference takes (ONNX's): float64, and the
 * integers that wrap to their width; CUDA refuses them. */
static void wide_types(void)
{

    static const double u1[] = {250, 3, 200, 7, 0, 9};
    static const double u2[] = {10, 5, 2, 0, 1, 4};
    static const double usum[] = {4, 8, 202, 7, 1, 13};
    static const double usub[] = {240, 254, 198, 7, 255, 5};
    static const double uprod[] = {196, 15, 144, 0, 0, 36};
    static const double udiv[] = {25, 0, 100, 0, 0, 2};
    static const double upow[] = {0, 243, 64, 1, 0, 161};
    static const double w1[] = {65535, 1, 40000};
    static const double w2[] = {1, 2, 40000};
    static const double wsum[] = {0, 3, 14464};
    static const double ugt[] = {1, 0, 1, 1, 0, 1};
    static const double big1[] = {18446744073709549568.0, 1, 65535};
    static const double big2[] = {1, 18446744073709549568.0, 65536};
    static const double bigmax[] = {18446744073709549568.0,
                                    18446744073709549568.0, 65536};
    static const double bigless[] = {0, 1, 1};
    static const double s1[] = {32767, -32768, -7, 7, 300};
    static const double s2[] = {1, -1, 2, -2, 300};
    static const double ssum[] = {-32768, 32767, -5, 5, 600};
    static const double sdiv[] = {32767, -32768, -3, -3, 1};
    static const double sfdiv[] = {32767, -32768, -4, -4, 1};
    static const double sprod[] = {32767, -32768, -14, -14, 24464};
    static const double d1[] = {1e300, 0.1, -2, 2, 9};
    static const double d2[] = {1e10, 0.2, 3, -0.5, 0.5};
    static const double dprod[] = {INFINITY, 0.020000000000000004, -6, -1,
                                   4.5};
    static const double dsum[] = {1e300, 0.30000000000000004, 1, 1.5, 9.5};
    static const double dpow[] = {INFINITY, 0.6309573444801932, -8,
                                  0.7071067811865476, 3};
    static const double i64a[] = {9007199254740992.0, -5, 6};
    static const double i64b[] = {2, 2, -4};
    static const double i64p[] = {18014398509481984.0, -10, -24};

    literal_cpu("sum", MICA_UINT8, MICA_UINT8, 6, u1, u2, usum, "wraps");
    literal_cpu("sub", MICA_UINT8, MICA_UINT8, 6, u1, u2, usub, "wraps");
    literal_cpu("prod", MICA_UINT8, MICA_UINT8, 6, u1, u2, uprod, "wraps");
    literal_cpu("div", MICA_UINT8, MICA_UINT8, 6, u1, u2, udiv,
            "truncates, by zero gives 0");
    literal_cpu("pow", MICA_UINT8, MICA_UINT8, 6, u1, u2, upow, "wraps");
    literal_cpu("greater", MICA_UINT8, MICA_BOOL, 6, u1, u2, ugt, "unsigned");
    literal_cpu("max", MICA_UINT64, MICA_UINT64, 3, big1, big2, bigmax,
            "unsigned above 2^63");
    literal_cpu("less", MICA_UINT64, MICA_BOOL, 3, big1, big2, bigless,
            "unsigned above 2^63");
    literal_cpu("sum", MICA_UINT16, MICA_UINT16, 3, w1, w2, wsum, "wraps");
    literal_cpu("sum", MICA_INT16, MICA_INT16, 5, s1, s2, ssum, "wraps");
    literal_cpu("div", MICA_INT16, MICA_INT16, 5, s1, s2, sdiv, "truncates");
    literal_cpu("floor_div", MICA_INT16, MICA_INT16, 5, s1, s2, sfdiv, "floors");
    literal_cpu("prod", MICA_INT16, MICA_INT16, 5, s1, s2, sprod, "wraps");
    literal_cpu("prod", MICA_INT64, MICA_INT64, 3, i64a, i64b, i64p, "exact");
    literal_cpu("sum", MICA_FLOAT64, MICA_FLOAT64, 5, d1, d2, dsum, "in double");
    literal_cpu("prod", MICA_FLOAT64, MICA_FLOAT64, 5, d1, d2, dprod,
            "in double, overflows to infinity");
    literal_cpu("pow", MICA_FLOAT64, MICA_FLOAT64, 5, d1, d2, dpow, "in double");
    fails_on_cuda("sum uint8 on cuda", OP_SUM, MICA_UINT8);
    fails_on_cuda("sum float64 on cuda", OP_SUM, MICA_FLOAT64);
}

/* The ops on bits (ONNX's BitwiseAnd, Or, Xor and BitShift), on the CPU
 * alone: integers of every width, shifts of unsigned ones, a shift by
 * the width or more giving 0. */
static void bitwise_ops(void)
{
    static const int64_t d3 = 3;
    static const double a32[] = {12, -1, 2147483647, -8};
    static const double b32[] = {10, 255, -1, 3};
    static const double and32[] = {8, 255, 2147483647, 0};
    static const double a8[] = {1, -128, 64, 0};
    static const double b8[] = {2, 1, 64, -1};
    static const double or8[] = {3, -127, 64, -1};
    static const double a16[] = {-1, 4660};
    static const double b16[] = {255, 4660};
    static const double xor16[] = {-256, 0};
    static const double a64[] = {18446744073709549568.0, 5};
    static const double b64[] = {2048, 3};
    static const double xor64[] = {18446744073709547520.0, 6};
    static const double su8a[] = {1, 1, 255, 3};
    static const double su8b[] = {7, 8, 1, 0};
    static const double shl8[] = {128, 0, 254, 3};
    static const double su16a[] = {65535, 256, 1};
    static const double su16b[] = {15, 8, 16};
    static const double shr16[] = {1, 1, 0};
    static const double su64a[] = {1, 1};
    static const double su64b[] = {63, 64};
    static const double shl64[] = {9223372036854775808.0, 0};
    static const double su32a[] = {4294967295.0, 8};
    static const double su32b[] = {31, 3};
    static const double shr32[] = {1, 1};

    literal_cpu("bitwise_and", MICA_INT32, MICA_INT32, 4, a32, b32, and32,
                "two's complement bits");
    literal_cpu("bitwise_or", MICA_INT8, MICA_INT8, 4, a8, b8, or8,
                "two's complement bits");
    literal_cpu("bitwise_xor", MICA_INT16, MICA_INT16, 2, a16, b16, xor16,
                "two's complement bits");
    literal_cpu("bitwise_xor", MICA_UINT64, MICA_UINT64, 2, a64, b64, xor64,
                "above 2^63");
    literal_cpu("shift_left", MICA_UINT8, MICA_UINT8, 4, su8a, su8b, shl8,
                "by 8 gives 0");
    literal_cpu("shift_right", MICA_UINT16, MICA_UINT16, 3, su16a, su16b,
                shr16, "by 16 gives 0");
    literal_cpu("shift_left", MICA_UINT64, MICA_UINT64, 2, su64a, su64b,
                shl64, "by 64 gives 0");
    literal_cpu("shift_right", MICA_UINT32, MICA_UINT32, 2, su32a, su32b,
                shr32, "logical");
    fails("shift_left on int32", "shift_left", MICA_INT32, 1, &d3,
          MICA_INT32, 1, &d3, 2,
          "op 'shift_left' takes uint8, uint16, uint32 or uint64 (on the "
          "CPU) inputs, got int32");
    fails("bitwise_and on float32", "bitwise_and", MICA_FLOAT32, 1, &d3,
          MICA_FLOAT32, 1, &d3, 2,
          "op 'bitwise_and' takes int8, int16, int32, int64, uint8, uint16, "
          "uint32 or uint64 (on the CPU) inputs, got float32");
    fails_on_cuda("bitwise_and int32 on cuda", OP_BITWISE_AND, MICA_INT32);
}

static void floats(void)
{
    static const double a[] = {1, -1, 0, INFINITY, NAN, 2};
    static const double b[] = {0, 0, 0, 1, 1, NAN};
    static const double div[] = {INFINITY, -INFINITY, NAN, INFINITY, NAN, NAN};
    static const double max[] = {1, 0, 0, INFINITY, 1, 2};
    static const double eq[] = {0, 0, 1, 0, 0, 0};

    literal("div", F32, F32, 6, a, b, div, "by zero is IEEE");
    literal("max", F32, F32, 6, a, b, max, "NaN loses");
    literal("equal", F32, BOOL, 6, a, b, eq, "NaN unequal");
}

static void broadcasting(void)
{
    static const double v[] = {1.5, -2, 3, 4.25, -5, 6, 7, -8, 9, 10, 11, 12};
    static const double w[] = {2, -1, 0.5, 4, 3, -2, 1, 0.25};
    static const double iv[] = {-7, 8, 9, -10, 11, 12};
    static const double iw[] = {3, -4};
    static const double bv[] = {1, 0, 1, 1, 0, 0};
    static const double s = 3;
    static const int64_t d23[] = {2, 3}, d13[] = {1, 3}, d21[] = {2, 1};
    static const int64_t d312[] = {3, 1, 2}, d141[] = {1, 4, 1};
    static const int64_t d11[] = {1, 1}, d41[] = {4, 1}, d14[] = {1, 4};
    static const int64_t d213[] = {2, 1, 3}, d121[] = {1, 2, 1};
    static const int64_t r8a[] = {2, 1, 2, 1, 2, 1, 2, 1};
    static const int64_t r8b[] = {1, 2, 1, 2, 1, 2, 1, 2};
    static const int64_t d4a[] = {2, 3, 4, 5}, d4b[] = {1, 3, 1, 5};
    static const int64_t d438[] = {4, 3, 8}, d418[] = {4, 1, 8};
    static const int64_t d616[] = {6, 16}, d61[] = {6, 1};
    static const int64_t d332[] = {3, 32}, d132[] = {1, 32}, d216[] = {2, 16};
    double big[120], small[15];
    int i;

    for (i = 0; i < 120; i++)
        big[i] = (i * 37 % 101) / 8.0 - 6;
    for (i = 0; i < 15; i++)
        small[i] = i - 7.5;
    check("sum", F32, 2, d23, v, d13, w, "[2,3] + [1,3]");
    check("sub", F32, 2, d21, v, d13, w, "[2,1] - [1,3]");
    check("prod", F16, 3, d312, v, d141, w, "[3,1,2] * [1,4,1]");
    check("div", F32, 0, NULL, &s, NULL, v, "scalar / scalar");
    check("pow", F32, 2, d23, v, d11, w, "[2,3] ^ [1,1]");
    check("max", F32, 2, d11, w, d23, v, "[1,1] max [2,3]");
    check("floor_div", I32, 3, d213, iv, d121, iw, "[2,1,3] // [1,2,1]");
    check("greater", F32, 2, d41, v, d14, w, "[4,1] > [1,4]");
    check("less", I8, 2, d41, iv, d14, iv, "[4,1] < [1,4]");
    check("and", BOOL, 2, d21, bv, d13, bv + 2, "[2,1] and [1,3]");
    check("sum", F32, 8, r8a, big, r8b, big + 50, "rank 8 broadcast");
    check("min", F32, 4, d4a, big, d4b, small, "[2,3,4,5] min [1,3,1,5]");
    check("sum", F16, 4, d4b, small, d4a, big, "[1,3,1,5] + [2,3,4,5]");
    /* input 0 broadcast: oneDNN swaps sum and prod, leaves sub */
    check("sum", F32, 4, d4b, small, d4a, big, "[1,3,1,5] + [2,3,4,5]");
    check("prod", F32, 4, d4b, small, d4a, big, "[1,3,1,5] * [2,3,4,5]");
    check("sub", F32, 4, d4b, small, d4a, big, "[1,3,1,5] - [2,3,4,5]");
    check("div", F32, 4, d4a, big, d4b, small, "[2,3,4,5] / [1,3,1,5]");
    /* inner dimensions that are whole vectors: the CUDA vector path */
    check("sub", F32, 3, d438, big, d418, big + 7, "[4,3,8] - [4,1,8]");
    check("div", F16, 2, d616, big, d61, small, "[6,16] / [6,1]");
    check("prod", I8, 2, d332, big, d132, big + 3, "[3,32] * [1,32]");
    check("xor", BOOL, 2, d216, big, d21, small, "[2,16] xor [2,1]");
}

/* Long rows: the vector path with a tail, and scalar broadcast. */
static void long_rows(void)
{
    static double a[1003], b[1003];
    int64_t n = 1003, one = 1;
    int i;

    for (i = 0; i < 1003; i++) {
        a[i] = (i % 97) * 0.25 - 12;
        b[i] = (i % 89) * 0.5 - 21.75;
    }
    check("sum", F32, 1, &n, a, &n, b, "1003 elements");
    check("prod", F16, 1, &n, a, &n, b, "1003 elements");
    check("sub", F32, 1, &n, a, &one, b, "1003 - scalar");
    check("div", F16, 1, &one, a + 5, &n, b, "scalar / 1003");
    check("less", F32, 1, &n, a, &n, b, "1003 elements");
    check("max", I32, 1, &n, a, &n, b, "1003 elements (int32)");
    check("sum", I8, 1, &n, a, &n, b, "1003 elements (int8)");
}

static void empty(void)
{
    static const double v[] = {1, 2, 3};
    static const int64_t d03[] = {0, 3}, d13[] = {1, 3}, d20[] = {2, 0};
    static const int64_t d21[] = {2, 1}, d10[] = {1, 0}, d31[] = {3, 1};
    static const int64_t d0[] = {0}, d1[] = {1};

    check("sum", F32, 2, d03, NULL, d13, v, "[0,3] + [1,3]");
    check("prod", I32, 2, d20, NULL, d21, v, "[2,0] * [2,1]");
    check("equal", BOOL, 2, d10, NULL, d31, v, "[1,0] == [3,1]");
    check("div", F16, 1, d1, v, d0, NULL, "[1] / [0]");
}

static void errors(void)
{
    static const int64_t d23[] = {2, 3}, d3[] = {3}, d24[] = {2, 4};

    fails("rank mismatch", "sum", F32, 2, d23, F32, 1, d3, 2,
          "input 1 has rank 1 but input 0 has rank 2");
    fails("incompatible dims", "sum", F32, 2, d23, F32, 2, d24, 2,
          "dimension 1 of input 0 is 3 and of input 1 is 4");
    fails("type mismatch", "sum", F32, 2, d23, I32, 2, d23, 2,
          "input 1 has type int32 but input 0 has type float32");
    fails("and on float32", "and", F32, 2, d23, F32, 2, d23, 2,
          "op 'and' takes bool inputs, got float32");
    fails("sum on bool", "sum", BOOL, 2, d23, BOOL, 2, d23, 2,
          "op 'sum' takes float32, float16, int8, int32 or (on the CPU) "
          "float64, uint8, uint16, uint32, uint64, int16, int64 inputs, got "
          "bool");
    fails("greater on bool", "greater", BOOL, 1, d3, BOOL, 1, d3, 2,
          "op 'greater' takes float32, float16, int8, int32 or (on the CPU)");
    fails("one input", "sum", F32, 1, d3, F32, 1, d3, 1,
          "ElementWise takes 2 inputs, got 1");
    fails("unknown op", "mod", F32, 1, d3, F32, 1, d3, 2, "is not one");
    fails("missing op", NULL, F32, 1, d3, F32, 1, d3, 2,
          "missing required param 'op'");
}

/*
 * Formats, asked of the instances without a GPU: on the CPU channels
 * last where no input is broadcast (every tensor of the same known dims
 * and format), never formats that differ; on CUDA linear only.
 */
static void formats(void)
{
    static const struct {
        uint32_t dev;
        const char *impl;
    } v[] = {{MICA_DEVICE_CPU, "reference"},
             {MICA_DEVICE_CPU, "onednn"},
             {MICA_DEVICE_CUDA, "cuda"}};
    const uint32_t L = MICA_FORMAT_LINEAR, H = MICA_FORMAT_HWC;
    static const int64_t d[4] = {2, 3, 4, 5}, b[4] = {1, 3, 1, 5};
    size_t k;

    for (k = 0; k < sizeof v / sizeof v[0]; k++) {
        mica_layer_t *l;
        mica_tensor_desc_t io[3];
        int i, same, bcast, mixed, unknown, lin;
        if (!th_has_impl("ElementWise", v[k].dev, v[k].impl)) {
            skip("formats: %s: not in this build", v[k].impl);
            continue;
        }
        if (!(l = th_instance("ElementWise", v[k].dev, v[k].impl,
                              th_f_str(th_fields(), "op", "sum"))))
            bail("%s: no instance: %s", v[k].impl, th_error());
        memset(io, 0, sizeof io);
        for (i = 0; i < 3; i++) {
            io[i].dtype = F32;
            io[i].scale = 1.0f;
            io[i].format = H;
            io[i].dims.nb_dims = 4;
            memcpy(io[i].dims.d, d, sizeof d);
        }
        same = 1;
        for (i = 0; i < 3; i++)
            same &= l->ops->supports_format(l, i, io, 2, 1) != 0;
        memcpy(io[1].dims.d, b, sizeof b);
        bcast = l->ops->supports_format(l, 1, io, 2, 1) != 0;
        memcpy(io[1].dims.d, d, sizeof d);
        io[1].format = L;
        mixed = l->ops->supports_format(l, 1, io, 2, 1) != 0;
        io[1].format = H;
        io[1].dims.d[0] = -1;
        unknown = l->ops->supports_format(l, 1, io, 2, 1) != 0;
        for (i = 0; i < 3; i++)
            io[i].format = L;
        lin = 1;
        for (i = 0; i < 3; i++)
            lin &= l->ops->supports_format(l, i, io, 2, 1) != 0;
        ok(lin && same == (v[k].dev == MICA_DEVICE_CPU) && !bcast &&
               !mixed && !unknown,
           "formats: %s: linear; HWC %s; never with a broadcast, a "
           "runtime dimension or formats that differ", v[k].impl,
           v[k].dev == MICA_DEVICE_CPU ? "for all alike" : "never");
        l->ops->destroy(l);
    }
}

/* oneDNN's ElementWise in NHWC (the network's inputs and output in HWC,
 * no reorder) against the reference. */
static void channels_last(void)
{
    static const int64_t d[4] = {2, 3, 4, 5};
    static const char *const ops[] = {"sum", "prod", "sub", "div", "max"};
    th_tensor_t in[2];
    size_t k;
    int64_t i;

    in[0] = th_tensor(F32, 4, d, NULL);
    in[1] = th_tensor(F32, 4, d, NULL);
    for (i = 0; i < th_volume(&in[0]); i++) {
        th_set(&in[0], i, (double)((i * 7) % 23 - 11) / 4);
        th_set(&in[1], i, (double)((i * 5) % 19 - 9) / 8 + 0.0625);
    }
    th_channels_last_cpu(1);
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        char label[64];
        snprintf(label, sizeof label, "channels last: %s [2,3,4,5]", ops[k]);
        th_check_impl(label, "ElementWise",
                      th_f_str(th_fields(), "op", ops[k]), 2, in, 1,
                      MICA_DEVICE_CPU, "onednn", 1e-6);
    }
    th_channels_last_cpu(0);
    th_free(&in[0]);
    th_free(&in[1]);
}

/* The cases computed here, on the CPU with `pin` (NULL: the default,
 * oneDNN's where built, which hands what it does not compute to the
 * reference). */
static void cases(const char *pin)
{
    pass_pin = pin;
    th_pin(pin, NULL);
    every_op();
    integer_edges();
    wide_types();
    bitwise_ops();
    floats();
    broadcasting();
    long_rows();
    empty();
    th_pin(NULL, NULL);
    pass_pin = NULL;
}

int main(void)
{
    plan_lazy();
    th_context();
    cases(NULL);
    cases("reference");
    formats();
    channels_last();
    errors();
    return exit_status();
}
