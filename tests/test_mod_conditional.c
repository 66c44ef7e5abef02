/*
 * tests/test_mod_conditional.c - the conditional boundary layers
 * (Condition, IfConditionalInput, IfConditionalOutput), called directly:
 * their types, shapes and formats, then Condition's READ, the Input's
 * enqueue and the Output's SELECT on the CPU against hand-computed values
 * and, where a GPU is usable, on CUDA against the CPU bit for bit (TAP
 * skips without one).
 *
 * Fields go through the core's own check and shapes through its
 * expression builder, as in a build.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- scenarios: each returns its result, or th_none() with why set -------- */

/* A Condition's READ of c; `init`: call initialize first. */
static mica_status_t cond_read(uint32_t dev, const th_tensor_t *c, int init,
                               int64_t *v)
{
    mica_layer_t *l = tb_make("Condition", dev, th_fields());
    th_tensor_t in = *c;
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

static void reads(const char *label, double value, int64_t want)
{
    th_tensor_t t = th_t(MICA_BOOL, &value, 0);
    int64_t v = 0;
    mica_status_t st;
    int init;

    st = cond_read(CPU, &t, 0, &v);
    ok(st == MICA_OK && v == want, "%s: cpu READ gives %lld (got %lld)",
       label, (long long)want, (long long)v);
    for (init = 0; init < 2; init++) {
        if (!th_cuda()) {
            skip("%s: cuda: no usable GPU", label);
            continue;
        }
        v = 0;
        st = cond_read(GPU, &t, init, &v);
        ok(st == MICA_OK && v == want, "%s: cuda READ gives %lld (got "
           "%lld)%s", label, (long long)want, (long long)v,
           init ? " after initialize" : " (lazy buffer)");
    }
    th_free(&t);
}

/* IfConditionalInput's enqueue on x; the output is filled with -1 first. */
static th_tensor_t pass(uint32_t dev, const th_tensor_t *x)
{
    mica_layer_t *l = tb_make("IfConditionalInput", dev, th_fields());
    th_tensor_t in = *x, out;
    mica_dims_t od;
    int64_t i;

    if (!l || tb_out_dims(l, 1, &in, &od) != MICA_OK)
        return tb_failed(l);
    out = th_tensor(x->dtype, od.nb_dims, od.d, NULL);
    for (i = 0; i < th_volume(&out); i++)
        th_set(&out, i, -1);
    if (tb_step(l, dev, NULL, 1, &in, 1, &out) != MICA_OK) {
        th_free(&out);
        return tb_failed(l);
    }
    l->ops->destroy(l);
    return out;
}

/*
 * IfConditionalOutput's SELECT of `branch` between t and f (their shapes
 * as given, the output's from output_dims); the output is filled with -1
 * first.
 */
static th_tensor_t choose(uint32_t dev, const th_tensor_t *t,
                          const th_tensor_t *f, int32_t branch)
{
    mica_layer_t *l = tb_make("IfConditionalOutput", dev, th_fields());
    th_tensor_t in[2], out;
    mica_step_t s = tb_mkstep(MICA_STEP_SELECT, 0, -1);
    mica_dims_t od;
    int64_t i;

    in[0] = *t;
    in[1] = *f;
    if (!l || tb_out_dims(l, 2, in, &od) != MICA_OK)
        return tb_failed(l);
    out = th_tensor(t->dtype, od.nb_dims, od.d, NULL);
    for (i = 0; i < th_volume(&out); i++)
        th_set(&out, i, -1);
    s.branch = branch;
    if (tb_step(l, dev, &s, 2, in, 1, &out) != MICA_OK) {
        th_free(&out);
        return tb_failed(l);
    }
    l->ops->destroy(l);
    return out;
}

/* ---- build-time questions ------------------------------------------------- */

static void questions(void)
{
    mica_layer_t *l;
    mica_dtype_t t[4], o[2];
    mica_dims_t d;
    mica_error_t err;
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    th_tensor_t in[2];

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ok(mica_registry_find(th_context(), NULL, "Condition", 0, NULL, CPU,
                          &info) == MICA_OK &&
       info.role == MICA_ROLE_CONDITION && info.version == 1 &&
       !strcmp(info.ns, "") && !strcmp(info.implementation, "reference"),
       "Condition: version 1, role CONDITION, reference on the CPU");
    ok(mica_registry_find(th_context(), NULL, "IfConditionalInput", 0, NULL,
                          CPU, &info) == MICA_OK &&
       info.role == MICA_ROLE_IF_INPUT, "IfConditionalInput: role IF_INPUT");
    ok(mica_registry_find(th_context(), NULL, "IfConditionalOutput", 0, NULL,
                          CPU, &info) == MICA_OK &&
       info.role == MICA_ROLE_IF_OUTPUT,
       "IfConditionalOutput: role IF_OUTPUT");

    /* Condition */
    l = tb_make("Condition", CPU, th_fields());
    if (!l)
        bail("Condition: %s", tb_why);
    is_int(0, l->ops->nb_outputs(l), "Condition has no outputs");
    t[0] = MICA_BOOL;
    ok(tb_dtypes(l, 1, t, 0, o) == MICA_OK && tb_formats(l, 0, 1, 0, t) == 1,
       "Condition takes bool");
    t[0] = MICA_INT32;
    ok(tb_dtypes(l, 1, t, 0, o) != MICA_OK &&
       strstr(tb_why, "input 0 (the condition) has type int32 but must be "
              "bool") && tb_formats(l, 0, 1, 0, t) == 0,
       "Condition refuses int32: %s", tb_why);
    mica__error_clear(&err);
    ok(l->ops->enqueue(l, NULL, 1, NULL, 0, NULL, NULL, NULL, NULL, &err) !=
       MICA_OK && strstr(mica__error_msg(&err, ""), "boundary layer: run by "
                         "the core through enqueue_boundary"),
       "Condition: the ordinary enqueue refuses");
    l->ops->destroy(l);

    /* IfConditionalInput */
    l = tb_make("IfConditionalInput", CPU, th_fields());
    if (!l)
        bail("IfConditionalInput: %s", tb_why);
    t[0] = MICA_UINT8;
    ok(tb_dtypes(l, 1, t, 1, o) == MICA_OK && o[0] == MICA_UINT8,
       "IfConditionalInput: output type is the input's");
    in[0] = th_t(MICA_FLOAT32, NULL, 3, 2, 1, 5);
    ok(tb_out_dims(l, 1, in, &d) == MICA_OK && d.nb_dims == 3 && d.d[0] == 2 &&
       d.d[1] == 1 && d.d[2] == 5, "IfConditionalInput: output dims are the "
       "input's");
    t[1] = MICA_UINT8;
    ok(tb_formats(l, 1, 1, 1, t) == 1, "IfConditionalInput: uint8 to uint8");
    t[1] = MICA_INT8;
    ok(tb_formats(l, 1, 1, 1, t) == 0, "IfConditionalInput: uint8 to int8 "
       "refused");
    ok(l->ops->enqueue_boundary == NULL, "IfConditionalInput: no "
       "enqueue_boundary (a plain layer)");
    th_free(&in[0]);
    l->ops->destroy(l);

    /* IfConditionalOutput */
    l = tb_make("IfConditionalOutput", CPU, th_fields());
    if (!l)
        bail("IfConditionalOutput: %s", tb_why);
    t[0] = MICA_BFLOAT16; t[1] = MICA_BFLOAT16;
    ok(tb_dtypes(l, 2, t, 1, o) == MICA_OK && o[0] == MICA_BFLOAT16,
       "IfConditionalOutput: output type is the inputs'");
    t[1] = MICA_FLOAT16;
    ok(tb_dtypes(l, 2, t, 1, o) != MICA_OK &&
       strstr(tb_why, "true and false values have different types bfloat16 and "
              "float16"), "IfConditionalOutput: types differ: %s", tb_why);
    ok(tb_formats(l, 1, 2, 1, t) == 0, "IfConditionalOutput: false value of "
       "another type refused");
    t[1] = MICA_BFLOAT16; t[2] = MICA_BFLOAT16;
    ok(tb_formats(l, 0, 2, 1, t) && tb_formats(l, 1, 2, 1, t) &&
       tb_formats(l, 2, 2, 1, t), "IfConditionalOutput: bfloat16 throughout");
    t[2] = MICA_FLOAT32;
    ok(tb_formats(l, 2, 2, 1, t) == 0, "IfConditionalOutput: output of another "
       "type refused");
    in[0] = th_t(MICA_FLOAT32, NULL, 2, 2, 3);
    in[1] = th_t(MICA_FLOAT32, NULL, 2, 2, 3);
    ok(tb_out_dims(l, 2, in, &d) == MICA_OK && d.nb_dims == 2 && d.d[0] == 2 &&
       d.d[1] == 3, "IfConditionalOutput: [2,3] and [2,3] give [2,3]");
    th_free(&in[1]);
    in[1] = th_t(MICA_FLOAT32, NULL, 2, 3, 2);
    ok(tb_out_dims(l, 2, in, &d) != MICA_OK &&
       strstr(tb_why, "true and false values have different shapes [2, 3] and "
              "[3, 2]"), "IfConditionalOutput: [2,3] and [3,2] refused: %s",
       tb_why);
    th_free(&in[1]);
    in[1] = th_t(MICA_FLOAT32, NULL, 3, 2, 3, 1);
    ok(tb_out_dims(l, 2, in, &d) != MICA_OK &&
       strstr(tb_why, "true and false values have different shapes [2, 3] and "
              "[2, 3, 1]"), "IfConditionalOutput: ranks 2 and 3 refused: %s",
       tb_why);
    th_free(&in[1]);
    {
        /* a symbolic dimension against a constant one is fine */
        mica_shape_expr_t se[2], so;
        const mica_expr_t *vals[2][4];
        in[1] = th_t(MICA_FLOAT32, NULL, 2, 2, 3);
        tb_shapes(2, in, se, vals);
        se[1].d[0] = mica__expr_symbol(tb_eb, 0, "N");
        mica__error_clear(&err);
        ok(l->ops->output_dims(l, 0, se, 2, tb_eb, &so, &err) == MICA_OK &&
           so.nb_dims == 2 && so.d[0] == se[0].d[0],
           "IfConditionalOutput: [2,3] and [N,3] give input 0's dims");
        th_free(&in[1]);
    }
    th_free(&in[0]);
    l->ops->destroy(l);
}

/* ---- runs ------------------------------------------------------------------ */

static void runs(void)
{
    static const double a[] = {1.5, -2, 0, 7, 8, -9};
    static const double b[] = {10, 20, 30, 40, 50, 60};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16,
                                         MICA_BFLOAT16, MICA_INT8, MICA_UINT8,
                                         MICA_INT32, MICA_INT64, MICA_BOOL};
    int k;

    reads("Condition true", 1, 1);
    reads("Condition false", 0, 0);
    {
        static const double v[] = {1, 0};
        th_tensor_t c = th_t(MICA_BOOL, v, 1, 2);
        int64_t got;
        ok(cond_read(CPU, &c, 0, &got) != MICA_OK &&
           strstr(tb_why, "the condition has rank 1 but must be 0-D"),
           "Condition: a 1-D condition refused at READ: %s", tb_why);
        th_free(&c);
        c = th_t(MICA_INT32, v, 0);
        ok(cond_read(CPU, &c, 0, &got) != MICA_OK &&
           strstr(tb_why, "input 0 (the condition) has type int32 but must be "
                  "bool"), "Condition: an int32 condition refused at READ: "
           "%s", tb_why);
        th_free(&c);
    }

    for (k = 0; k < LEN(types); k++) {
        const char *tn = mica_dtype_name(types[k]);
        double av[6], bv[6];
        th_tensor_t x, y;
        char label[128];
        int i;

        /* what each type can hold */
        for (i = 0; i < 6; i++) {
            av[i] = types[k] == MICA_BOOL ? (i % 2)
                  : types[k] == MICA_UINT8 ? i * 3 + 1 : a[i];
            bv[i] = types[k] == MICA_BOOL ? (i % 3 == 0) : b[i];
        }
        x = th_t(types[k], av, 2, 2, 3);
        y = th_t(types[k], bv, 2, 2, 3);
        snprintf(label, sizeof label, "IfConditionalInput %s [2,3] copies",
                 tn);
        BOTH(label, &x, pass(dev, &x));
        snprintf(label, sizeof label, "IfConditionalOutput %s SELECT 0 (true)",
                 tn);
        BOTH(label, &x, choose(dev, &x, &y, 0));
        snprintf(label, sizeof label, "IfConditionalOutput %s SELECT 1 "
                 "(false)", tn);
        BOTH(label, &y, choose(dev, &x, &y, 1));
        th_free(&x);
        th_free(&y);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, a, 2, 2, 3);
        th_tensor_t y = th_t(MICA_FLOAT32, b, 2, 2, 3);
        th_tensor_t w = th_t(MICA_FLOAT32, NULL, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        int64_t i;
        for (i = 0; i < 6; i++)
            th_set(&w, i, -1);
        tb_alias_next = 1;
        BOTH("IfConditionalOutput SELECT 1 with the false value in the "
             "output's memory", &w, choose(dev, &x, &y, 1));
        tb_alias_next = 0;
        th_free(&w);
        w = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        BOTH("IfConditionalOutput SELECT 0 of empty [0,3] values", &w,
             choose(dev, &e, &e, 0));
        BOTH("IfConditionalInput of an empty [0,3]", &w, pass(dev, &e));
        th_free(&w);
        FAILS("IfConditionalOutput SELECT 2", "branch 2 is neither 0 (true) "
              "nor 1 (false)", choose(dev, &x, &y, 2));
        th_free(&x);
        th_free(&y);
        th_free(&e);
    }
}

int main(void)
{
    plan_lazy();
    th_context();
    tb_init();

    questions();
    runs();

    tb_fini();
    return exit_status();
}
