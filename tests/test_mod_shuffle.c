/*
 * tests/test_mod_shuffle.c - the Shuffle layer: transposes, reshape with
 * 0 and -1, zero_is_placeholder, both transposes with a reshape between,
 * several element types, empty tensors, and the validation errors.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static double seq[64];

/* Expected transpose of a row-major tensor, by coordinates. */
static void transpose_ref(const double *src, int rank, const int64_t *dims,
                          const int64_t *perm, double *dst, int64_t *odims)
{
    int64_t n = 1, i, c[8], strides[8];
    int k;
    for (k = rank - 1; k >= 0; k--) {
        strides[k] = n;
        n *= dims[k];
    }
    for (k = 0; k < rank; k++)
        odims[k] = dims[perm[k]];
    for (i = 0; i < n; i++) {
        int64_t rest = i, off = 0;
        for (k = rank - 1; k >= 0; k--) { /* output coordinates */
            c[k] = rest % odims[k];
            rest /= odims[k];
        }
        for (k = 0; k < rank; k++) /* output axis k is input axis perm[k] */
            off += c[k] * strides[perm[k]];
        dst[i] = src[off];
    }
}

static th_fields_t *perm_f(th_fields_t *f, const char *name, int n,
                           const int64_t *p)
{
    return th_f_ints(f, name, n, p);
}

int main(void)
{
    int i;

    for (i = 0; i < LEN(seq); i++)
        seq[i] = i + 1;
    plan_lazy();
    th_context();

    {
        static const int64_t p[] = {1, 0};
        static const double want[] = {1, 4, 2, 5, 3, 6};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 2, 3, 2);
        th_check("first_transpose [1,0] of [2,3]", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {3, 2};
        th_tensor_t x = th_t(MICA_INT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_INT32, seq, 2, 3, 2);
        th_check("reshape int32 [2,3] to [3,2]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {0, -1};
        th_tensor_t x = th_t(MICA_FLOAT16, seq, 3, 2, 3, 4);
        th_tensor_t e = th_t(MICA_FLOAT16, seq, 2, 2, 12);
        th_check("reshape float16 [2,3,4] with [0,-1]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {-1, 0, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 3, 2, 3, 4);
        th_tensor_t e = th_t(MICA_FLOAT32, seq, 3, 4, 3, 2);
        th_check("reshape [2,3,4] with [-1,0,2]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 3, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {0, 5};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 5);
        th_check("zero_is_placeholder false: [0,3] to [0,5]", "Shuffle",
                 th_f_bool(th_f_ints(th_fields(), "reshape", 2, r),
                           "zero_is_placeholder", 0),
                 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {-1, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 3, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_check("-1 with an empty input: [2,0,3] to [-1,3]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        /* [2,3,4] -> first [2,0,1] -> [4,2,3] -> reshape [4,6]
         * -> second [1,0] -> [6,4] */
        static const int64_t p1[] = {2, 0, 1}, r[] = {4, 6}, p2[] = {1, 0};
        static const int64_t d[] = {2, 3, 4}, d2[] = {4, 6};
        double t1[24], t2[24];
        int64_t o1[3], o2[2];
        th_tensor_t x, e;
        transpose_ref(seq, 3, d, p1, t1, o1);
        transpose_ref(t1, 2, d2, p2, t2, o2);
        x = th_t(MICA_FLOAT32, seq, 3, 2, 3, 4);
        e = th_t(MICA_FLOAT32, t2, 2, 6, 4);
        th_check("first_transpose, reshape, second_transpose", "Shuffle",
                 perm_f(perm_f(th_f_ints(th_fields(), "reshape", 2, r),
                               "first_transpose", 3, p1),
                        "second_transpose", 2, p2),
                 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t p2[] = {1, 2, 0}, d[] = {2, 3, 4};
        double t[24];
        int64_t o[3];
        th_tensor_t x, e;
        transpose_ref(seq, 3, d, p2, t, o);
        x = th_t(MICA_INT8, seq, 3, 2, 3, 4);
        e = th_t(MICA_INT8, t, 3, 3, 4, 2);
        th_check("second_transpose only, int8", "Shuffle",
                 perm_f(th_fields(), "second_transpose", 3, p2), 1, &x, 1,
                 &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t p1[] = {3, 1, 0, 2}, d[] = {2, 3, 2, 4};
        double t[48];
        int64_t o[4];
        th_tensor_t x, e;
        transpose_ref(seq, 4, d, p1, t, o);
        x = th_t(MICA_FLOAT32, seq, 4, 2, 3, 2, 4);
        e = th_t(MICA_FLOAT32, t, 4, 4, 3, 2, 2);
        th_check("rank-4 transpose [3,1,0,2]", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 4, p1), 1, &x, 1,
                 &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double b[] = {1, 0, 0, 1, 1, 0};
        static const double bt[] = {1, 1, 0, 1, 0, 0};
        static const int64_t p[] = {1, 0};
        th_tensor_t x = th_t(MICA_BOOL, b, 2, 2, 3);
        th_tensor_t e = th_t(MICA_BOOL, bt, 2, 3, 2);
        th_check("bool transpose", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {1, 1};
        static const double v[] = {42};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 0);
        th_tensor_t e = th_t(MICA_FLOAT32, v, 2, 1, 1);
        th_check("scalar to [1,1]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double v[] = {42};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 2, 1, 1);
        th_tensor_t e = th_t(MICA_FLOAT32, v, 0);
        th_check("[1,1] to a scalar (empty reshape)", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 0, NULL), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check("no params: a copy", "Shuffle", th_fields(), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {3, -1};
        th_tensor_t x[2], e = th_t(MICA_FLOAT32, seq, 2, 3, 2);
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_none();
        th_check("second input left out", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 2, x, 1, &e, 0);
        th_free(&x[0]);
        th_free(&e);
    }

    /* errors */
    {
        static const int64_t p[] = {1, 0};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 3, 2, 3, 4);
        th_check_error("first_transpose of the wrong length", "Shuffle",
                       perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1,
                       "has 2 entries but input 0 has rank 3");
        th_free(&x);
    }
    {
        static const int64_t p[] = {0, 0};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("not a permutation", "Shuffle",
                       perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1,
                       "not a permutation");
        th_free(&x);
    }
    {
        static const int64_t p[] = {0, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("permutation out of range", "Shuffle",
                       perm_f(th_fields(), "second_transpose", 2, p), 1, &x,
                       1, "not a permutation");
        th_free(&x);
    }
    {
        static const int64_t p[] = {1, 0};
        static const int64_t r[] = {6};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("second_transpose longer than the reshape", "Shuffle",
                       perm_f(th_f_ints(th_fields(), "reshape", 1, r),
                              "second_transpose", 2, p),
                       1, &x, 1, "reshaped tensor has rank 1");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-1, -1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("two -1", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "more than one -1");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-2, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("reshape below -1", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "-2 is not a dimension");
        th_free(&x);
    }
    {
        static const int64_t r[] = {4, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("volumes differ", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "has volume 8 but input 0 has volume 6");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-1, 4};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("-1 not a whole number", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "not a multiple of 4");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-1, 0};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 2, 0);
        th_check_error("-1 with other dims of volume 0", "Shuffle",
                       th_f_bool(th_f_ints(th_fields(), "reshape", 2, r),
                                 "zero_is_placeholder", 0),
                       1, &x, 1, "cannot be inferred");
        th_free(&x);
    }
    {
        static const int64_t r[] = {2, 0, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 6);
        th_check_error("0 placeholder beyond the input's rank", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 3, r), 1, &x, 1,
                       "entry 1 is 0");
        th_free(&x);
    }
    {
        static const double dims[] = {3, 2};
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_t(MICA_INT32, dims, 1, 2);
        th_check_error("reshape dims as a second input", "Shuffle",
                       th_fields(), 2, x, 1, "not supported yet");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    return exit_status();
}
