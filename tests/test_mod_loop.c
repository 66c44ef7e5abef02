/*
 * tests/test_mod_loop.c - the loop boundary layers (TripLimit, Iterator,
 * Recurrence, LoopOutput), called directly: their types, shapes and
 * formats, then every step kind of enqueue_boundary on the CPU against
 * hand-computed values and, where a GPU is usable, on CUDA against the
 * CPU bit for bit (TAP skips without one).
 *
 * Fields go through the core's own check (defaults applied, enum names
 * to indices) and shapes through its expression builder, as in a build.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Slice i of `t` along axis 0, as a tensor of its own. */
static th_tensor_t slice0(const th_tensor_t *t, int64_t i)
{
    th_tensor_t s;
    size_t n;
    int k;
    memset(&s, 0, sizeof s);
    s.dtype = t->dtype;
    s.dims.nb_dims = t->dims.nb_dims - 1;
    for (k = 1; k < t->dims.nb_dims; k++)
        s.dims.d[k - 1] = t->dims.d[k];
    n = tb_bytes_of(&s);
    s.data = malloc(n ? n : 1);
    if (!s.data)
        bail("out of memory");
    memcpy(s.data, (const char *)t->data + (size_t)i * n, n);
    return s;
}

/* ---- scenarios: each returns its result, or th_none() with why set -------- */

/*
 * An Iterator over x: READ (must give the length), then ITER_BEGIN for
 * every trip; the slices stacked along a new axis 0.  `extra` > 0 asks for
 * one trip too many at the end (an error).
 */
static th_tensor_t iterate(uint32_t dev, const th_tensor_t *x, int64_t axis,
                           int reverse, int extra)
{
    mica_layer_t *l = tb_make("Iterator", dev,
                           th_f_bool(th_f_int(th_fields(), "axis", axis),
                                     "reverse", reverse));
    th_tensor_t in = *x, o, trace;
    mica_dims_t od;
    mica_step_t s = tb_mkstep(MICA_STEP_READ, 0, -1);
    int64_t i, len;
    int k;

    if (!l || tb_out_dims(l, 1, &in, &od) != MICA_OK)
        return tb_failed(l);
    if (tb_step(l, dev, &s, 1, &in, 0, NULL) != MICA_OK)
        return tb_failed(l);
    len = s.value;
    if (len != x->dims.d[axis]) {
        snprintf(tb_why, sizeof tb_why, "READ gave %lld, not the length %lld",
                 (long long)len, (long long)x->dims.d[axis]);
        return tb_failed(l);
    }
    o = th_tensor(x->dtype, od.nb_dims, od.d, NULL);
    trace = o;
    trace.dims.nb_dims = od.nb_dims + 1;
    trace.dims.d[0] = len;
    for (k = 0; k < od.nb_dims; k++)
        trace.dims.d[k + 1] = od.d[k];
    trace = th_tensor(x->dtype, trace.dims.nb_dims, trace.dims.d, NULL);
    for (i = 0; i < len + extra; i++) {
        s = tb_mkstep(MICA_STEP_ITER_BEGIN, i, len);
        if (tb_step(l, dev, &s, 1, &in, 1, &o) != MICA_OK) {
            th_free(&o);
            th_free(&trace);
            return tb_failed(l);
        }
        memcpy((char *)trace.data + (size_t)i * tb_bytes_of(&o), o.data,
               tb_bytes_of(&o));
    }
    th_free(&o);
    l->ops->destroy(l);
    return trace;
}

/*
 * A LoopOutput fed the slices of xs (axis 0: one per trip, T of them),
 * with a length (-1: none), its output first filled with -1; ITER_END for
 * every trip, then EXIT with trip_count T.
 */
static th_tensor_t collect(uint32_t dev, const char *kind, int64_t axis,
                           const th_tensor_t *xs, int64_t length)
{
    mica_layer_t *l = tb_make("LoopOutput", dev,
                           th_f_int(th_f_str(th_fields(), "kind", kind),
                                    "axis", axis));
    th_tensor_t in[2], out;
    double lv = (double)length;
    mica_dims_t od;
    mica_step_t s;
    int64_t i, T = xs->dims.d[0];
    int nb_in = length >= 0 ? 2 : 1;

    in[0] = slice0(xs, 0);
    in[1] = th_shape(th_t(MICA_INT32, &lv, 0));
    if (!l || tb_out_dims(l, nb_in, in, &od) != MICA_OK) {
        th_free(&in[0]);
        th_free(&in[1]);
        return tb_failed(l);
    }
    out = th_tensor(xs->dtype, od.nb_dims, od.d, NULL);
    for (i = 0; i < th_volume(&out); i++)
        th_set(&out, i, -1);
    for (i = 0; i <= T; i++) {
        if (i < T) {
            th_free(&in[0]);
            in[0] = slice0(xs, i);
            s = tb_mkstep(MICA_STEP_ITER_END, i, T);
        } else {
            s = tb_mkstep(MICA_STEP_EXIT, 0, T);
        }
        if (tb_step(l, dev, &s, nb_in, in, 1, &out) != MICA_OK) {
            th_free(&out);
            out = th_none();
            break;
        }
    }
    th_free(&in[0]);
    th_free(&in[1]);
    l->ops->destroy(l);
    return out;
}

/*
 * A Recurrence: ENTER with `initial`, then ITER_END with each slice of
 * nexts; the output after each step stacked along a new axis 0.
 */
static th_tensor_t recur(uint32_t dev, const th_tensor_t *initial,
                         const th_tensor_t *nexts)
{
    mica_layer_t *l = tb_make("Recurrence", dev, th_fields());
    th_tensor_t in[2], out, trace;
    mica_dims_t od;
    mica_step_t s;
    int64_t i, T = nexts->dims.d[0];
    int k;

    in[0] = *initial;
    in[1] = *initial; /* the core passes a copy of in[0] at build time */
    if (!l || tb_out_dims(l, 2, in, &od) != MICA_OK)
        return tb_failed(l);
    out = th_tensor(initial->dtype, od.nb_dims, od.d, NULL);
    trace = out;
    trace.dims.nb_dims = od.nb_dims + 1;
    trace.dims.d[0] = T + 1;
    for (k = 0; k < od.nb_dims; k++)
        trace.dims.d[k + 1] = od.d[k];
    trace = th_tensor(initial->dtype, trace.dims.nb_dims, trace.dims.d, NULL);
    for (i = 0; i <= T; i++) {
        mica_status_t st;
        if (i == 0) {
            s = tb_mkstep(MICA_STEP_ENTER, 0, T);
            st = tb_step(l, dev, &s, 2, in, 1, &out);
        } else {
            in[1] = slice0(nexts, i - 1);
            s = tb_mkstep(MICA_STEP_ITER_END, i - 1, T);
            st = tb_step(l, dev, &s, 2, in, 1, &out);
            th_free(&in[1]);
        }
        if (st != MICA_OK) {
            th_free(&out);
            th_free(&trace);
            return tb_failed(l);
        }
        memcpy((char *)trace.data + (size_t)i * tb_bytes_of(&out), out.data,
               tb_bytes_of(&out));
    }
    th_free(&out);
    l->ops->destroy(l);
    return trace;
}

/* A TripLimit's READ of t; `init`: call initialize first. */
static mica_status_t trip_read(uint32_t dev, const char *kind,
                               const th_tensor_t *t, int init, int64_t *v)
{
    mica_layer_t *l = tb_make("TripLimit", dev,
                           kind ? th_f_str(th_fields(), "kind", kind)
                                : th_fields());
    th_tensor_t in = *t;
    mica_step_t s = tb_mkstep(MICA_STEP_READ, 0, -1);
    mica_error_t err;
    mica_status_t st;

    if (!l)
        return MICA_ERR_INVALID;
    mica__error_clear(&err);
    if (init && l->ops->initialize &&
        (st = l->ops->initialize(l, NULL, &err)) != MICA_OK) {
        snprintf(tb_why, sizeof tb_why, "%s", mica__error_msg(&err, "no message"));
        l->ops->destroy(l);
        return st;
    }
    s.value = -12345;
    st = tb_step(l, dev, &s, 1, &in, 0, NULL);
    *v = s.value;
    if (init && l->ops->terminate)
        l->ops->terminate(l);
    l->ops->destroy(l);
    return st;
}

static void reads(const char *label, const char *kind, mica_dtype_t dt,
                  double value, int64_t want)
{
    th_tensor_t t = th_t(dt, &value, 0);
    int64_t v = 0;
    mica_status_t st;
    int init;

    st = trip_read(CPU, kind, &t, 0, &v);
    ok(st == MICA_OK && v == want, "%s: cpu READ gives %lld (got %lld)",
       label, (long long)want, (long long)v);
    for (init = 0; init < 2; init++) {
        if (!th_cuda()) {
            skip("%s: cuda: no usable GPU", label);
            continue;
        }
        v = 0;
        st = trip_read(GPU, kind, &t, init, &v);
        ok(st == MICA_OK && v == want, "%s: cuda READ gives %lld (got "
           "%lld)%s", label, (long long)want, (long long)v,
           init ? " after initialize" : " (lazy buffer)");
    }
    th_free(&t);
}

/* ---- build-time questions ------------------------------------------------- */

static void questions(void)
{
    mica_layer_t *l;
    mica_dtype_t t[4], o[2];
    mica_dims_t d;
    mica_error_t err;
    th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 3, 4);
    th_tensor_t y = th_t(MICA_INT32, NULL, 2, 4, 3);
    th_tensor_t s = th_t(MICA_FLOAT32, NULL, 0);

    /* TripLimit */
    l = tb_make("TripLimit", CPU, th_fields());
    if (!l)
        bail("TripLimit: %s", tb_why);
    is_int(0, l->ops->nb_outputs(l), "TripLimit has no outputs");
    t[0] = MICA_INT32;
    ok(tb_dtypes(l, 1, t, 0, o) == MICA_OK, "TripLimit count (the default) "
       "takes int32");
    t[0] = MICA_BOOL;
    ok(tb_dtypes(l, 1, t, 0, o) != MICA_OK &&
       strstr(tb_why, "input 0 (the trip limit) has type bool but a 'count' "
              "trip limit must be int32"), "TripLimit count refuses bool: %s",
       tb_why);
    ok(tb_formats(l, 0, 1, 0, t) == 0, "TripLimit count: bool not supported");
    t[0] = MICA_INT32;
    ok(tb_formats(l, 0, 1, 0, t) == 1, "TripLimit count: int32 supported");
    mica__error_clear(&err);
    ok(l->ops->enqueue(l, NULL, 1, NULL, 0, NULL, NULL, NULL, NULL, &err) !=
       MICA_OK && strstr(mica__error_msg(&err, ""), "boundary layer: run by "
                         "the core through enqueue_boundary"),
       "TripLimit: the ordinary enqueue refuses");
    l->ops->destroy(l);
    l = tb_make("TripLimit", CPU, th_f_str(th_fields(), "kind", "while"));
    t[0] = MICA_BOOL;
    ok(l && tb_dtypes(l, 1, t, 0, o) == MICA_OK && tb_formats(l, 0, 1, 0, t) == 1,
       "TripLimit while takes bool");
    t[0] = MICA_INT32;
    ok(l && tb_dtypes(l, 1, t, 0, o) != MICA_OK && tb_formats(l, 0, 1, 0, t) == 0,
       "TripLimit while refuses int32: %s", tb_why);
    if (l)
        l->ops->destroy(l);
    ok(!tb_make("TripLimit", CPU, th_f_str(th_fields(), "kind", "until")) &&
       strstr(tb_why, "until"), "TripLimit: unknown kind refused: %s", tb_why);

    /* Iterator */
    l = tb_make("Iterator", CPU, th_fields());
    if (!l)
        bail("Iterator: %s", tb_why);
    t[0] = MICA_INT64;
    ok(tb_dtypes(l, 1, t, 1, o) == MICA_OK && o[0] == MICA_INT64,
       "Iterator: output type is the input's");
    ok(tb_out_dims(l, 1, &x, &d) == MICA_OK && d.nb_dims == 1 && d.d[0] == 4,
       "Iterator axis 0 (the default) on [3,4] gives [4]");
    ok(tb_out_dims(l, 1, &s, &d) != MICA_OK &&
       strstr(tb_why, "the input is 0-D but must have rank 1 or more"),
       "Iterator refuses a 0-D input: %s", tb_why);
    t[0] = MICA_FLOAT16; t[1] = MICA_FLOAT16;
    ok(tb_formats(l, 1, 1, 1, t) == 1, "Iterator: float16 to float16");
    t[1] = MICA_FLOAT32;
    ok(tb_formats(l, 1, 1, 1, t) == 0, "Iterator: float16 to float32 refused");
    l->ops->destroy(l);
    l = tb_make("Iterator", CPU, th_f_int(th_fields(), "axis", 1));
    ok(l && tb_out_dims(l, 1, &x, &d) == MICA_OK && d.nb_dims == 1 &&
       d.d[0] == 3, "Iterator axis 1 on [3,4] gives [3]");
    if (l)
        l->ops->destroy(l);
    l = tb_make("Iterator", CPU, th_f_int(th_fields(), "axis", 2));
    ok(l && tb_out_dims(l, 1, &x, &d) != MICA_OK &&
       strstr(tb_why, "axis 2 is out of range for an input of rank 2 (axes are "
              "in [0, 2))"), "Iterator: axis 2 of rank 2 refused: %s", tb_why);
    if (l)
        l->ops->destroy(l);
    l = tb_make("Iterator", CPU, th_f_int(th_fields(), "axis", -1));
    ok(l && tb_out_dims(l, 1, &x, &d) != MICA_OK &&
       strstr(tb_why, "axis -1 is out of range"), "Iterator: axis -1 refused: "
       "%s", tb_why);
    if (l)
        l->ops->destroy(l);

    /* Recurrence: only input 0 decides */
    l = tb_make("Recurrence", CPU, th_fields());
    if (!l)
        bail("Recurrence: %s", tb_why);
    t[0] = MICA_FLOAT32; t[1] = MICA_INT32;
    ok(tb_dtypes(l, 2, t, 1, o) == MICA_OK && o[0] == MICA_FLOAT32,
       "Recurrence: output type from input 0 alone");
    {
        th_tensor_t in[2];
        in[0] = x;
        in[1] = y;
        ok(tb_out_dims(l, 2, in, &d) == MICA_OK && d.nb_dims == 2 &&
           d.d[0] == 3 && d.d[1] == 4, "Recurrence: output dims from input "
           "0 alone");
    }
    t[0] = MICA_INT8; t[1] = MICA_INT8; t[2] = MICA_INT8;
    ok(tb_formats(l, 0, 2, 1, t) && tb_formats(l, 1, 2, 1, t) &&
       tb_formats(l, 2, 2, 1, t), "Recurrence: int8 throughout");
    t[1] = MICA_UINT8;
    ok(!tb_formats(l, 1, 2, 1, t), "Recurrence: next of another type refused");
    t[1] = MICA_INT8; t[2] = MICA_BOOL;
    ok(!tb_formats(l, 2, 2, 1, t), "Recurrence: output of another type "
       "refused");
    l->ops->destroy(l);

    /* LoopOutput */
    {
        double three = 3;
        th_tensor_t in[2];
        mica_shape_expr_t se[2], so;
        const mica_expr_t *vals[2][4], *n;

        in[0] = x;
        in[1] = th_shape(th_t(MICA_INT32, &three, 0));
        l = tb_make("LoopOutput", CPU, th_fields());
        if (!l)
            bail("LoopOutput: %s", tb_why);
        ok(tb_out_dims(l, 1, in, &d) == MICA_OK && d.nb_dims == 2 &&
           d.d[0] == 3 && d.d[1] == 4, "LoopOutput last_value (the "
           "default): the input's dims");
        ok(tb_out_dims(l, 2, in, &d) != MICA_OK &&
           strstr(tb_why, "LoopOutput 'last_value' takes no length"),
           "LoopOutput last_value refuses a length: %s", tb_why);
        ok(l->ops->input_kind(l, 1, 2) == MICA_INPUT_SHAPE &&
           l->ops->input_kind(l, 0, 2) == MICA_INPUT_DATA,
           "LoopOutput: input 1 is a shape input");
        l->ops->destroy(l);

        l = tb_make("LoopOutput", CPU, th_f_str(th_fields(), "kind",
                                              "concatenate"));
        if (!l)
            bail("LoopOutput: %s", tb_why);
        ok(tb_out_dims(l, 2, in, &d) == MICA_OK && d.nb_dims == 3 &&
           d.d[0] == 3 && d.d[1] == 3 && d.d[2] == 4,
           "LoopOutput concatenate axis 0 on [3,4] with length 3: [3,3,4]");
        ok(tb_out_dims(l, 1, in, &d) != MICA_OK &&
           strstr(tb_why, "LoopOutput 'concatenate' needs the 0-D int32 length "
                  "as its second input"), "LoopOutput concatenate without "
           "length: %s", tb_why);
        {
            th_tensor_t none[2];
            none[0] = x;
            none[1] = th_none();
            ok(tb_out_dims(l, 2, none, &d) != MICA_OK &&
               strstr(tb_why, "needs the 0-D int32 length"),
               "LoopOutput concatenate with the length left out: %s", tb_why);
        }
        /* a symbolic length goes in as it is */
        tb_shapes(2, in, se, vals);
        n = mica__expr_symbol(tb_eb, 0, "N");
        se[1].values = &n;
        mica__error_clear(&err);
        ok(l->ops->output_dims(l, 0, se, 2, tb_eb, &so, &err) == MICA_OK &&
           so.nb_dims == 3 && so.d[0] == n, "LoopOutput: a symbolic length "
           "becomes the new axis");
        t[0] = MICA_BFLOAT16; t[1] = MICA_INT32; t[2] = MICA_BFLOAT16;
        ok(tb_formats(l, 0, 2, 1, t) && tb_formats(l, 1, 2, 1, t) &&
           tb_formats(l, 2, 2, 1, t), "LoopOutput: bfloat16 with an int32 "
           "length");
        t[1] = MICA_INT64;
        ok(!tb_formats(l, 1, 2, 1, t), "LoopOutput: an int64 length refused");
        t[1] = MICA_INT32; t[2] = MICA_FLOAT16;
        ok(!tb_formats(l, 2, 2, 1, t), "LoopOutput: output of another type "
           "refused");
        l->ops->destroy(l);

        l = tb_make("LoopOutput", CPU,
                 th_f_int(th_f_str(th_fields(), "kind", "reverse"), "axis",
                          2));
        ok(l && tb_out_dims(l, 2, in, &d) == MICA_OK && d.nb_dims == 3 &&
           d.d[0] == 3 && d.d[1] == 4 && d.d[2] == 3,
           "LoopOutput reverse axis 2 (= rank) on [3,4]: [3,4,3]");
        if (l)
            l->ops->destroy(l);
        l = tb_make("LoopOutput", CPU,
                 th_f_int(th_f_str(th_fields(), "kind", "reverse"), "axis",
                          3));
        ok(l && tb_out_dims(l, 2, in, &d) != MICA_OK &&
           strstr(tb_why, "axis 3 is out of range for an input of rank 2 (axes "
                  "are in [0, 2])"), "LoopOutput: axis 3 refused: %s", tb_why);
        if (l)
            l->ops->destroy(l);
        th_free(&in[1]);
    }
    th_free(&x);
    th_free(&y);
    th_free(&s);
}

/* ---- runs ------------------------------------------------------------------ */

static void iterators(void)
{
    static const double m[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    static const double rows_rev[] = {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3};
    static const double cols[] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    static const double cols_rev[] = {3, 7, 11, 2, 6, 10, 1, 5, 9, 0, 4, 8};
    /* x [2,3,2] = 0..11: along axis 1, slice i is x[:, i, :] */
    static const double ax1[] = {0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11};
    static const double ax2_rev[] = {1, 3, 5, 7, 9, 11, 0, 2, 4, 6, 8, 10};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_INT8,
                                         MICA_FLOAT16, MICA_INT64};
    int k;

    for (k = 0; k < LEN(types); k++) {
        th_tensor_t x = th_t(types[k], m, 2, 3, 4);
        th_tensor_t w;
        char label[128];
        const char *tn = mica_dtype_name(types[k]);

        w = th_t(types[k], m, 2, 3, 4);
        snprintf(label, sizeof label, "Iterator %s [3,4] by rows", tn);
        BOTH(label, &w, iterate(dev, &x, 0, 0, 0));
        th_free(&w);
        w = th_t(types[k], rows_rev, 2, 3, 4);
        snprintf(label, sizeof label, "Iterator %s [3,4] by rows, reverse",
                 tn);
        BOTH(label, &w, iterate(dev, &x, 0, 1, 0));
        th_free(&w);
        w = th_t(types[k], cols, 2, 4, 3);
        snprintf(label, sizeof label, "Iterator %s [3,4] by columns", tn);
        BOTH(label, &w, iterate(dev, &x, 1, 0, 0));
        th_free(&w);
        w = th_t(types[k], cols_rev, 2, 4, 3);
        snprintf(label, sizeof label, "Iterator %s [3,4] by columns, "
                 "reverse", tn);
        BOTH(label, &w, iterate(dev, &x, 1, 1, 0));
        th_free(&w);
        th_free(&x);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, m, 3, 2, 3, 2);
        th_tensor_t w = th_t(MICA_FLOAT32, ax1, 3, 3, 2, 2);
        BOTH("Iterator [2,3,2] along axis 1", &w, iterate(dev, &x, 1, 0, 0));
        th_free(&w);
        w = th_t(MICA_FLOAT32, ax2_rev, 3, 2, 2, 3);
        BOTH("Iterator [2,3,2] along axis 2, reverse", &w,
             iterate(dev, &x, 2, 1, 0));
        th_free(&w);
        w = th_t(MICA_FLOAT32, m, 3, 2, 3, 2);
        BOTH("Iterator [2,3,2] along axis 0", &w, iterate(dev, &x, 0, 0, 0));
        th_free(&w);
        FAILS("Iterator: a trip beyond the input's length",
              "trip 3 is out of range: the input has 3 slices along axis 1",
              iterate(dev, &x, 1, 0, 1));
        th_free(&x);
    }
    {
        static const double b[] = {1, 0, 0, 1, 1, 1};
        static const double bt[] = {1, 1, 0, 1, 0, 1};
        th_tensor_t x = th_t(MICA_BOOL, b, 2, 2, 3);
        th_tensor_t w = th_t(MICA_BOOL, bt, 2, 3, 2);
        BOTH("Iterator bool [2,3] by columns", &w, iterate(dev, &x, 1, 0, 0));
        th_free(&w);
        th_free(&x);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 4);
        th_tensor_t w = th_t(MICA_FLOAT32, NULL, 2, 4, 0);
        BOTH("Iterator [0,4] by columns: empty slices", &w,
             iterate(dev, &x, 1, 0, 0));
        th_free(&w);
        th_free(&x);
    }
}

static void outputs(void)
{
    static const double xs[] = {1, 2, 3, 4, 5, 6};       /* 3 trips of [2] */
    static const double cat1[] = {1, 3, 5, 2, 4, 6};
    static const double rev0[] = {5, 6, 3, 4, 1, 2};
    static const double rev1[] = {5, 3, 1, 6, 4, 2};
    static const double rev0_long[] = {5, 6, 3, 4, 1, 2, 0, 0};
    static const double cat1_long[] = {1, 3, 5, 0, 2, 4, 6, 0};
    static const double last[] = {5, 6};
    /* 2 trips of [2,2], trip axis 1 in the middle */
    static const double ys[] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const double mid[] = {1, 2, 5, 6, 3, 4, 7, 8};
    static const double mid_rev[] = {5, 6, 1, 2, 7, 8, 3, 4};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_INT8,
                                         MICA_BFLOAT16, MICA_INT64};
    int k;

    for (k = 0; k < LEN(types); k++) {
        const char *tn = mica_dtype_name(types[k]);
        th_tensor_t x = th_t(types[k], xs, 2, 3, 2), w;
        char label[128];

        w = th_t(types[k], xs, 2, 3, 2);
        snprintf(label, sizeof label, "LoopOutput %s concatenate axis 0", tn);
        BOTH(label, &w, collect(dev, "concatenate", 0, &x, 3));
        th_free(&w);
        w = th_t(types[k], cat1, 2, 2, 3);
        snprintf(label, sizeof label, "LoopOutput %s concatenate axis 1", tn);
        BOTH(label, &w, collect(dev, "concatenate", 1, &x, 3));
        th_free(&w);
        w = th_t(types[k], rev0, 2, 3, 2);
        snprintf(label, sizeof label, "LoopOutput %s reverse axis 0", tn);
        BOTH(label, &w, collect(dev, "reverse", 0, &x, 3));
        th_free(&w);
        w = th_t(types[k], rev1, 2, 2, 3);
        snprintf(label, sizeof label, "LoopOutput %s reverse axis 1", tn);
        BOTH(label, &w, collect(dev, "reverse", 1, &x, 3));
        th_free(&w);
        w = th_t(types[k], last, 1, 2);
        snprintf(label, sizeof label, "LoopOutput %s last_value", tn);
        BOTH(label, &w, collect(dev, "last_value", 0, &x, -1));
        th_free(&w);
        th_free(&x);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, xs, 2, 3, 2), w;
        w = th_t(MICA_FLOAT32, rev0_long, 2, 4, 2);
        BOTH("LoopOutput reverse, length 4 > 3 trips: the tail is zeros", &w,
             collect(dev, "reverse", 0, &x, 4));
        th_free(&w);
        w = th_t(MICA_FLOAT32, cat1_long, 2, 2, 4);
        BOTH("LoopOutput concatenate axis 1, length 4 > 3 trips: the tail is zeros", &w,
             collect(dev, "concatenate", 1, &x, 4));
        th_free(&w);
        FAILS("LoopOutput concatenate: length 2 < 3 trips",
              "the loop ran more trips (3) than the output's length along "
              "axis 0 (2): a length smaller than the trip count",
              collect(dev, "concatenate", 0, &x, 2));
        FAILS("LoopOutput reverse: length 2 < 3 trips",
              "the loop ran more trips (3) than the output's length along "
              "axis 1 (2)", collect(dev, "reverse", 1, &x, 2));
        FAILS("LoopOutput concatenate without a length",
              "LoopOutput 'concatenate' needs the 0-D int32 length",
              collect(dev, "concatenate", 0, &x, -1));
        th_free(&x);
    }
    {
        th_tensor_t y = th_t(MICA_FLOAT32, ys, 3, 2, 2, 2), w;
        w = th_t(MICA_FLOAT32, mid, 3, 2, 2, 2);
        BOTH("LoopOutput concatenate [2,2] bodies along axis 1", &w,
             collect(dev, "concatenate", 1, &y, 2));
        th_free(&w);
        w = th_t(MICA_FLOAT32, mid_rev, 3, 2, 2, 2);
        BOTH("LoopOutput reverse [2,2] bodies along axis 1", &w,
             collect(dev, "reverse", 1, &y, 2));
        th_free(&w);
        th_free(&y);
    }
    {
        static const double b[] = {1, 0, 0, 0, 1, 1}; /* 3 trips of [2] */
        static const double r[] = {1, 0, 1, 1, 0, 0};
        th_tensor_t x = th_t(MICA_BOOL, b, 2, 3, 2);
        th_tensor_t w = th_t(MICA_BOOL, r, 2, 2, 3);
        /* out[a][i] = b[2-i][a] */
        BOTH("LoopOutput bool reverse axis 1", &w,
             collect(dev, "reverse", 1, &x, 3));
        th_free(&w);
        th_free(&x);
    }
}

static void recurrences(void)
{
    static const double init[] = {1, 2, 3, 4, 5, 6};
    static const double nexts[] = {10, 20, 30, 40, 50, 60,
                                   -1, -2, -3, -4, -5, -6};
    static const double trace[] = {1, 2, 3, 4, 5, 6,
                                   10, 20, 30, 40, 50, 60,
                                   -1, -2, -3, -4, -5, -6};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_INT8,
                                         MICA_FLOAT16, MICA_INT64,
                                         MICA_INT32};
    int k;

    for (k = 0; k < LEN(types); k++) {
        th_tensor_t x = th_t(types[k], init, 2, 2, 3);
        th_tensor_t n = th_t(types[k], nexts, 3, 2, 2, 3);
        th_tensor_t w = th_t(types[k], trace, 3, 3, 2, 3);
        char label[128];
        snprintf(label, sizeof label, "Recurrence %s [2,3]: ENTER, then "
                 "ITER_END twice", mica_dtype_name(types[k]));
        BOTH(label, &w, recur(dev, &x, &n));
        th_free(&x);
        th_free(&n);
        th_free(&w);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, init, 2, 2, 3);
        th_tensor_t n = th_t(MICA_FLOAT32, init, 3, 1, 2, 3);
        th_tensor_t w = th_t(MICA_FLOAT32, trace, 3, 2, 2, 3);
        /* next is the output's own memory: ITER_END leaves it */
        memcpy((char *)w.data + 24, w.data, 24);
        tb_alias_next = 1;
        BOTH("Recurrence: next in the output's memory", &w,
             recur(dev, &x, &n));
        tb_alias_next = 0;
        th_free(&x);
        th_free(&n);
        th_free(&w);
    }
}

static void trip_limits(void)
{
    reads("TripLimit count 5", NULL, MICA_INT32, 5, 5);
    reads("TripLimit count 0", "count", MICA_INT32, 0, 0);
    reads("TripLimit count -3 means 0 trips", "count", MICA_INT32, -3, 0);
    reads("TripLimit count 2147483647", "count", MICA_INT32, 2147483647.0,
          2147483647);
    reads("TripLimit while true", "while", MICA_BOOL, 1, 1);
    reads("TripLimit while false", "while", MICA_BOOL, 0, 0);
    {
        static const double v[] = {2, 3};
        th_tensor_t t = th_t(MICA_INT32, v, 1, 2);
        int64_t got;
        ok(trip_read(CPU, "count", &t, 0, &got) != MICA_OK &&
           strstr(tb_why, "the trip limit has rank 1 but must be 0-D"),
           "TripLimit: a 1-D count refused at READ: %s", tb_why);
        th_free(&t);
        t = th_t(MICA_BOOL, v, 0);
        ok(trip_read(CPU, "count", &t, 0, &got) != MICA_OK &&
           strstr(tb_why, "has type bool but a 'count' trip limit must be "
                  "int32"), "TripLimit: a bool count refused at READ: %s",
           tb_why);
        th_free(&t);
    }
}

int main(void)
{
    plan_lazy();
    th_context();
    tb_init();

    questions();
    trip_limits();
    iterators();
    recurrences();
    outputs();

    tb_fini();
    return exit_status();
}
