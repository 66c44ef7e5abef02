/*
 * tests/test_pointwise_random.c - the Pointwise layer against the layers
 * it stands for, on random programs: each case draws a DAG of
 * ElementWise, Unary, Activation, Select, Scale and Identity (cast)
 * operations over 1 to 4 inputs of random dtypes (float32, float16,
 * int32, int8, bool; bfloat16, uint8 and int64 through casts) and
 * shapes that broadcast (every dimension the full one or 1, scalars
 * too), with NaN, infinities, zeros, extremes and denormals among the
 * values; builds the network of those layers one by one (the oracle:
 * each layer's CPU reference) and the network of one Pointwise layer
 * with the same program, runs both on the CPU on the same inputs and
 * compares every output bit for bit (NaN against NaN), except where a
 * transcendental function made it: exp, sigmoid and tanh are vector
 * functions a few ulp from the C library's (kit_vec.h), so those
 * outputs within a relative 2e-4 (float16 2e-2) and those a
 * discontinuous op made of them left out, as on CUDA.  Where a GPU is
 * usable, the Pointwise layer on CUDA (NVRTC's kernels) against the same
 * oracle within float tolerance, leaving out the outputs that a
 * discontinuous op (a comparison, floor, a cast to an integer...) makes
 * of a value that a transcendental function computed: there the device's
 * math library may round differently by design.
 *
 * MICA_PW_CASES (default 300) and MICA_PW_SEED (default 1) change the
 * cases drawn.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mica/kit_half.h"

#define MAXV 24
#define MAXR 4

typedef struct val {
    char name[16];
    mica_dtype_t t;
    int32_t rank;
    int64_t d[MAXR];
    int inexact; /* a transcendental function made it (or an operand) */
    int taint;   /* a discontinuous op on an inexact value */
    int live;    /* reads an input (a result may not be of consts alone) */
} val_t;

/* One layer of the unfused network. */
typedef struct op {
    const char *type;
    const char *key, *val;  /* one string param: op, type, dtype, mode */
    int nb_in, in[3];
    double alpha, beta;     /* Activation */
    int axis;               /* Scale */
    int w[3];               /* Scale: weights of shift, scale, power */
    char text[256];         /* the program's line */
} op_t;

typedef struct prog {
    int nb_inputs, nb_vals, nb_ops, nb_out, out[3];
    val_t v[MAXV];
    op_t op[MAXV];
    int nb_w;
    th_tensor_t w[3 * MAXV]; /* Scale's coefficients (the program's w<k>) */
    int nb_cw;
    th_tensor_t cw[MAXV];    /* the Constants of const values */
    int64_t full[MAXR];
    int32_t rank;
} prog_t;

static uint64_t rng_state = 1;

static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static int pick(int n)
{
    return (int)(rnd() % (uint32_t)n);
}

static double unit(void)
{
    return (double)rnd() / 2147483648.0; /* [0, 1) */
}

static int is_float(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_BFLOAT16;
}

static int numeric(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_INT8 ||
           t == MICA_INT32;
}

/* ---- drawing a program ------------------------------------------------- */

static const char *const arith[] = {"sum", "prod", "max", "min", "sub",
                                    "div", "pow", "floor_div"};
static const char *const cmps[] = {"equal", "greater", "less"};
static const char *const logic[] = {"and", "or", "xor"};
/* Unary ops on floats; the first ones are exact (correctly rounded
 * everywhere), from `exp` on not. */
static const char *const unf[] = {
    "sqrt", "recip", "abs", "neg", "ceil", "floor", "sign", "round",
    "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "asin", "acos",
    "atan", "asinh", "acosh", "atanh", "erf"};
#define UNF_EXACT 8
static const char *const acts[] = {
    "relu", "leaky_relu", "clip", "hard_sigmoid", "softsign",
    "thresholded_relu", "sigmoid", "tanh", "elu", "selu", "softplus",
    "scaled_tanh", "gelu_erf", "gelu_tanh"};
#define ACT_EXACT 6
static const mica_dtype_t casts[] = {MICA_FLOAT32, MICA_FLOAT16,
                                     MICA_BFLOAT16, MICA_INT8, MICA_UINT8,
                                     MICA_INT32, MICA_INT64, MICA_BOOL};
static const double params[] = {0, 0.1, 0.5, 1, 2, -1, 6, -0.25};

/* A value of p accepted by ok(t), or -1. */
static int any_of(const prog_t *p, int (*ok)(mica_dtype_t))
{
    int idx[MAXV], n = 0, i;
    for (i = 0; i < p->nb_vals; i++)
        if (ok(p->v[i].t))
            idx[n++] = i;
    return n ? idx[pick(n)] : -1;
}

/* A value of type t (possibly a itself). */
static int same_type(const prog_t *p, mica_dtype_t t)
{
    int idx[MAXV], n = 0, i;
    for (i = 0; i < p->nb_vals; i++)
        if (p->v[i].t == t)
            idx[n++] = i;
    return idx[pick(n)];
}

static int is_bool(mica_dtype_t t) { return t == MICA_BOOL; }
static int is_any(mica_dtype_t t) { (void)t; return 1; }
static int halfs(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}
static int ints(mica_dtype_t t) { return t == MICA_INT8 || t == MICA_INT32; }

/* The shape of a value that broadcasts a and b. */
static void joined(val_t *r, const val_t *a, const val_t *b)
{
    int k;
    r->rank = a->rank;
    for (k = 0; k < a->rank; k++)
        r->d[k] = a->d[k] == 1 ? b->d[k] : a->d[k];
}

static const char *dtn(mica_dtype_t t)
{
    return mica_dtype_name(t);
}

/* Append an op making a new value of type t from operands in[]; NULL
 * type: refused (too many values). */
static op_t *add_op(prog_t *p, const char *type, mica_dtype_t t, int nb,
                    const int *in)
{
    val_t *r;
    op_t *o;
    int k;

    if (p->nb_vals == MAXV)
        return NULL;
    r = &p->v[p->nb_vals];
    o = &p->op[p->nb_ops];
    memset(o, 0, sizeof *o);
    o->type = type;
    o->nb_in = nb;
    o->w[0] = o->w[1] = o->w[2] = -1;
    for (k = 0; k < nb; k++)
        o->in[k] = in[k];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "t%d", p->nb_ops);
    r->t = t;
    r->rank = p->v[in[0]].rank;
    memcpy(r->d, p->v[in[0]].d, sizeof r->d);
    for (k = 1; k < nb; k++)
        joined(r, r, &p->v[in[k]]);
    for (k = 0; k < nb; k++) {
        r->inexact |= p->v[in[k]].inexact;
        r->taint |= p->v[in[k]].taint;
        r->live |= p->v[in[k]].live;
    }
    p->nb_vals++;
    p->nb_ops++;
    return o;
}

/* The name of value i in the program's text. */
static const char *pname(const prog_t *p, int i, char *buf)
{
    if (i < p->nb_inputs)
        snprintf(buf, 16, "in%d", i);
    else
        snprintf(buf, 16, "%s", p->v[i].name);
    return buf;
}

/* Draw one op; 0 when the draw found no operand (try again). */
static double draw_value(mica_dtype_t t);

/* A Constant of one element (the program's const): its value drawn. */
static int draw_const(prog_t *p)
{
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16,
                                         MICA_INT32, MICA_INT8, MICA_BOOL};
    mica_dtype_t t = types[pick(5)];
    int64_t ones[MAXR] = {1, 1, 1, 1};
    val_t *r;
    op_t *o;
    double v;

    if (p->nb_vals == MAXV)
        return 0;
    r = &p->v[p->nb_vals];
    o = &p->op[p->nb_ops];
    memset(o, 0, sizeof *o);
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "t%d", p->nb_ops);
    r->t = t;
    r->rank = p->rank;
    memcpy(r->d, ones, sizeof ones);
    o->type = "Constant";
    o->w[0] = o->w[1] = o->w[2] = -1;
    p->cw[p->nb_cw] = th_tensor(t, p->rank, ones, NULL);
    th_set(&p->cw[p->nb_cw], 0, draw_value(t));
    v = th_get(&p->cw[p->nb_cw], 0); /* as the weights hold it */
    o->w[0] = p->nb_cw++;
    if (is_float(t))
        snprintf(o->text, sizeof o->text, "t%d = const(value=%.17g, "
                 "dtype=%s)", p->nb_ops, v, dtn(t));
    else
        snprintf(o->text, sizeof o->text, "t%d = const(value=%.0f, "
                 "dtype=%s)", p->nb_ops, v, dtn(t));
    p->nb_vals++;
    p->nb_ops++;
    return 1;
}

static int draw_op(prog_t *p)
{
    int a, b, c, in[3], k = pick(10);
    char n0[16], n1[16], n2[16], rn[16];
    const char *ov;
    op_t *o;
    val_t *r;

    if (k == 9)
        return draw_const(p);
    switch (k) {
    case 0: case 1: /* arithmetic */
        if ((a = any_of(p, numeric)) < 0)
            return 0;
        b = same_type(p, p->v[a].t);
        in[0] = a; in[1] = b;
        if (!(o = add_op(p, "ElementWise", p->v[a].t, 2, in)))
            return 0;
        o->key = "op";
        o->val = arith[pick(8)];
        if (!strcmp(o->val, "pow"))
            p->v[p->nb_vals - 1].inexact = 1;
        if (!strcmp(o->val, "floor_div") && is_float(p->v[a].t))
            p->v[p->nb_vals - 1].taint |=
                p->v[a].inexact || p->v[b].inexact;
        break;
    case 2: /* comparison or logic */
        if (pick(3) == 0) {
            if ((a = any_of(p, is_bool)) < 0)
                return 0;
            in[0] = a; in[1] = same_type(p, MICA_BOOL);
            o = add_op(p, "ElementWise", MICA_BOOL, 2, in);
            if (!o)
                return 0;
            o->key = "op";
            o->val = logic[pick(3)];
        } else {
            if ((a = any_of(p, numeric)) < 0)
                return 0;
            in[0] = a; in[1] = b = same_type(p, p->v[a].t);
            if (!(o = add_op(p, "ElementWise", MICA_BOOL, 2, in)))
                return 0;
            o->key = "op";
            o->val = cmps[pick(3)];
            r = &p->v[p->nb_vals - 1];
            r->taint |= r->inexact;
            r->inexact = 0;
        }
        break;
    case 3: /* unary on floats */
        if ((a = any_of(p, halfs)) < 0)
            return 0;
        in[0] = a;
        c = pick((int)(sizeof unf / sizeof unf[0]) + 2);
        if (c >= (int)(sizeof unf / sizeof unf[0])) {
            if (!(o = add_op(p, "Unary", MICA_BOOL, 1, in)))
                return 0;
            o->key = "op";
            o->val = c == (int)(sizeof unf / sizeof unf[0]) ? "isinf"
                                                             : "isnan";
            r = &p->v[p->nb_vals - 1];
            r->taint |= r->inexact;
            r->inexact = 0;
            break;
        }
        if (!(o = add_op(p, "Unary", p->v[a].t, 1, in)))
            return 0;
        o->key = "op";
        o->val = unf[c];
        r = &p->v[p->nb_vals - 1];
        if (c >= 4 && c < UNF_EXACT) /* ceil, floor, sign, round */
            r->taint |= r->inexact;
        if (c >= UNF_EXACT)
            r->inexact = 1;
        break;
    case 4: /* unary on integers and bool */
        if ((a = any_of(p, ints)) >= 0 && pick(2)) {
            in[0] = a;
            if (!(o = add_op(p, "Unary", p->v[a].t, 1, in)))
                return 0;
            o->key = "op";
            o->val = pick(3) == 0 ? "abs" : pick(2) ? "neg" : "sign";
        } else {
            if ((a = any_of(p, is_bool)) < 0)
                return 0;
            in[0] = a;
            if (!(o = add_op(p, "Unary", MICA_BOOL, 1, in)))
                return 0;
            o->key = "op";
            o->val = "not";
        }
        break;
    case 5: /* activation */
        if ((a = any_of(p, halfs)) < 0 || pick(4) == 0) {
            if ((a = any_of(p, ints)) < 0)
                return 0;
            in[0] = a;
            if (!(o = add_op(p, "Activation", p->v[a].t, 1, in)))
                return 0;
            o->key = "type";
            o->val = "relu";
            break;
        }
        in[0] = a;
        if (!(o = add_op(p, "Activation", p->v[a].t, 1, in)))
            return 0;
        o->key = "type";
        c = pick((int)(sizeof acts / sizeof acts[0]));
        o->val = acts[c];
        o->alpha = params[pick(8)];
        o->beta = params[pick(8)];
        if (c >= ACT_EXACT)
            p->v[p->nb_vals - 1].inexact = 1;
        break;
    case 6: /* select */
        if ((c = any_of(p, is_bool)) < 0 || (a = any_of(p, is_any)) < 0)
            return 0;
        in[0] = c; in[1] = a; in[2] = same_type(p, p->v[a].t);
        if (!(o = add_op(p, "Select", p->v[a].t, 3, in)))
            return 0;
        r = &p->v[p->nb_vals - 1];
        r->taint |= p->v[c].inexact;
        break;
    case 7: { /* scale */
        int mode, j, any = 0;
        int64_t kk = 1;
        const val_t *x;
        if ((a = any_of(p, halfs)) < 0)
            return 0;
        x = &p->v[a];
        mode = x->rank ? pick(3) : 0;
        in[0] = a;
        if (!(o = add_op(p, "Scale", x->t, 1, in)))
            return 0;
        o->key = "mode";
        o->val = mode == 0 ? "uniform" : mode == 1 ? "channel"
                                                    : "elementwise";
        o->axis = mode ? pick(x->rank) : 1;
        if (mode == 1)
            kk = x->d[o->axis];
        for (j = o->axis; mode == 2 && j < x->rank; j++)
            kk *= x->d[j];
        if (kk == 0) {
            p->nb_vals--;
            p->nb_ops--;
            return 0;
        }
        for (j = 0; j < 3; j++) {
            int64_t i;
            if (pick(3) == 0 && !(j == 2 && !any))
                continue;
            if (j == 2 && pick(2))
                continue;
            p->w[p->nb_w] = th_tensor(MICA_FLOAT32, 1, &kk, NULL);
            for (i = 0; i < kk; i++)
                th_set(&p->w[p->nb_w], i,
                       j == 2 ? (pick(2) ? 1.0 : 2.0)
                              : (double)(pick(9) - 4) * 0.5);
            o->w[j] = p->nb_w++;
            any = 1;
            if (j == 2)
                p->v[p->nb_vals - 1].inexact = 1;
        }
        break;
    }
    default: { /* cast */
        mica_dtype_t to = casts[pick(8)];
        a = any_of(p, is_any);
        in[0] = a;
        if (!(o = add_op(p, "Identity", to, 1, in)))
            return 0;
        o->key = "dtype";
        o->val = dtn(to);
        r = &p->v[p->nb_vals - 1];
        if (!is_float(to))
            r->taint |= r->inexact;
        break;
    }
    }
    /* the program's line */
    o = &p->op[p->nb_ops - 1];
    r = &p->v[p->nb_vals - 1];
    snprintf(rn, sizeof rn, "%s", r->name);
    ov = o->val;
    pname(p, o->in[0], n0);
    pname(p, o->nb_in > 1 ? o->in[1] : o->in[0], n1);
    pname(p, o->nb_in > 2 ? o->in[2] : o->in[0], n2);
    if (!strcmp(o->type, "ElementWise") || !strcmp(o->type, "Unary"))
        snprintf(o->text, sizeof o->text, "%s = %s(%s%s%s)", rn, ov,
                 n0, o->nb_in > 1 ? ", " : "",
                 o->nb_in > 1 ? n1 : "");
    else if (!strcmp(o->type, "Activation"))
        snprintf(o->text, sizeof o->text, "%s = %s(%s, alpha=%.17g, "
                 "beta=%.17g)", rn, ov, n0,
                 o->alpha, o->beta);
    else if (!strcmp(o->type, "Select"))
        snprintf(o->text, sizeof o->text, "%s = select(%s, %s, %s)", rn,
                 n0, n1,
                 n2);
    else if (!strcmp(o->type, "Identity"))
        snprintf(o->text, sizeof o->text, "%s = cast(%s, dtype=%s)", rn,
                 n0, ov);
    else {
        size_t n = (size_t)snprintf(o->text, sizeof o->text,
                                    "%s = scale(%s, mode=%s, axis=%d",
                                    rn, n0, ov,
                                    o->axis);
        static const char *const roles[] = {"shift", "scale", "power"};
        int j;
        for (j = 0; j < 3; j++)
            if (o->w[j] >= 0)
                n += (size_t)snprintf(o->text + n, sizeof o->text - n,
                                      ", %s=w%d", roles[j], o->w[j]);
        snprintf(o->text + n, sizeof o->text - n, ")");
    }
    return 1;
}

static const mica_dtype_t input_types[] = {
    MICA_FLOAT32, MICA_FLOAT32, MICA_FLOAT32, MICA_FLOAT16, MICA_FLOAT16,
    MICA_INT32, MICA_INT8, MICA_BOOL};

static void draw(prog_t *p, int big)
{
    int k, i, n;

    memset(p, 0, sizeof *p);
    p->rank = big ? 2 + pick(2) : pick(MAXR + 1);
    for (k = 0; k < p->rank; k++)
        p->full[k] = big ? 7 + pick(40) : 1 + pick(4);
    if (!big && p->rank && pick(25) == 0)
        p->full[pick(p->rank)] = 0; /* an empty tensor */
    p->nb_inputs = 1 + pick(4);
    for (i = 0; i < p->nb_inputs; i++) {
        val_t *v = &p->v[i];
        snprintf(v->name, sizeof v->name, "x%d", i);
        v->t = input_types[pick(8)];
        v->live = 1;
        v->rank = p->rank;
        for (k = 0; k < p->rank; k++)
            v->d[k] = i == 0 || pick(2) ? p->full[k] : 1;
    }
    p->nb_vals = p->nb_inputs;
    n = 1 + pick(8);
    for (i = 0; i < 200 && p->nb_ops < n; i++)
        draw_op(p);
    if (p->nb_ops == 0) { /* a cast always finds an operand */
        while (!draw_op(p))
            ;
    }
    /* results: the last value that reads an input, and up to two more
     * (a cast of an input where no op reads one) */
    for (i = p->nb_vals - 1; i >= p->nb_inputs && !p->v[i].live; i--)
        ;
    if (i < p->nb_inputs) {
        if (p->nb_vals == MAXV)
            p->nb_vals--, p->nb_ops--; /* room for the cast */
        while (!draw_op(p) || !p->v[p->nb_vals - 1].live)
            if (p->nb_vals > p->nb_inputs + 1 &&
                !p->v[p->nb_vals - 1].live)
                p->nb_vals--, p->nb_ops--;
        i = p->nb_vals - 1;
    }
    p->out[p->nb_out++] = i;
    for (i = 0; i < 2; i++) {
        int v = p->nb_inputs + pick(p->nb_ops), j, dup = 0;
        for (j = 0; j < p->nb_out; j++)
            dup |= p->out[j] == v;
        if (!dup && p->v[v].live && pick(2))
            p->out[p->nb_out++] = v;
    }
}

/* ---- values ---------------------------------------------------------------- */

static double draw_float(mica_dtype_t t)
{
    int k = pick(100);
    if (k < 2) return NAN;
    if (k < 4) return INFINITY;
    if (k < 6) return -INFINITY;
    if (k < 8) return 0.0;
    if (k < 9) return -0.0;
    if (k < 11) return t == MICA_FLOAT16 ? 60000.0 * (pick(2) ? 1 : -1)
                                         : 1e30 * (pick(2) ? 1 : -1);
    if (k < 12) return t == MICA_FLOAT16 ? 1e-6 : 1e-40;
    if (k < 30) return (double)(pick(13) - 6) * 0.5; /* halves: ties */
    return (unit() * 6.0 - 3.0);
}

static double draw_value(mica_dtype_t t)
{
    int k = pick(20);
    switch (t) {
    case MICA_INT32:
        if (k == 0) return 2147483647.0;
        if (k == 1) return -2147483648.0;
        if (k == 2) return 65536.0 * (pick(2) ? 1 : -1);
        return (double)(pick(21) - 10);
    case MICA_INT8:
        if (k == 0) return 127.0;
        if (k == 1) return -128.0;
        return (double)(pick(21) - 10);
    case MICA_BOOL:
        return (double)pick(2);
    default:
        return draw_float(t);
    }
}

/* ---- networks --------------------------------------------------------- */

static void fail_ctx(const char *what)
{
    diag("%s: %s", what, mica_context_error(th_context()));
}

/* Add the inputs of p to net; 0 on failure. */
static int add_inputs(mica_network_t *net, const prog_t *p)
{
    int i;
    for (i = 0; i < p->nb_inputs; i++) {
        mica_dims_t d;
        memset(&d, 0, sizeof d);
        d.nb_dims = p->v[i].rank;
        memcpy(d.d, p->v[i].d, sizeof p->v[i].d);
        if (mica_network_add_input(net, p->v[i].name, p->v[i].t, &d, NULL) !=
            MICA_OK)
            return 0;
    }
    return 1;
}

static int mark_outputs(mica_network_t *net, const prog_t *p)
{
    int j;
    for (j = 0; j < p->nb_out; j++)
        if (mica_network_mark_output(net, p->v[p->out[j]].name, NULL) !=
            MICA_OK)
            return 0;
    return 1;
}

/* The layers one by one. */
static mica_network_t *unfused(const prog_t *p)
{
    mica_network_t *net = NULL;
    int i, k;

    if (mica_network_create(th_context(), &net) != MICA_OK ||
        !add_inputs(net, p))
        goto fail;
    for (i = 0; i < p->nb_ops; i++) {
        const op_t *o = &p->op[i];
        const char *ins[3];
        const char *outs[1] = {p->v[p->nb_inputs + i].name};
        char lname[16];
        th_fields_t *f = th_fields();
        mica_layer_spec_t spec;
        mica_status_t st;
        static const char *const roles[] = {"shift", "scale", "power"};

        for (k = 0; k < o->nb_in; k++)
            ins[k] = p->v[o->in[k]].name;
        if (o->key)
            th_f_str(f, o->key, o->val);
        if (!strcmp(o->type, "Activation")) {
            th_f_float(f, "alpha", o->alpha);
            th_f_float(f, "beta", o->beta);
        }
        if (!strcmp(o->type, "Constant"))
            th_f_weights(f, "weights", &p->cw[o->w[0]]);
        if (!strcmp(o->type, "Scale")) {
            th_f_int(f, "channel_axis", o->axis);
            for (k = 0; k < 3; k++)
                if (o->w[k] >= 0)
                    th_f_weights(f, roles[k], &p->w[o->w[k]]);
        }
        snprintf(lname, sizeof lname, "l%d", i);
        memset(&spec, 0, sizeof spec);
        spec.struct_size = sizeof spec;
        spec.name = lname;
        spec.type = o->type;
        spec.nb_inputs = o->nb_in;
        spec.inputs = ins;
        spec.nb_outputs = 1;
        spec.outputs = outs;
        spec.fields = th_fields_view(f);
        st = mica_network_add_layer(net, &spec);
        th_fields_free(f);
        if (st != MICA_OK)
            goto fail;
    }
    if (!mark_outputs(net, p))
        goto fail;
    return net;
fail:
    fail_ctx("the unfused network");
    mica_network_destroy(net);
    return NULL;
}

/* One Pointwise layer. */
static mica_network_t *fused(const prog_t *p)
{
    mica_network_t *net = NULL;
    const char *lines[MAXV], *results[3], *ins[4], *outs[3];
    th_fields_t *f;
    mica_layer_spec_t spec;
    char rn[3][16];
    mica_status_t st;
    int i;

    if (mica_network_create(th_context(), &net) != MICA_OK ||
        !add_inputs(net, p))
        goto fail;
    for (i = 0; i < p->nb_ops; i++)
        lines[i] = p->op[i].text;
    for (i = 0; i < p->nb_out; i++) {
        results[i] = pname(p, p->out[i], rn[i]);
        outs[i] = p->v[p->out[i]].name;
    }
    for (i = 0; i < p->nb_inputs; i++)
        ins[i] = p->v[i].name;
    f = th_fields();
    th_f_strs(f, "program", p->nb_ops, lines);
    th_f_strs(f, "results", p->nb_out, results);
    if (p->nb_w)
        th_f_weights_list(f, "weights", p->nb_w, p->w);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "pointwise";
    spec.type = "Pointwise";
    spec.nb_inputs = p->nb_inputs;
    spec.inputs = ins;
    spec.nb_outputs = p->nb_out;
    spec.outputs = outs;
    spec.fields = th_fields_view(f);
    st = mica_network_add_layer(net, &spec);
    th_fields_free(f);
    if (st != MICA_OK || !mark_outputs(net, p))
        goto fail;
    return net;
fail:
    fail_ctx("the Pointwise network");
    mica_network_destroy(net);
    return NULL;
}

static const char *const oracle_types[] = {
    "ElementWise", "Unary", "Activation", "Select", "Scale", "Identity",
};
static const char *const oracle_impls[] = {
    "reference", "reference", "reference", "reference", "reference",
    "reference",
};

/* Build net for device and run it on inputs x; outputs into y[]. */
static int run(mica_network_t *net, uint32_t device, const prog_t *p,
               const th_tensor_t *x, th_tensor_t *y)
{
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_exec_t *ex = NULL;
    int i, good = 0;

    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.no_fusion = 1;
    if (device == MICA_DEVICE_CPU) {
        /* the oracle is each layer's reference, not its faster CPU
         * implementation (vec: transcendental functions within ulps) */
        cfg.nb_prefer = (int32_t)(sizeof oracle_types / sizeof *oracle_types);
        cfg.prefer_types = oracle_types;
        cfg.prefer_impls = oracle_impls;
    }
    if (mica_engine_build(net, &cfg, &e) != MICA_OK ||
        mica_exec_create(e, &ex) != MICA_OK) {
        fail_ctx("build");
        goto done;
    }
    for (i = 0; i < p->nb_inputs; i++)
        if (mica_exec_set_input(ex, p->v[i].name, &x[i].dims, x[i].data) !=
            MICA_OK) {
            fail_ctx("input");
            goto done;
        }
    if (mica_exec_run(ex) != MICA_OK) {
        fail_ctx("run");
        goto done;
    }
    for (i = 0; i < p->nb_out; i++) {
        mica_tensor_desc_t d;
        const void *data;
        if (mica_exec_get_output(ex, p->v[p->out[i]].name, &d, &data) !=
            MICA_OK) {
            fail_ctx("output");
            goto done;
        }
        y[i] = th_tensor(d.dtype, d.dims.nb_dims, d.dims.d, NULL);
        memcpy(y[i].data, data,
               (size_t)th_volume(&y[i]) * mica_dtype_size(d.dtype));
    }
    good = 1;
done:
    mica_exec_destroy(ex);
    mica_engine_destroy(e);
    return good;
}

static void show(const prog_t *p)
{
    int i;
    for (i = 0; i < p->nb_inputs; i++) {
        char d[64];
        size_t n = 0;
        int k;
        for (k = 0; k < p->v[i].rank; k++)
            n += (size_t)snprintf(d + n, sizeof d - n, "%s%lld", k ? "," : "",
                                  (long long)p->v[i].d[k]);
        diag("  in%d: %s [%s]", i, dtn(p->v[i].t), p->v[i].rank ? d : "");
    }
    for (i = 0; i < p->nb_ops; i++)
        diag("  %s", p->op[i].text);
    for (i = 0; i < p->nb_out; i++)
        diag("  result %d: %s", i, p->v[p->out[i]].name);
}

int main(void)
{
    const char *e = getenv("MICA_PW_CASES"), *s = getenv("MICA_PW_SEED");
    int cases = e ? atoi(e) : 300, c, cuda = th_cuda(), bad = 0;

    rng_state = s ? (uint64_t)strtoull(s, NULL, 10) : 1;
    plan_lazy();
    for (c = 0; c < cases; c++) {
        prog_t p;
        th_tensor_t x[4], ya[3], yb[3], yc[3];
        mica_network_t *na, *nb;
        int i, j, good = 1;
        char why[256];

        draw(&p, c % 20 == 19);
        for (i = 0; i < p.nb_inputs; i++) {
            int64_t k, n;
            x[i] = th_tensor(p.v[i].t, p.v[i].rank, p.v[i].d, NULL);
            n = th_volume(&x[i]);
            for (k = 0; k < n; k++)
                th_set(&x[i], k, draw_value(p.v[i].t));
        }
        memset(ya, 0, sizeof ya);
        memset(yb, 0, sizeof yb);
        memset(yc, 0, sizeof yc);
        na = unfused(&p);
        nb = fused(&p);
        good = na && nb && run(na, MICA_DEVICE_CPU, &p, x, ya) &&
               run(nb, MICA_DEVICE_CPU, &p, x, yb);
        for (j = 0; good && j < p.nb_out; j++) {
            const val_t *v = &p.v[p.out[j]];
            double tol = v->t == MICA_FLOAT16 || v->t == MICA_BFLOAT16
                             ? 2e-2 : 2e-4;
            if (v->taint)
                continue; /* a vector exp's ulp may cross a step */
            if (!th_same(&ya[j], &yb[j], v->inexact ? tol : 0,
                         v->inexact ? tol : 0, why, sizeof why)) {
                diag("output %d (%s): %s", j, v->name, why);
                good = 0;
            }
        }
        if (!ok(good, "case %d: %d ops, %d inputs, %d outputs, CPU", c,
                p.nb_ops, p.nb_inputs, p.nb_out))
            show(&p);
        bad += !good;
        if (cuda && good) {
            int gg = run(nb, MICA_DEVICE_CUDA, &p, x, yc);
            for (j = 0; gg && j < p.nb_out; j++) {
                const val_t *v = &p.v[p.out[j]];
                double tol = v->t == MICA_FLOAT16 || v->t == MICA_BFLOAT16
                                 ? 2e-2 : 2e-3;
                if (v->taint)
                    continue; /* the device's math may round otherwise */
                if (!th_same(&ya[j], &yc[j], v->inexact ? tol : 0,
                             v->inexact ? tol : 0, why, sizeof why)) {
                    diag("output %d (%s): %s", j, v->name, why);
                    gg = 0;
                }
            }
            if (!ok(gg, "case %d: CUDA against the layers on the CPU", c))
                show(&p);
        }
        for (i = 0; i < p.nb_inputs; i++)
            th_free(&x[i]);
        for (j = 0; j < 3; j++) {
            th_free(&ya[j]);
            th_free(&yb[j]);
            th_free(&yc[j]);
        }
        for (j = 0; j < p.nb_w; j++)
            th_free(&p.w[j]);
        for (j = 0; j < p.nb_cw; j++)
            th_free(&p.cw[j]);
        mica_network_destroy(na);
        mica_network_destroy(nb);
        if (bad > 10)
            bail("more than 10 cases differ");
    }
    if (!cuda)
        skip("CUDA against the CPU: no usable GPU");
    return exit_status();
}
