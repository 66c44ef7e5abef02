/*
 * tests/test_mod_select.c - the Select layer: full-size inputs, every
 * broadcasting pattern of cond/then/else, 0-D inputs, every element type,
 * a large case, empty tensors (1 against 0), int32 shape tensors, and
 * errors.  Expected values come from an index loop over broadcast
 * coordinates.
 */
#include <config.h>

#include <stdio.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static double tval(mica_dtype_t t, int which, int64_t i)
{
    if (t == MICA_BOOL)
        return (double)((i + which) % 2);
    if (t == MICA_INT8)
        return (double)((which ? -1 : 1) * (int64_t)(i % 100));
    if (t == MICA_FLOAT16)
        return (which ? -0.5 : 0.25) * (double)(i % 512);
    return (which ? -1000.0 : 1000.0) - (double)i;
}

/* Offset of output index i in a tensor of dims d broadcast to od. */
static int64_t bcast(int64_t i, int r, const int64_t *od, const int64_t *d)
{
    int64_t off = 0, stride = 1;
    int k;
    for (k = r - 1; k >= 0; k--) {
        int64_t c = i % od[k];
        i /= od[k];
        if (d[k] != 1)
            off += c * stride;
        stride *= d[k];
    }
    return off;
}

/* Select with cond/then/else dims dc/dt/de (rank r), then/else of type t. */
static void check_select(const char *label, mica_dtype_t t, int r,
                         const int64_t *dc, const int64_t *dt,
                         const int64_t *de)
{
    th_tensor_t in[3], e;
    int64_t od[MICA_MAX_DIMS], i;
    int k;

    for (k = 0; k < r; k++) {
        od[k] = dc[k] != 1 ? dc[k] : dt[k] != 1 ? dt[k] : de[k];
    }
    in[0] = th_tensor(MICA_BOOL, r, dc, NULL);
    in[1] = th_tensor(t, r, dt, NULL);
    in[2] = th_tensor(t, r, de, NULL);
    for (i = 0; i < th_volume(&in[0]); i++)
        th_set(&in[0], i, (double)((i * 7 + 3) % 5 < 2));
    for (i = 0; i < th_volume(&in[1]); i++)
        th_set(&in[1], i, tval(t, 0, i));
    for (i = 0; i < th_volume(&in[2]); i++)
        th_set(&in[2], i, tval(t, 1, i));
    e = th_tensor(t, r, od, NULL);
    for (i = 0; i < th_volume(&e); i++) {
        int c = th_get(&in[0], bcast(i, r, od, dc)) != 0;
        th_set(&e, i, c ? th_get(&in[1], bcast(i, r, od, dt))
                        : th_get(&in[2], bcast(i, r, od, de)));
    }
    th_check(label, "Select", NULL, 3, in, 1, &e, 0);
    for (k = 0; k < 3; k++)
        th_free(&in[k]);
    th_free(&e);
}

int main(void)
{
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16,
                                         MICA_INT8, MICA_INT32, MICA_BOOL,
                                         MICA_INT64};
    static const char *const tnames[] = {"float32", "float16", "int8",
                                         "int32", "bool", "int64"};
    char label[160];
    int i;

    plan_lazy();
    th_context();

    {
        /* TensorRT's example: else broadcast along axis 0 */
        static const double c[] = {1, 1, 0, 0, 1, 0, 1, 0, 0, 1};
        static const double a[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        static const double b[] = {0, 0, 0, 0, 0};
        static const double w[] = {1, 1, 0, 0, 1, 0, 1, 0, 0, 1};
        th_tensor_t in[3], e;
        in[0] = th_t(MICA_BOOL, c, 2, 2, 5);
        in[1] = th_t(MICA_FLOAT32, a, 2, 2, 5);
        in[2] = th_t(MICA_FLOAT32, b, 2, 1, 5);
        e = th_t(MICA_FLOAT32, w, 2, 2, 5);
        th_check("[2,5] cond, [2,5] then, [1,5] else", "Select", NULL, 3, in,
                 1, &e, 0);
        for (i = 0; i < 3; i++)
            th_free(&in[i]);
        th_free(&e);
    }
    for (i = 0; i < LEN(types); i++) {
        static const int64_t f[] = {3, 4}, c1[] = {3, 1}, r1[] = {1, 4};
        static const int64_t one[] = {1, 1};
        snprintf(label, sizeof label, "%s: all [3,4]", tnames[i]);
        check_select(label, types[i], 2, f, f, f);
        snprintf(label, sizeof label, "%s: cond [3,1], then [1,4], else "
                 "[3,4]", tnames[i]);
        check_select(label, types[i], 2, c1, r1, f);
        snprintf(label, sizeof label, "%s: cond [1,4], then [3,4], else "
                 "[1,1]", tnames[i]);
        check_select(label, types[i], 2, r1, f, one);
        snprintf(label, sizeof label, "%s: cond [3,4], then [1,1], else "
                 "[3,1]", tnames[i]);
        check_select(label, types[i], 2, f, one, c1);
    }
    {
        static const int64_t c[] = {2, 1, 4}, a[] = {1, 3, 1},
                             b[] = {2, 3, 4};
        check_select("rank 3, all three broadcast differently",
                     MICA_FLOAT32, 3, c, a, b);
        check_select("0-D inputs", MICA_INT32, 0, NULL, NULL, NULL);
    }
    {
        static const int64_t big[] = {37, 129}, c[] = {37, 1};
        check_select("large [37,129], cond broadcast", MICA_FLOAT32, 2, c,
                     big, big);
        check_select("large [37,129], int8", MICA_INT8, 2, big, big, c);
    }
    {
        /* empty: 1 against 0 gives 0 */
        static const int64_t z[] = {0, 3}, o[] = {1, 3}, zz[] = {0, 1};
        check_select("cond [0,3], then/else [1,3]: empty", MICA_FLOAT32, 2,
                     z, o, o);
        check_select("then [0,1], cond [1,3]: empty [0,3]", MICA_INT32, 2, o,
                     zz, o);
    }
    {
        /* int32 shape tensors as then/else */
        static const double c[] = {1, 0, 1};
        static const double a[] = {2, 3, 4};
        static const double b[] = {7, 8, 9};
        static const double w[] = {2, 8, 4};
        th_tensor_t in[3], e;
        in[0] = th_t(MICA_BOOL, c, 1, 3);
        in[1] = th_shape(th_t(MICA_INT32, a, 1, 3));
        in[2] = th_shape(th_t(MICA_INT32, b, 1, 3));
        e = th_t(MICA_INT32, w, 1, 3);
        th_check("int32 shape tensors as then and else", "Select", NULL, 3,
                 in, 1, &e, 0);
        for (i = 0; i < 3; i++)
            th_free(&in[i]);
        th_free(&e);
    }
    {
        th_tensor_t in[3];
        in[0] = th_t(MICA_FLOAT32, NULL, 1, 3);
        in[1] = th_t(MICA_FLOAT32, NULL, 1, 3);
        in[2] = th_t(MICA_FLOAT32, NULL, 1, 3);
        th_check_error("cond not bool", "Select", NULL, 3, in, 1,
                       "input 0 (cond) has type float32");
        th_free(&in[0]);
        in[0] = th_t(MICA_BOOL, NULL, 1, 3);
        th_free(&in[2]);
        in[2] = th_t(MICA_INT32, NULL, 1, 3);
        th_check_error("then and else types differ", "Select", NULL, 3, in,
                       1, "input 2 (else) has type int32");
        th_free(&in[2]);
        in[2] = th_t(MICA_FLOAT32, NULL, 2, 1, 3);
        th_check_error("ranks differ", "Select", NULL, 3, in, 1,
                       "input 2 (else) has rank 2");
        th_free(&in[2]);
        in[2] = th_t(MICA_FLOAT32, NULL, 1, 4);
        th_check_error("lengths that do not broadcast", "Select", NULL, 3,
                       in, 1, "must be equal or one of them 1");
        th_check_error("two inputs", "Select", NULL, 2, in, 1,
                       "takes 3 inputs");
        for (i = 0; i < 3; i++)
            th_free(&in[i]);
    }
    return exit_status();
}
