/*
 * tests/test_mod_matmul.c - the MatrixMultiply layer: none, transpose and
 * vector ops on either side, batch broadcasting (whole and mixed), float32
 * and float16, an empty inner dimension, empty batches, and errors; the
 * reference against values computed here, oneDNN and cuBLAS against the
 * reference.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { NONE = 0, TRANS = 1, VEC = 2 };
static const char *const opname[] = {"none", "transpose", "vector"};

/* Element (m, k) of op(X) for the matrix at batch offset `off`. */
static double at(const th_tensor_t *x, int op, int64_t off, int64_t row,
                 int64_t col)
{
    const mica_dims_t *d = &x->dims;
    int r = d->nb_dims;
    if (op == VEC) /* a vector: its one index is the inner one */
        return th_get(x, off + (row > col ? row : col));
    if (op == TRANS)
        return th_get(x, off + col * d->d[r - 1] + row);
    return th_get(x, off + row * d->d[r - 1] + col);
}

/* The expected product, by its definition, in double. */
static th_tensor_t mm_ref(const th_tensor_t *a, int opa, const th_tensor_t *b,
                          int opb)
{
    int ra = a->dims.nb_dims, rb = b->dims.nb_dims;
    int nb = ra - (opa == VEC ? 1 : 2), i, n = 0;
    int64_t M = opa == VEC ? 1 : opa == NONE ? a->dims.d[ra - 2] : a->dims.d[ra - 1];
    int64_t K = opa == TRANS ? a->dims.d[ra - 2] : a->dims.d[ra - 1];
    int64_t N = opb == VEC ? 1 : opb == NONE ? b->dims.d[rb - 1] : b->dims.d[rb - 2];
    int64_t od[MICA_MAX_DIMS] = {0}, batch = 1, bi, m, nn, k;
    int64_t amat = (opa == VEC ? 1 : M) * K, bmat = K * (opb == VEC ? 1 : N);
    th_tensor_t c;

    for (i = 0; i < nb; i++) {
        od[n] = a->dims.d[i] == 1 ? b->dims.d[i] : a->dims.d[i];
        batch *= od[n++];
    }
    if (opa != VEC)
        od[n++] = M;
    if (opb != VEC)
        od[n++] = N;
    c = th_tensor(a->dtype, n, od, NULL);
    for (bi = 0; bi < batch; bi++) {
        int64_t rest = bi, ai = 0, bj = 0, sa = 1, sb = 1;
        for (i = nb - 1; i >= 0; i--) {
            int64_t ci = rest % od[i];
            rest /= od[i];
            ai += (a->dims.d[i] == 1 ? 0 : ci) * sa;
            bj += (b->dims.d[i] == 1 ? 0 : ci) * sb;
            sa *= a->dims.d[i];
            sb *= b->dims.d[i];
        }
        for (m = 0; m < M; m++)
            for (nn = 0; nn < N; nn++) {
                double acc = 0;
                for (k = 0; k < K; k++)
                    acc += at(a, opa, ai * amat, m, k) *
                           at(b, opb == VEC ? VEC : opb == TRANS ? NONE : TRANS,
                              bj * bmat, nn, k);
                th_set(&c, (bi * M + m) * N + nn, acc);
            }
    }
    return c;
}

/* A tensor of `dtype` with small exact values (also in float16). */
static th_tensor_t filled(mica_dtype_t dtype, int seed, int nb_dims, ...)
{
    int64_t d[MICA_MAX_DIMS];
    th_tensor_t t;
    va_list ap;
    int64_t i;
    int k;
    va_start(ap, nb_dims);
    for (k = 0; k < nb_dims; k++)
        d[k] = va_arg(ap, int);
    va_end(ap);
    t = th_tensor(dtype, nb_dims, d, NULL);
    for (i = 0; i < th_volume(&t); i++)
        th_set(&t, i, ((i * 7 + seed * 3) % 11 - 5) * 0.25);
    return t;
}

static th_fields_t *mf(int opa, int opb)
{
    th_fields_t *f = th_fields();
    if (opa >= 0)
        th_f_str(f, "op_a", opname[opa]);
    if (opb >= 0)
        th_f_str(f, "op_b", opname[opb]);
    return f;
}

/* Check op_a(a) op_b(b) against mm_ref; frees a and b. */
static void check(const char *label, th_tensor_t a, int opa, th_tensor_t b,
                  int opb, double tol)
{
    th_tensor_t in[2], e = mm_ref(&a, opa, &b, opb);
    in[0] = a;
    in[1] = b;
    th_pin("reference", NULL);
    th_check(label, "MatrixMultiply", mf(opa, opb), 2, in, 1, &e, tol);
    th_pin(NULL, NULL);
    th_check_impl(label, "MatrixMultiply", mf(opa, opb), 2, in, 1,
                  MICA_DEVICE_CPU, "onednn", tol);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&e);
}

int main(void)
{
    plan_lazy();
    th_context();

    {
        /* by hand: [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] */
        static const double a[] = {1, 2, 3, 4, 5, 6};
        static const double b[] = {1, 0, 0, 1, 1, 1};
        static const double want[] = {4, 5, 10, 11};
        th_tensor_t in[2], e;
        in[0] = th_t(MICA_FLOAT32, a, 2, 2, 3);
        in[1] = th_t(MICA_FLOAT32, b, 2, 3, 2);
        e = th_t(MICA_FLOAT32, want, 2, 2, 2);
        th_check("[2,3] x [3,2] by hand (default ops)", "MatrixMultiply",
                 mf(-1, -1), 2, in, 1, &e, 1e-5);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&e);
    }
    check("none x none [3,4]x[4,5]", filled(MICA_FLOAT32, 1, 2, 3, 4), NONE,
          filled(MICA_FLOAT32, 2, 2, 4, 5), NONE, 1e-5);
    check("transpose x none", filled(MICA_FLOAT32, 1, 2, 4, 3), TRANS,
          filled(MICA_FLOAT32, 2, 2, 4, 5), NONE, 1e-5);
    check("none x transpose", filled(MICA_FLOAT32, 1, 2, 3, 4), NONE,
          filled(MICA_FLOAT32, 2, 2, 5, 4), TRANS, 1e-5);
    check("transpose x transpose", filled(MICA_FLOAT32, 1, 2, 4, 3), TRANS,
          filled(MICA_FLOAT32, 2, 2, 5, 4), TRANS, 1e-5);
    check("vector x none: [4] x [4,5] -> [5]", filled(MICA_FLOAT32, 1, 1, 4),
          VEC, filled(MICA_FLOAT32, 2, 2, 4, 5), NONE, 1e-5);
    check("none x vector: [3,4] x [4] -> [3]",
          filled(MICA_FLOAT32, 1, 2, 3, 4), NONE,
          filled(MICA_FLOAT32, 2, 1, 4), VEC, 1e-5);
    check("transpose x vector", filled(MICA_FLOAT32, 1, 2, 4, 3), TRANS,
          filled(MICA_FLOAT32, 2, 1, 4), VEC, 1e-5);
    check("vector x transpose", filled(MICA_FLOAT32, 1, 1, 4), VEC,
          filled(MICA_FLOAT32, 2, 2, 5, 4), TRANS, 1e-5);
    check("vector x vector -> scalar", filled(MICA_FLOAT32, 1, 1, 6), VEC,
          filled(MICA_FLOAT32, 2, 1, 6), VEC, 1e-5);
    check("batched vectors [2,4] x [2,4] -> [2]",
          filled(MICA_FLOAT32, 1, 2, 2, 4), VEC,
          filled(MICA_FLOAT32, 2, 2, 2, 4), VEC, 1e-5);
    check("batch [3,2,4] x [3,4,5]", filled(MICA_FLOAT32, 1, 3, 3, 2, 4),
          NONE, filled(MICA_FLOAT32, 2, 3, 3, 4, 5), NONE, 1e-5);
    check("batch broadcast of B: [3,2,4] x [1,4,5]",
          filled(MICA_FLOAT32, 1, 3, 3, 2, 4), NONE,
          filled(MICA_FLOAT32, 2, 3, 1, 4, 5), NONE, 1e-5);
    check("batch broadcast of A: [1,2,4] x [3,5,4]^T",
          filled(MICA_FLOAT32, 1, 3, 1, 2, 4), NONE,
          filled(MICA_FLOAT32, 2, 3, 3, 5, 4), TRANS, 1e-5);
    check("mixed broadcast: [2,1,2,3] x [1,3,3,2]",
          filled(MICA_FLOAT32, 1, 4, 2, 1, 2, 3), NONE,
          filled(MICA_FLOAT32, 2, 4, 1, 3, 3, 2), NONE, 1e-5);
    check("mixed broadcast: [1,3,2,3] x [2,1,3,2]",
          filled(MICA_FLOAT32, 1, 4, 1, 3, 2, 3), NONE,
          filled(MICA_FLOAT32, 2, 4, 2, 1, 3, 2), NONE, 1e-5);
    check("mixed broadcast with vectors: [2,1,3] x [1,4,3]",
          filled(MICA_FLOAT32, 1, 3, 2, 1, 3), VEC,
          filled(MICA_FLOAT32, 2, 3, 1, 4, 3), VEC, 1e-5);
    check("float16 [3,4] x [4,5]", filled(MICA_FLOAT16, 1, 2, 3, 4), NONE,
          filled(MICA_FLOAT16, 2, 2, 4, 5), NONE, 1e-3);
    check("float16 batch, transposes", filled(MICA_FLOAT16, 1, 3, 2, 4, 3),
          TRANS, filled(MICA_FLOAT16, 2, 3, 2, 5, 4), TRANS, 1e-3);
    check("float16 vector x none", filled(MICA_FLOAT16, 1, 1, 4), VEC,
          filled(MICA_FLOAT16, 2, 2, 4, 3), NONE, 1e-3);
    check("larger [33,70] x [70,65]", filled(MICA_FLOAT32, 1, 2, 33, 70),
          NONE, filled(MICA_FLOAT32, 2, 2, 70, 65), NONE, 1e-5);
    check("empty inner dimension: [2,0] x [0,3] gives zeros",
          filled(MICA_FLOAT32, 1, 2, 2, 0), NONE,
          filled(MICA_FLOAT32, 2, 2, 0, 3), NONE, 0);
    check("empty batch: [0,2,3] x [0,3,4]",
          filled(MICA_FLOAT32, 1, 3, 0, 2, 3), NONE,
          filled(MICA_FLOAT32, 2, 3, 0, 3, 4), NONE, 0);
    check("empty batch broadcast: [0,2,3] x [1,3,4]",
          filled(MICA_FLOAT32, 1, 3, 0, 2, 3), NONE,
          filled(MICA_FLOAT32, 2, 3, 1, 3, 4), NONE, 0);

    /* errors */
    {
        th_tensor_t in[2];
        in[0] = filled(MICA_FLOAT32, 1, 1, 4);
        in[1] = filled(MICA_FLOAT32, 2, 2, 4, 5);
        th_check_error("rank 1 with op none", "MatrixMultiply", mf(-1, -1),
                       2, in, 1, "input 0 has rank 1 but op_a 'none' needs "
                       "rank >= 2");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    {
        th_tensor_t in[2];
        in[0] = filled(MICA_FLOAT32, 1, 2, 3, 4);
        in[1] = filled(MICA_FLOAT32, 2, 2, 5, 6);
        th_check_error("inner dimensions differ", "MatrixMultiply",
                       mf(-1, -1), 2, in, 1,
                       "inner dimensions differ: input 0 has 4");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    {
        th_tensor_t in[2];
        in[0] = filled(MICA_FLOAT32, 1, 3, 2, 3, 4);
        in[1] = filled(MICA_FLOAT32, 2, 3, 3, 4, 5);
        th_check_error("batch dimensions differ", "MatrixMultiply",
                       mf(-1, -1), 2, in, 1,
                       "batch dimension 0 differs: 2 in input 0, 3 in input 1");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    {
        th_tensor_t in[2];
        in[0] = filled(MICA_FLOAT32, 1, 3, 2, 3, 4);
        in[1] = filled(MICA_FLOAT32, 2, 2, 4, 5);
        th_check_error("numbers of batch dimensions differ", "MatrixMultiply",
                       mf(-1, -1), 2, in, 1,
                       "input 0 has 1 batch dimensions");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    {
        th_tensor_t in[2];
        in[0] = filled(MICA_INT32, 1, 2, 3, 4);
        in[1] = filled(MICA_INT32, 2, 2, 4, 5);
        th_check_error("int32 inputs", "MatrixMultiply", mf(-1, -1), 2, in,
                       1, "of type int32 is not supported");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    {
        th_tensor_t in[2];
        in[0] = filled(MICA_FLOAT32, 1, 2, 3, 4);
        in[1] = filled(MICA_FLOAT16, 2, 2, 4, 5);
        th_check_error("mixed float32 and float16", "MatrixMultiply",
                       mf(-1, -1), 2, in, 1,
                       "input 1 ('in1') of type float16 is not supported");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    {
        th_tensor_t in[1];
        in[0] = filled(MICA_FLOAT32, 1, 2, 3, 4);
        th_check_error("one input", "MatrixMultiply", mf(-1, -1), 1, in, 1,
                       "takes 2 inputs, got 1");
        th_free(&in[0]);
    }
    return exit_status();
}
