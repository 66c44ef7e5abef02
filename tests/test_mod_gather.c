/*
 * tests/test_mod_gather.c - the Gather layer: modes default (every axis,
 * 0-D to 2-D indices, num_elementwise_dims 1 with broadcasting), element
 * and nd (with and without elementwise dims), negative and invalid
 * indices (zeros), every element type, empty tensors, the errors, and the
 * values of a shape tensor gathered at build time.
 *
 * Expected values come from ref_gather(), written from TensorRT's
 * description by output coordinates, independently of the module.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum { DEFAULT, ND, ELEMENT };
static const char *const modes[] = {"default", "nd", "element"};

static double seq[512];

/* Row-major offset of coordinates c in dims d (rank r). */
static int64_t offset(const int64_t *c, const mica_dims_t *d)
{
    int64_t off = 0;
    int a;
    for (a = 0; a < d->nb_dims; a++)
        off = off * d->d[a] + c[a];
    return off;
}

/* An index as TensorRT reads it: negative from the end; -1 if invalid. */
static int64_t fix(double v, int64_t d)
{
    int64_t k = (int64_t)v;
    if (k < 0)
        k += d;
    return k >= 0 && k < d ? k : -1;
}

/*
 * The expected output of Gather on data (values dv) and indices, with
 * output dims od given by the caller (the shape rules are checked by the
 * comparison with the module's output).
 */
static th_tensor_t ref_gather(const th_tensor_t *data,
                              const th_tensor_t *idx, int mode, int axis,
                              int e, int nod, const int64_t *od)
{
    static double buf[4096];
    const mica_dims_t *dd = &data->dims, *id = &idx->dims;
    int64_t n = 1, i, c[8], dc[8], ic[8], k;
    int r = dd->nb_dims, q = id->nb_dims, a, j, bad;

    for (a = 0; a < nod; a++)
        n *= od[a];
    if (n > LEN(buf))
        bail("ref_gather: too large");
    for (i = 0; i < n; i++) {
        int64_t rest = i;
        for (a = nod - 1; a >= 0; a--) {
            c[a] = rest % od[a];
            rest /= od[a];
        }
        bad = 0;
        if (mode == ELEMENT) {
            for (a = 0; a < r; a++)
                dc[a] = c[a];
            k = fix(th_get(idx, offset(c, id)), dd->d[axis]);
            bad = k < 0;
            dc[axis] = k;
        } else if (mode == ND) {
            int kk = (int)id->d[q - 1];
            for (a = 0; a < q - 1; a++)
                ic[a] = c[a];
            j = 0;
            if (e)
                dc[j++] = c[0];
            for (a = 0; a < kk; a++, j++) {
                ic[q - 1] = a;
                k = fix(th_get(idx, offset(ic, id)), dd->d[j]);
                if (k < 0)
                    bad = 1;
                dc[j] = k;
            }
            for (a = q - 1; j < r; a++, j++)
                dc[j] = c[a];
        } else {
            /* out = [b] + data[e:axis] + idx[e:] + data[axis+1:] */
            j = 0;
            if (e) {
                dc[0] = dd->d[0] == 1 ? 0 : c[0];
                ic[0] = id->d[0] == 1 ? 0 : c[0];
                j = 1;
            }
            for (a = e; a < axis; a++)
                dc[a] = c[j++];
            for (a = e; a < q; a++)
                ic[a] = c[j++];
            k = fix(th_get(idx, offset(ic, id)), dd->d[axis]);
            bad = k < 0;
            dc[axis] = k;
            for (a = axis + 1; a < r; a++)
                dc[a] = c[j++];
        }
        buf[i] = bad ? 0 : th_get(data, offset(dc, dd));
    }
    return th_tensor(data->dtype, nod, od, buf);
}

static th_fields_t *gather_f(int mode, int axis, int e)
{
    return th_f_int(th_f_int(th_f_str(th_fields(), "mode", modes[mode]),
                             "axis", axis),
                    "num_elementwise_dims", e);
}

/* One case: data of type t (dims dd, values seq), indices (dims id,
 * values iv), expected output dims od. */
static void check(const char *label, mica_dtype_t t, int r,
                  const int64_t *dd, int q, const int64_t *id,
                  const double *iv, int mode, int axis, int e, int nod,
                  const int64_t *od)
{
    th_tensor_t in[2], want;
    in[0] = th_tensor(t, r, dd, seq);
    in[1] = th_tensor(MICA_INT32, q, id, iv);
    want = ref_gather(&in[0], &in[1], mode, axis, e, nod, od);
    th_check(label, "Gather", gather_f(mode, axis, e), 2, in, 1, &want, 0);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want);
}

static void check_error(const char *label, mica_dtype_t it, int r,
                        const int64_t *dd, int q, const int64_t *id,
                        const double *iv, int mode, int axis, int e,
                        const char *needle)
{
    th_tensor_t in[2];
    in[0] = th_tensor(MICA_FLOAT32, r, dd, seq);
    in[1] = th_tensor(it, q, id, iv);
    th_check_error(label, "Gather", gather_f(mode, axis, e), 2, in, 1,
                   needle);
    th_free(&in[0]);
    th_free(&in[1]);
}

/* ---- a network: Gather's output_values -------------------------------- */

static mica_status_t add_layer(mica_network_t *net, const char *type,
                               int nin, const char **ins, const char *out,
                               th_fields_t *f)
{
    mica_layer_spec_t s;
    mica_status_t st;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.name = out;
    s.type = type;
    s.nb_inputs = nin;
    s.inputs = ins;
    s.nb_outputs = 1;
    s.outputs = &out;
    s.fields = th_fields_view(f);
    st = mica_network_add_layer(net, &s);
    th_fields_free(f);
    return st;
}

/*
 * Shape input s (int32 [4]); Constant k = [2, 0, -1, 7]; Gather g = s[k]
 * (the 7 is invalid: 0); Slice b of y (float32 [6, 6, 6, 1]) to size g.
 * b's shape must be [s[2], s[0], s[3], 0]... except that a size of 0 is
 * fine: checks the shape text, runs with sv, returns b's dims.
 */
static mica_status_t chain(const int32_t *sv, char *shape, size_t slen,
                           mica_dims_t *bdims, char *msg, size_t len)
{
    static const int32_t lo[4] = {1, 1, 1, 1}, hi[4] = {6, 6, 6, 6};
    static const double kv[] = {2, 0, -1, 7};
    static const int64_t z4[] = {0, 0, 0, 0}, k4[] = {4};
    static float yv[216];
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    mica_dims_t d4 = {1, 0, {4}}, dy = {4, 0, {6, 6, 6, 1}};
    mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_tensor_desc_t desc;
    const void *data;
    const char *ig[2] = {"s", "k"}, *ib[3] = {"y", NULL, "g"};
    th_tensor_t kt = th_t(MICA_INT32, kv, 1, 4);
    int32_t p;
    mica_status_t st;

    msg[0] = shape[0] = '\0';
    if ((st = mica_network_create(ctx, &net)) != MICA_OK ||
        (st = mica_network_add_shape_input(net, "s", &d4, NULL)) != MICA_OK ||
        (st = mica_network_add_input(net, "y", MICA_FLOAT32, &dy, NULL)) !=
            MICA_OK ||
        (st = mica_network_add_profile(net, &p)) != MICA_OK ||
        (st = mica_network_set_profile_values(net, p, "s", 4, lo, lo, hi,
                                              NULL)) != MICA_OK ||
        (st = add_layer(net, "Constant", 0, NULL, "k",
                        th_f_ints(th_f_weights(th_fields(), "weights", &kt),
                                  "shape", 1, k4))) != MICA_OK ||
        (st = add_layer(net, "Gather", 2, ig, "g", gather_f(DEFAULT, 0, 0))) !=
            MICA_OK ||
        (st = add_layer(net, "Slice", 3, ib, "b",
                        th_f_str(th_f_ints(th_fields(), "start", 4, z4),
                                 "mode", "clamp"))) != MICA_OK ||
        (st = mica_network_mark_output(net, "b", NULL)) != MICA_OK ||
        (st = mica_engine_build(net, NULL, &e)) != MICA_OK)
        goto done;
    info.struct_size = sizeof info;
    if ((st = mica_engine_tensor(e, mica_engine_find_tensor(e, "b"),
                                 &info)) != MICA_OK)
        goto done;
    snprintf(shape, slen, "%s", info.shape);
    if ((st = mica_exec_create(e, &x)) != MICA_OK ||
        (st = mica_exec_set_input(x, "s", &d4, sv)) != MICA_OK ||
        (st = mica_exec_set_input(x, "y", &dy, yv)) != MICA_OK ||
        (st = mica_exec_run(x)) != MICA_OK ||
        (st = mica_exec_get_output(x, "b", &desc, &data)) != MICA_OK)
        goto done;
    *bdims = desc.dims;
done:
    if (st != MICA_OK)
        snprintf(msg, len, "%s", mica_context_error(ctx));
    th_free(&kt);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return st;
}

int main(void)
{
    int i;

    for (i = 0; i < LEN(seq); i++)
        seq[i] = i + 1;
    plan_lazy();
    th_context();

    /* TensorRT's example: data [2,1,5], indices [1,3] = {2,1,1}, axis 2
     * gives [2,1,1,3]. */
    {
        static const double dv[] = {-3, -2, -1, 10, -25, 0, 1, 2, -2, -1};
        static const double iv[] = {2, 1, 1};
        static const double want[] = {-1, -2, -2, 2, 1, 1};
        th_tensor_t in[2], e;
        in[0] = th_t(MICA_FLOAT32, dv, 3, 2, 1, 5);
        in[1] = th_t(MICA_INT32, iv, 2, 1, 3);
        e = th_t(MICA_FLOAT32, want, 4, 2, 1, 1, 3);
        th_check("TensorRT's example, axis 2", "Gather",
                 gather_f(DEFAULT, 2, 0), 2, in, 1, &e, 0);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&e);
    }
    {
        static const int64_t dd[] = {4, 3}, id[] = {2, 2}, od[] = {2, 2, 3};
        static const double iv[] = {3, 0, 1, 1};
        mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16, MICA_INT8,
                                MICA_INT32, MICA_BOOL};
        const char *tn[] = {"float32", "float16", "int8", "int32", "bool"};
        for (i = 0; i < LEN(types); i++) {
            char label[64];
            snprintf(label, sizeof label, "default, axis 0, %s", tn[i]);
            check(label, types[i], 2, dd, 2, id, iv, DEFAULT, 0, 0, 3, od);
        }
    }
    {
        static const int64_t dd[] = {2, 5, 3}, id[] = {4}, od[] = {2, 4, 3};
        static const double iv[] = {4, 0, 2, 2};
        check("default, axis 1", MICA_FLOAT32, 3, dd, 1, id, iv, DEFAULT, 1,
              0, 3, od);
    }
    {
        static const int64_t dd[] = {2, 5}, id[] = {0}, od[] = {2};
        static const double iv[] = {3};
        check("default, 0-D indices drop the axis", MICA_INT32, 2, dd, 0, id,
              iv, DEFAULT, 1, 0, 1, od);
    }
    {
        static const int64_t dd[] = {5}, id[] = {6}, od[] = {6};
        static const double iv[] = {-1, -5, 5, -6, 100, 2};
        check("negative indices count from the end, invalid give 0",
              MICA_FLOAT32, 1, dd, 1, id, iv, DEFAULT, 0, 0, 1, od);
    }
    {
        static const int64_t dd[] = {3, 4}, id[] = {2, 2}, od[] = {3, 2, 2};
        static const double iv[] = {-4, 4, 3, -1};
        check("invalid indices on axis 1, int8", MICA_INT8, 2, dd, 2, id, iv,
              DEFAULT, 1, 0, 3, od);
    }
    /* num_elementwise_dims 1 in mode default. */
    {
        static const int64_t dd[] = {3, 4, 5}, id[] = {3, 2};
        static const int64_t od[] = {3, 4, 2};
        static const double iv[] = {0, 4, 1, -1, 2, 7};
        check("default, elementwise dim, axis 2", MICA_FLOAT32, 3, dd, 2, id,
              iv, DEFAULT, 2, 1, 3, od);
    }
    {
        static const int64_t dd[] = {3, 4, 2}, id[] = {3, 2, 2};
        static const int64_t od[] = {3, 2, 2, 2};
        static const double iv[] = {0, 3, 1, 1, 2, 2, 3, 0, 1, 0, 0, 1};
        check("default, elementwise dim, axis 1, 3-D indices", MICA_FLOAT16,
              3, dd, 3, id, iv, DEFAULT, 1, 1, 4, od);
    }
    {
        static const int64_t dd[] = {1, 4}, id[] = {3, 2}, od[] = {3, 2};
        static const double iv[] = {0, 1, 2, 3, 3, -4};
        check("default, elementwise dim, data broadcasts", MICA_INT32, 2, dd,
              2, id, iv, DEFAULT, 1, 1, 2, od);
    }
    {
        static const int64_t dd[] = {3, 4}, id[] = {1, 2}, od[] = {3, 2};
        static const double iv[] = {3, 1};
        check("default, elementwise dim, indices broadcast", MICA_FLOAT32, 2,
              dd, 2, id, iv, DEFAULT, 1, 1, 2, od);
    }
    /* Mode element. */
    {
        static const int64_t dd[] = {3, 4}, id[] = {2, 4}, od[] = {2, 4};
        static const double iv[] = {0, 2, 1, -1, 2, 2, 0, 3};
        check("element, axis 0", MICA_FLOAT32, 2, dd, 2, id, iv, ELEMENT, 0,
              0, 2, od);
    }
    {
        static const int64_t dd[] = {3, 4}, id[] = {3, 2}, od[] = {3, 2};
        static const double iv[] = {3, 0, 1, 1, -2, 9};
        check("element, axis 1, an invalid index", MICA_INT8, 2, dd, 2, id, iv,
              ELEMENT, 1, 0, 2, od);
    }
    {
        static const int64_t dd[] = {2, 3, 4}, id[] = {2, 2, 4};
        static const int64_t od[] = {2, 2, 4};
        static const double iv[] = {2, 1, 0, 0, 1, 1, 2, 2,
                                    0, 0, 0, 1, 2, 2, 1, 0};
        check("element, rank 3, axis 1, bool", MICA_BOOL, 3, dd, 3, id, iv,
              ELEMENT, 1, 0, 3, od);
    }
    /* Mode nd. */
    {
        static const int64_t dd[] = {2, 3, 4}, id[] = {5, 2}, od[] = {5, 4};
        static const double iv[] = {0, 0, 1, 2, -1, -1, 0, 3, 1, 1};
        check("nd, tuples of 2", MICA_FLOAT32, 3, dd, 2, id, iv, ND, 0, 0, 2,
              od);
    }
    {
        static const int64_t dd[] = {2, 3, 4}, id[] = {2, 2, 3};
        static const int64_t od[] = {2, 2};
        static const double iv[] = {0, 0, 0, 1, 2, 3, 1, 5, 0, -2, -1, -1};
        check("nd, full tuples, one invalid", MICA_INT32, 3, dd, 3, id, iv,
              ND, 0, 0, 2, od);
    }
    {
        static const int64_t dd[] = {2, 3, 4}, id[] = {2, 3, 1};
        static const int64_t od[] = {2, 3, 4};
        static const double iv[] = {2, 0, 1, 1, 1, 3};
        check("nd, elementwise dim", MICA_FLOAT16, 3, dd, 3, id, iv, ND, 0, 1,
              3, od);
    }
    {
        static const int64_t dd[] = {2, 3, 4}, id[] = {2, 2};
        static const int64_t od[] = {2};
        static const double iv[] = {2, 3, 0, -4};
        check("nd, elementwise dim, full tuples", MICA_INT8, 3, dd, 2, id, iv,
              ND, 0, 1, 1, od);
    }
    /* Empty tensors. */
    {
        static const int64_t dd[] = {4, 3}, id[] = {0}, od[] = {0, 3};
        check("empty indices give an empty output", MICA_FLOAT32, 2, dd, 1,
              id, NULL, DEFAULT, 0, 0, 2, od);
    }
    {
        static const int64_t dd[] = {0, 3}, id[] = {2}, od[] = {2, 3};
        static const double iv[] = {0, -1};
        check("gathering from an empty axis gives zeros", MICA_FLOAT32, 2, dd,
              1, id, iv, DEFAULT, 0, 0, 2, od);
    }
    {
        static const int64_t dd[] = {3, 0}, id[] = {2}, od[] = {2, 0};
        static const double iv[] = {0, 1};
        check("empty inner axis", MICA_FLOAT32, 2, dd, 1, id, iv, DEFAULT, 0,
              0, 2, od);
    }
    {
        static const int64_t dd[] = {2, 3}, id[] = {0, 2}, od[] = {0};
        check("nd with no tuples", MICA_FLOAT32, 2, dd, 2, id, NULL, ND, 0, 0,
              1, od);
    }
    /* Errors. */
    {
        static const int64_t dd[] = {2, 3}, id[] = {1};
        static const double iv[] = {0};
        check_error("axis beyond the rank", MICA_INT32, 2, dd, 1, id, iv,
                    DEFAULT, 2, 0, "axis 2 is outside [0, 2)");
        check_error("float indices", MICA_FLOAT32, 2, dd, 1, id, iv, DEFAULT,
                    0, 0, "must be int32");
        check_error("element: ranks differ", MICA_INT32, 2, dd, 1, id, iv,
                    ELEMENT, 0, 0, "indices have rank 1 but data has rank 2");
        check_error("elementwise dim with axis 0", MICA_INT32, 2, dd, 1, id,
                    iv, DEFAULT, 0, 1, "needs axis >= 1");
        check_error("num_elementwise_dims 2", MICA_INT32, 2, dd, 1, id, iv,
                    DEFAULT, 1, 2, "is 0 or 1");
        check_error("elementwise dim in mode element", MICA_INT32, 2, dd, 1,
                    id, iv, ELEMENT, 1, 1, "mode is element");
    }
    {
        static const int64_t dd[] = {2, 3}, id[] = {3, 3};
        static const double iv[9] = {0};
        check_error("element: indices larger than data", MICA_INT32, 2, dd, 2,
                    id, iv, ELEMENT, 1, 0,
                    "indices dimension 0 is 3, more than data's 2");
        check_error("nd: tuples longer than the rank", MICA_INT32, 2, dd, 2,
                    id, iv, ND, 0, 0, "outside [1, 2]");
    }
    {
        static const int64_t dd[] = {2, 3}, id[] = {3, 0};
        check_error("nd: empty tuples", MICA_INT32, 2, dd, 2, id, NULL, ND, 0,
                    0, "outside [1, 2]");
    }
    {
        static const int64_t dd[] = {2, 3}, id[] = {3, 1};
        static const double iv[3] = {0};
        check_error("nd: elementwise dims differ", MICA_INT32, 2, dd, 2, id,
                    iv, ND, 0, 1, "elementwise dimension 0 is 2 in data and 3");
        check_error("default: elementwise dims do not broadcast", MICA_INT32,
                    2, dd, 2, id, iv, DEFAULT, 1, 1,
                    "must be equal or one of them 1");
    }
    {
        static const double dv[] = {0};
        static const double iv[] = {0};
        th_tensor_t in[2];
        in[0] = th_t(MICA_FLOAT32, dv, 0);
        in[1] = th_t(MICA_INT32, iv, 0);
        th_check_error("0-D data", "Gather", gather_f(DEFAULT, 0, 0), 2, in,
                       1, "rank >= 1");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    /* A shape tensor gathered at build time. */
    {
        static const int32_t sv[4] = {2, 3, 5, 4};
        mica_dims_t d;
        char shape[256], msg[1024];
        mica_status_t st;
        memset(&d, 0, sizeof d);
        st = chain(sv, shape, sizeof shape, &d, msg, sizeof msg);
        is_string("[s[2], s[0], s[3], 0]", shape,
                  "chain: Slice to the gathered values has shape [s[2], "
                  "s[0], s[3], 0]");
        ok(st == MICA_OK && d.nb_dims == 4 && d.d[0] == 5 && d.d[1] == 2 &&
           d.d[2] == 4 && d.d[3] == 0, "chain: runs, [5, 2, 4, 0]");
        if (st != MICA_OK)
            diag("%s", msg);
    }
    return exit_status();
}
