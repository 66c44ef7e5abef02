/*
 * modules/pointwise/pw_prog.c - a Pointwise layer's program: its text
 * parsed, its types, its structure (see pointwise.h and the Pointwise
 * section of docs/manifest.md for the language).
 *
 * The text is untrusted (a manifest's, an engine file's): every line is
 * read within its length, every name and number checked, and a line that
 * does not parse is one message naming the line.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "activation.h"
#include "elementwise.h"
#include "pointwise.h"
#include "unary.h"

/* ---- the ops ------------------------------------------------------------ */

typedef struct op_def {
    const char *name;
    int32_t kind, op, nb_args;
} op_def_t;

/* Every op, by the name of its layer's enum value (ElementWise's `op`,
 * Unary's `op`, Activation's `type`); the three families' names do not
 * overlap. */
static const op_def_t ops[] = {
    {"sum", PW_EW, MICA__EW_SUM, 2},
    {"prod", PW_EW, MICA__EW_PROD, 2},
    {"max", PW_EW, MICA__EW_MAX, 2},
    {"min", PW_EW, MICA__EW_MIN, 2},
    {"sub", PW_EW, MICA__EW_SUB, 2},
    {"div", PW_EW, MICA__EW_DIV, 2},
    {"pow", PW_EW, MICA__EW_POW, 2},
    {"floor_div", PW_EW, MICA__EW_FLOOR_DIV, 2},
    {"and", PW_EW, MICA__EW_AND, 2},
    {"or", PW_EW, MICA__EW_OR, 2},
    {"xor", PW_EW, MICA__EW_XOR, 2},
    {"equal", PW_EW, MICA__EW_EQUAL, 2},
    {"greater", PW_EW, MICA__EW_GREATER, 2},
    {"less", PW_EW, MICA__EW_LESS, 2},
    {"exp", PW_UN, MICA__UN_EXP, 1},
    {"log", PW_UN, MICA__UN_LOG, 1},
    {"sqrt", PW_UN, MICA__UN_SQRT, 1},
    {"recip", PW_UN, MICA__UN_RECIP, 1},
    {"abs", PW_UN, MICA__UN_ABS, 1},
    {"neg", PW_UN, MICA__UN_NEG, 1},
    {"sin", PW_UN, MICA__UN_SIN, 1},
    {"cos", PW_UN, MICA__UN_COS, 1},
    {"tan", PW_UN, MICA__UN_TAN, 1},
    {"sinh", PW_UN, MICA__UN_SINH, 1},
    {"cosh", PW_UN, MICA__UN_COSH, 1},
    {"asin", PW_UN, MICA__UN_ASIN, 1},
    {"acos", PW_UN, MICA__UN_ACOS, 1},
    {"atan", PW_UN, MICA__UN_ATAN, 1},
    {"asinh", PW_UN, MICA__UN_ASINH, 1},
    {"acosh", PW_UN, MICA__UN_ACOSH, 1},
    {"atanh", PW_UN, MICA__UN_ATANH, 1},
    {"ceil", PW_UN, MICA__UN_CEIL, 1},
    {"floor", PW_UN, MICA__UN_FLOOR, 1},
    {"erf", PW_UN, MICA__UN_ERF, 1},
    {"not", PW_UN, MICA__UN_NOT, 1},
    {"sign", PW_UN, MICA__UN_SIGN, 1},
    {"round", PW_UN, MICA__UN_ROUND, 1},
    {"isinf", PW_UN, MICA__UN_ISINF, 1},
    {"isnan", PW_UN, MICA__UN_ISNAN, 1},
    {"relu", PW_ACT, MICA__ACT_RELU, 1},
    {"sigmoid", PW_ACT, MICA__ACT_SIGMOID, 1},
    {"tanh", PW_ACT, MICA__ACT_TANH, 1},
    {"leaky_relu", PW_ACT, MICA__ACT_LEAKY_RELU, 1},
    {"elu", PW_ACT, MICA__ACT_ELU, 1},
    {"selu", PW_ACT, MICA__ACT_SELU, 1},
    {"softsign", PW_ACT, MICA__ACT_SOFTSIGN, 1},
    {"softplus", PW_ACT, MICA__ACT_SOFTPLUS, 1},
    {"clip", PW_ACT, MICA__ACT_CLIP, 1},
    {"hard_sigmoid", PW_ACT, MICA__ACT_HARD_SIGMOID, 1},
    {"scaled_tanh", PW_ACT, MICA__ACT_SCALED_TANH, 1},
    {"thresholded_relu", PW_ACT, MICA__ACT_THRESHOLDED_RELU, 1},
    {"gelu_erf", PW_ACT, MICA__ACT_GELU_ERF, 1},
    {"gelu_tanh", PW_ACT, MICA__ACT_GELU_TANH, 1},
    {"select", PW_SELECT, 0, 3},
    {"scale", PW_SCALE, 0, 1},
    {"cast", PW_CAST, 0, 1},
    {"const", PW_CONST, 0, 0},
};

static const char *const mode_names[] = {"uniform", "channel",
                                         "elementwise"};
static const char *const role_names[] = {"shift", "scale", "power"};

const char *pw_op_name(const pw_ins_t *ins)
{
    size_t i;
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].kind == ins->kind &&
            (ins->kind >= PW_SELECT || ops[i].op == ins->op))
            return ops[i].name;
    return "?";
}

/* ---- the text ----------------------------------------------------------- */

/* The longest name and line the language takes. */
#define NAME_MAX_ 64
#define LINE_MAX_ 4096

/* One line being read. */
typedef struct lex {
    const char *s;
    size_t i, n;
    int32_t line;       /* 1-based, for messages */
    const char *text;   /* the whole line */
    mica_error_t *err;
} lex_t;

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static void skip_ws(lex_t *x)
{
    while (x->i < x->n && (x->s[x->i] == ' ' || x->s[x->i] == '\t'))
        x->i++;
}

/* Fail on line x with a message (printf-style after the line's text). */
static mica_status_t bad(lex_t *x, const char *fmt, ...)
    MICA_PRINTF(2, 3);
static mica_status_t bad(lex_t *x, const char *fmt, ...)
{
    char what[512], shown[96];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* the line as written, shortened for the message */
    snprintf(shown, sizeof shown, "%.*s%s", 80, x->text,
             strlen(x->text) > 80 ? "..." : "");
    return MICA_KIT_FAIL(x->err, "param 'program': line %d ('%s'): %s",
                         (int)x->line, shown, what);
}

/* An identifier into buf (NAME_MAX_ bytes): its length, 0 if none. */
static size_t ident(lex_t *x, char *buf)
{
    size_t k = 0;
    skip_ws(x);
    if (x->i >= x->n || !is_alpha(x->s[x->i]))
        return 0;
    while (x->i < x->n && (is_alpha(x->s[x->i]) || is_digit(x->s[x->i]))) {
        if (k + 1 >= NAME_MAX_)
            return 0;
        buf[k++] = x->s[x->i++];
    }
    buf[k] = '\0';
    return k;
}

/* A param's value: the characters up to ',' ')' or a blank. */
static size_t token(lex_t *x, char *buf)
{
    size_t k = 0;
    skip_ws(x);
    while (x->i < x->n && x->s[x->i] != ',' && x->s[x->i] != ')' &&
           x->s[x->i] != ' ' && x->s[x->i] != '\t') {
        if (k + 1 >= NAME_MAX_)
            return 0;
        buf[k++] = x->s[x->i++];
    }
    buf[k] = '\0';
    return k;
}

static int accept(lex_t *x, char c)
{
    skip_ws(x);
    if (x->i < x->n && x->s[x->i] == c) {
        x->i++;
        return 1;
    }
    return 0;
}

/* n >= 0 written as "<prefix><digits>" (no sign, no leading zeros), or
 * -1. */
static int64_t numbered(const char *s, const char *prefix)
{
    size_t lp = strlen(prefix), i;
    int64_t v = 0;

    if (strncmp(s, prefix, lp) != 0 || !s[lp] ||
        (s[lp] == '0' && s[lp + 1]))
        return -1;
    for (i = lp; s[i]; i++) {
        if (!is_digit(s[i]) || v > 100000000)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The value named `s` among the first nb instructions, or INT32_MIN. */
static int32_t lookup(const pw_prog_t *p, int32_t nb, const char *s)
{
    int64_t k = numbered(s, "in");
    int32_t i;

    if (k >= 0)
        return k < PW_MAX_INPUTS ? PW_INPUT(k) : INT32_MIN;
    for (i = 0; i < nb; i++)
        if (strcmp(p->name[i], s) == 0)
            return i;
    return INT32_MIN;
}

/* A finite float32 written in full. */
static int parse_float(const char *t, float *out)
{
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end || !isfinite(v) || fabs(v) > 3.4028234663852886e38)
        return 0;
    *out = (float)v;
    return 1;
}

/* The dtype named t (as the host names them), or -1. */
static int32_t parse_dtype(const char *t)
{
    int32_t d;
    for (d = 0; d < MICA_DTYPE_COUNT_; d++)
        if (strcmp(mica_kit_host->dtype_name((mica_dtype_t)d), t) == 0)
            return d;
    return -1;
}

/* One named param `key` = `val` of instruction ins (a const's value
 * into value[], read once its dtype is known). */
static mica_status_t named(lex_t *x, const pw_prog_t *p, pw_ins_t *ins,
                           const char *op, const char *key, const char *val,
                           uint32_t *seen, char *value)
{
    int32_t j, slot = -1;
    int64_t w;

    if (ins->kind == PW_ACT && !strcmp(key, "alpha"))
        slot = 0;
    else if (ins->kind == PW_ACT && !strcmp(key, "beta"))
        slot = 1;
    else if (ins->kind == PW_SCALE && !strcmp(key, "mode"))
        slot = 2;
    else if (ins->kind == PW_SCALE && !strcmp(key, "axis"))
        slot = 3;
    else if ((ins->kind == PW_CAST || ins->kind == PW_CONST) &&
             !strcmp(key, "dtype"))
        slot = 4;
    else if (ins->kind == PW_CONST && !strcmp(key, "value"))
        slot = 8;
    for (j = 0; j < 3 && slot < 0; j++)
        if (ins->kind == PW_SCALE && !strcmp(key, role_names[j]))
            slot = 5 + j;
    if (slot < 0)
        return bad(x, "op '%s' has no param '%s'", op, key);
    if (*seen & (1u << slot))
        return bad(x, "param '%s' is given twice", key);
    *seen |= 1u << slot;
    switch (slot) {
    case 0: case 1:
        if (!parse_float(val, slot ? &ins->beta : &ins->alpha))
            return bad(x, "'%s' must be a finite float32, got '%s'", key,
                       val);
        return MICA_OK;
    case 2:
        for (j = 0; j < 3; j++)
            if (!strcmp(val, mode_names[j]))
                break;
        if (j == 3)
            return bad(x, "'mode' is '%s': one of uniform, channel, "
                       "elementwise", val);
        ins->op = j;
        return MICA_OK;
    case 3:
        w = numbered(val, "");
        if (w < 0 || w >= MICA_MAX_DIMS)
            return bad(x, "'axis' is '%s': it must lie in [0, %d]", val,
                       MICA_MAX_DIMS - 1);
        ins->axis = (int32_t)w;
        return MICA_OK;
    case 4:
        if ((ins->op = parse_dtype(val)) < 0 ||
            !mica_kit_any_type((mica_dtype_t)ins->op))
            return bad(x, "'dtype' is '%s': one of float32, float16, "
                       "bfloat16, int8, uint8, int32, int64, bool", val);
        return MICA_OK;
    case 8:
        snprintf(value, NAME_MAX_, "%s", val);
        return MICA_OK;
    default:
        w = numbered(val, "w");
        if (p->nb_w == 0)
            return bad(x, "'%s' is '%s' but param 'weights' gives none",
                       key, val);
        if (w < 0 || w >= p->nb_w)
            return bad(x, "'%s' is '%s': name weights w0..w%d of param "
                       "'weights'", key, val, (int)p->nb_w - 1);
        ins->w[slot - 5] = (int32_t)w;
        return MICA_OK;
    }
}

/* A const's value `t` for its dtype: a float (decimal, hexadecimal,
 * nan, inf) rounded to it, or an integer (bool: 0 or 1) within it. */
static mica_status_t const_value(lex_t *x, pw_ins_t *ins, const char *t)
{
    mica_dtype_t d = (mica_dtype_t)ins->op;
    char *end;
    double v;
    long long i;

    if (pw_is_float(d)) {
        v = strtod(t, &end);
        if (end == t || *end)
            return bad(x, "'value' is '%s': not a number", t);
        ins->fval = d == MICA_FLOAT16
                        ? mica_kit_half_to_float(
                              mica_kit_float_to_half((float)v))
                    : d == MICA_BFLOAT16
                        ? mica_kit_bf16_to_float(
                              mica_kit_float_to_bf16((float)v))
                        : (float)v;
        return MICA_OK;
    }
    errno = 0;
    i = strtoll(t, &end, 10);
    if (end == t || *end || errno ||
        (d == MICA_INT8 && (i < -128 || i > 127)) ||
        (d == MICA_UINT8 && (i < 0 || i > 255)) ||
        (d == MICA_INT32 && (i < INT32_MIN || i > INT32_MAX)) ||
        (d == MICA_BOOL && i != 0 && i != 1))
        return bad(x, "'value' is '%s': not an integer of type %s", t,
                   mica_kit_host->dtype_name(d));
    ins->ival = i;
    return MICA_OK;
}

/* Line `text` as instruction number nb of p. */
static mica_status_t parse_line(pw_prog_t *p, int32_t nb, const char *text,
                                mica_error_t *err)
{
    lex_t x;
    char name[NAME_MAX_], op[NAME_MAX_], a[NAME_MAX_], v[NAME_MAX_];
    char value[NAME_MAX_] = "";
    pw_ins_t *ins = &p->ins[nb];
    const op_def_t *def = NULL;
    uint32_t seen = 0;
    int32_t nargs = 0;
    int any = 0;
    size_t i;

    memset(&x, 0, sizeof x);
    x.s = x.text = text;
    x.n = strlen(text);
    x.line = nb + 1;
    x.err = err;
    if (x.n > LINE_MAX_)
        return bad(&x, "longer than %d characters", LINE_MAX_);
    memset(ins, 0, sizeof *ins);
    ins->w[0] = ins->w[1] = ins->w[2] = -1;
    ins->axis = 1;
    if (!ident(&x, name))
        return bad(&x, "expected 'NAME = OP(ARGS)' (a NAME of letters, "
                   "digits and '_', at most %d)", NAME_MAX_ - 1);
    if (numbered(name, "in") >= 0 || numbered(name, "w") >= 0)
        return bad(&x, "'%s' is reserved (inputs are in0, in1..., weights "
                   "w0, w1...)", name);
    if (lookup(p, nb, name) != INT32_MIN)
        return bad(&x, "'%s' is defined twice", name);
    if (!accept(&x, '='))
        return bad(&x, "expected '=' after '%s'", name);
    if (!ident(&x, op))
        return bad(&x, "expected an op after '='");
    for (i = 0; i < sizeof ops / sizeof ops[0] && !def; i++)
        if (!strcmp(ops[i].name, op))
            def = &ops[i];
    if (!def)
        return bad(&x, "unknown op '%s'", op);
    ins->kind = def->kind;
    ins->op = def->op;
    ins->op = ins->kind == PW_CAST || ins->kind == PW_CONST ? -1 : ins->op;
    if (!accept(&x, '('))
        return bad(&x, "expected '(' after '%s'", op);
    while (!accept(&x, ')')) {
        if (any && !accept(&x, ','))
            return bad(&x, "expected ',' or ')'");
        any = 1;
        if (!ident(&x, a))
            return bad(&x, "expected a value or a NAME=VALUE param");
        if (accept(&x, '=')) {
            mica_status_t st;
            if (!token(&x, v))
                return bad(&x, "expected a value after '%s='", a);
            if ((st = named(&x, p, ins, op, a, v, &seen, value)) !=
                MICA_OK)
                return st;
            continue;
        }
        if (seen)
            return bad(&x, "operand '%s' after a NAME=VALUE param", a);
        if (nargs == def->nb_args)
            return bad(&x, "op '%s' takes %d operand%s", op,
                       (int)def->nb_args, def->nb_args == 1 ? "" : "s");
        if ((ins->arg[nargs] = lookup(p, nb, a)) == INT32_MIN) {
            if (numbered(a, "in") >= 0)
                return bad(&x, "input '%s' is beyond the %d a layer may "
                           "have", a, PW_MAX_INPUTS);
            return bad(&x, "'%s' is not defined before this line", a);
        }
        nargs++;
    }
    skip_ws(&x);
    if (x.i != x.n)
        return bad(&x, "unexpected '%s' after ')'", x.s + x.i);
    if (nargs != def->nb_args)
        return bad(&x, "op '%s' takes %d operand%s, got %d", op,
                   (int)def->nb_args, def->nb_args == 1 ? "" : "s",
                   (int)nargs);
    if (ins->kind == PW_CAST && ins->op < 0)
        return bad(&x, "cast needs its 'dtype'");
    if (ins->kind == PW_CONST) {
        mica_status_t st;
        if (ins->op < 0 || !value[0])
            return bad(&x, "const needs its 'value' and 'dtype'");
        if ((st = const_value(&x, ins, value)) != MICA_OK)
            return st;
    }
    ins->nb_args = nargs;
    if (!(p->name[nb] = malloc(strlen(name) + 1)))
        return MICA_KIT_FAIL(err, "out of host memory");
    strcpy(p->name[nb], name);
    return MICA_OK;
}

/* ---- weights (Scale's coefficients) ------------------------------------- */

/* Weights w as float32 into p->coef[j]. */
static mica_status_t load_weights(pw_prog_t *p, int32_t j,
                                  const mica_weights_t *w, mica_error_t *err)
{
    int64_t i, n = w->count;

    if (w->dtype != MICA_FLOAT32 && w->dtype != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "param 'weights': w%d has dtype %s: "
                             "float32 or float16", (int)j,
                             mica_kit_host->dtype_name(w->dtype));
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(float) / 2)
        return MICA_KIT_FAIL(err, "param 'weights': w%d has %lld values",
                             (int)j, (long long)n);
    p->coef_n[j] = n;
    if (!(p->coef[j] = malloc((size_t)(n ? n : 1) * sizeof(float))))
        return MICA_KIT_FAIL(err, "out of host memory for %lld "
                             "coefficients", (long long)n);
    for (i = 0; i < n; i++)
        p->coef[j][i] = w->dtype == MICA_FLOAT16
                            ? mica_kit_half_to_float(
                                  ((const uint16_t *)w->values)[i])
                            : ((const float *)w->values)[i];
    return MICA_OK;
}

/* Scale instruction i's coefficient counts, as Scale checks them. */
static mica_status_t scale_counts(pw_prog_t *p, int32_t i,
                                  mica_error_t *err)
{
    pw_ins_t *ins = &p->ins[i];
    int32_t j, first = -1;
    int64_t k;

    ins->k = 0;
    for (j = 0; j < 3; j++) {
        if (ins->w[j] < 0)
            continue;
        if (p->coef_n[ins->w[j]] == 0) {
            ins->w[j] = -1; /* empty: as if left out */
            continue;
        }
        if (ins->op == PW_UNIFORM && p->coef_n[ins->w[j]] != 1)
            return MICA_KIT_FAIL(err, "param 'program': line %d (%s): '%s' "
                                 "has %lld values but mode 'uniform' takes "
                                 "1", (int)i + 1, p->name[i], role_names[j],
                                 (long long)p->coef_n[ins->w[j]]);
        if (first >= 0 && p->coef_n[ins->w[j]] != ins->k)
            return MICA_KIT_FAIL(err, "param 'program': line %d (%s): '%s' "
                                 "has %lld values but '%s' has %lld",
                                 (int)i + 1, p->name[i], role_names[j],
                                 (long long)p->coef_n[ins->w[j]],
                                 role_names[first], (long long)ins->k);
        if (first < 0) {
            first = j;
            ins->k = p->coef_n[ins->w[j]];
        }
        if (j == 2)
            for (k = 0; k < ins->k; k++)
                if (p->coef[ins->w[2]][k] != 1.0f)
                    ins->use_power = 1;
    }
    if (ins->op == PW_UNIFORM)
        ins->axis = 0;
    return MICA_OK;
}

/* ---- structure: classes and leaves ------------------------------------- */

static uint64_t dep_of(const pw_prog_t *p, int32_t v)
{
    return PW_IS_INPUT(v) ? (uint64_t)1 << PW_INPUT_OF(v) : p->dep[v];
}

/* Class c's instructions, inputs and coefficients (its leaves). */
static mica_status_t class_leaves(pw_prog_t *p, pw_cls_t *c,
                                  mica_error_t *err)
{
    int32_t i, j, k, r;

    for (k = 0; k < PW_MAX_INPUTS; k++)
        c->in_leaf[k] = -1;
    /* what its outputs need, backwards */
    for (j = 0; j < c->nb_out; j++) {
        int32_t v = p->out[c->out[j]];
        if (!PW_IS_INPUT(v))
            c->need[v] = 1;
    }
    for (i = p->nb_ins - 1; i >= 0; i--)
        for (j = 0; c->need[i] && j < p->ins[i].nb_args; j++)
            if (!PW_IS_INPUT(p->ins[i].arg[j]))
                c->need[p->ins[i].arg[j]] = 1;
    for (k = 0; k < PW_MAX_INPUTS; k++) {
        if (!(c->mask & ((uint64_t)1 << k)))
            continue;
        if (c->nb_leaves == PW_MAX_LEAVES)
            goto many;
        c->in_leaf[k] = c->nb_leaves;
        c->leaf[c->nb_leaves].input = k;
        c->leaf[c->nb_leaves].ins = -1;
        c->leaf[c->nb_leaves++].role = -1;
    }
    for (i = 0; i < p->nb_ins; i++)
        for (r = 0; r < 3; r++) {
            c->coef_leaf[3 * i + r] = -1;
            if (!c->need[i] || p->ins[i].kind != PW_SCALE ||
                p->ins[i].w[r] < 0)
                continue;
            if (c->nb_leaves == PW_MAX_LEAVES)
                goto many;
            c->coef_leaf[3 * i + r] = c->nb_leaves;
            c->leaf[c->nb_leaves].input = -1;
            c->leaf[c->nb_leaves].ins = i;
            c->leaf[c->nb_leaves++].role = r;
        }
    return MICA_OK;
many:
    return MICA_KIT_FAIL(err, "param 'program': output %d reads more than "
                         "%d inputs and coefficients", (int)c->out[0],
                         PW_MAX_LEAVES);
}

static mica_status_t structure(pw_prog_t *p, mica_error_t *err)
{
    int32_t i, j, o, c;
    mica_status_t st;

    for (i = 0; i < p->nb_ins; i++) {
        p->dep[i] = 0;
        for (j = 0; j < p->ins[i].nb_args; j++)
            p->dep[i] |= dep_of(p, p->ins[i].arg[j]);
    }
    for (o = 0; o < p->nb_out; o++) {
        uint64_t m = dep_of(p, p->out[o]);
        if (!m)
            return MICA_KIT_FAIL(err, "param 'results': output %d reads no "
                                 "input (only const values)", (int)o);
        for (c = 0; c < p->nb_cls && p->cls[c].mask != m; c++)
            ;
        if (c == p->nb_cls) {
            p->cls[c].mask = m;
            p->cls[c].need = calloc((size_t)p->nb_ins + 1, 1);
            p->cls[c].coef_leaf = calloc(3 * (size_t)p->nb_ins + 1,
                                         sizeof(int32_t));
            p->nb_cls++;
            if (!p->cls[c].need || !p->cls[c].coef_leaf)
                return MICA_KIT_FAIL(err, "out of host memory");
        }
        p->out_cls[o] = c;
        p->cls[c].out[p->cls[c].nb_out++] = o;
    }
    for (c = 0; c < p->nb_cls; c++)
        if ((st = class_leaves(p, &p->cls[c], err)) != MICA_OK)
            return st;
    return MICA_OK;
}

/* ---- parse ---------------------------------------------------------------- */

void pw_prog_free(pw_prog_t *p)
{
    int32_t i;
    if (!p)
        return;
    for (i = 0; p->name && i < p->nb_ins; i++)
        free(p->name[i]);
    for (i = 0; p->coef && i < p->nb_w; i++)
        free(p->coef[i]);
    for (i = 0; i < p->nb_cls; i++) {
        free(p->cls[i].need);
        free(p->cls[i].coef_leaf);
    }
    free(p->name);
    free(p->ins);
    free(p->coef);
    free(p->coef_n);
    free(p->dep);
    memset(p, 0, sizeof *p);
}

mica_status_t pw_prog_parse(const mica_fields_t *fields, pw_prog_t *p,
                            mica_error_t *err)
{
    const mica_field_t *prog = mica_fields_find(fields, "program");
    const mica_field_t *res = mica_fields_find(fields, "results");
    const mica_field_t *wf = mica_fields_find(fields, "weights");
    int32_t i, n;
    mica_status_t st;

    memset(p, 0, sizeof *p);
    /* required and of their types: the schema says so */
    n = prog ? prog->count : 0;
    if (n < 1 || n > PW_MAX_INS)
        return MICA_KIT_FAIL(err, "param 'program' has %d lines: 1 to %d",
                             (int)n, PW_MAX_INS);
    if (!res || res->count < 1 || res->count > PW_MAX_OUTPUTS)
        return MICA_KIT_FAIL(err, "param 'results' names %d values: 1 to "
                             "%d (one per output)", res ? (int)res->count : 0,
                             PW_MAX_OUTPUTS);
    p->nb_w = wf ? wf->count : 0;
    if (p->nb_w > PW_MAX_WEIGHTS)
        return MICA_KIT_FAIL(err, "param 'weights' has %d weights: at most "
                             "%d", (int)p->nb_w, PW_MAX_WEIGHTS);
    p->ins = calloc((size_t)n, sizeof *p->ins);
    p->name = calloc((size_t)n, sizeof *p->name);
    p->dep = calloc((size_t)n, sizeof *p->dep);
    p->coef = calloc((size_t)p->nb_w + 1, sizeof *p->coef);
    p->coef_n = calloc((size_t)p->nb_w + 1, sizeof *p->coef_n);
    if (!p->ins || !p->name || !p->dep || !p->coef || !p->coef_n)
        return MICA_KIT_FAIL(err, "out of host memory");
    for (i = 0; i < p->nb_w; i++)
        if ((st = load_weights(p, i, &((const mica_weights_t *)wf->data)[i],
                               err)) != MICA_OK)
            return st;
    for (i = 0; i < n; i++) {
        const char *line = ((const char *const *)prog->data)[i];
        if ((st = parse_line(p, i, line ? line : "", err)) != MICA_OK)
            return st;
        p->nb_ins = i + 1;
        if (p->ins[i].kind == PW_SCALE &&
            (st = scale_counts(p, i, err)) != MICA_OK)
            return st;
    }
    p->nb_out = res->count;
    for (i = 0; i < p->nb_out; i++) {
        const char *r = ((const char *const *)res->data)[i];
        if (!r || (p->out[i] = lookup(p, n, r)) == INT32_MIN)
            return MICA_KIT_FAIL(err, "param 'results': '%s' (output %d) "
                                 "is no value of the program", r ? r : "",
                                 (int)i);
    }
    for (i = 0; i < n; i++) {
        int32_t j;
        for (j = 0; j < p->ins[i].nb_args; j++)
            if (PW_IS_INPUT(p->ins[i].arg[j]) &&
                PW_INPUT_OF(p->ins[i].arg[j]) >= p->nb_inputs)
                p->nb_inputs = PW_INPUT_OF(p->ins[i].arg[j]) + 1;
    }
    for (i = 0; i < p->nb_out; i++)
        if (PW_IS_INPUT(p->out[i]) && PW_INPUT_OF(p->out[i]) >= p->nb_inputs)
            p->nb_inputs = PW_INPUT_OF(p->out[i]) + 1;
    return structure(p, err);
}

/* ---- types ---------------------------------------------------------------- */

static int numeric(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_INT8 ||
           t == MICA_INT32;
}

static int halfs(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

/* What kind/op takes for its (first) operand, and in words. */
static int takes(const pw_ins_t *ins, mica_dtype_t t, const char **words)
{
    switch (ins->kind) {
    case PW_EW:
        if (ins->op == MICA__EW_AND || ins->op == MICA__EW_OR ||
            ins->op == MICA__EW_XOR) {
            *words = "bool";
            return t == MICA_BOOL;
        }
        if (ins->op == MICA__EW_EQUAL) {
            *words = "float32, float16, int8, int32 or bool";
            return numeric(t) || t == MICA_BOOL;
        }
        *words = "float32, float16, int8 or int32";
        return numeric(t);
    case PW_UN:
        if (ins->op == MICA__UN_NOT) {
            *words = "bool";
            return t == MICA_BOOL;
        }
        if (ins->op == MICA__UN_ABS || ins->op == MICA__UN_NEG ||
            ins->op == MICA__UN_SIGN) {
            *words = "float32, float16, int8 or int32";
            return numeric(t);
        }
        *words = "float32 or float16";
        return halfs(t);
    case PW_ACT:
        if (ins->op == MICA__ACT_RELU) {
            *words = "float32, float16, int8 or int32";
            return numeric(t);
        }
        *words = "float32 or float16";
        return halfs(t);
    case PW_SCALE:
        *words = "float32 or float16";
        return halfs(t);
    default: /* select's then and else, cast's input */
        *words = "float32, float16, bfloat16, int8, uint8, int32, int64 or "
                 "bool";
        return mica_kit_any_type(t);
    }
}

static mica_dtype_t result(const pw_ins_t *ins, mica_dtype_t t)
{
    switch (ins->kind) {
    case PW_EW:
        return ins->op >= MICA__EW_AND ? MICA_BOOL : t;
    case PW_UN:
        return ins->op == MICA__UN_ISINF || ins->op == MICA__UN_ISNAN
                   ? MICA_BOOL : t;
    case PW_CAST:
        return (mica_dtype_t)ins->op;
    default:
        return t;
    }
}

/* MICA_KIT_FAIL where err may be NULL (a question, not a refusal). */
#define TYPE_FAIL(err, ...)                                                 \
    ((err) ? (void)mica_kit_host->set_error((err), __VA_ARGS__) : (void)0, \
     MICA_ERR_INVALID)

mica_status_t pw_prog_types(const pw_prog_t *p, const mica_dtype_t *in,
                            int32_t nb_in, mica_dtype_t *types,
                            mica_dtype_t *out, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int32_t i, j;

    if (nb_in < p->nb_inputs || nb_in > PW_MAX_INPUTS)
        return TYPE_FAIL(err, "the program reads in%d but the layer has "
                             "%d input%s (at most %d)",
                             (int)p->nb_inputs - 1, (int)nb_in,
                             nb_in == 1 ? "" : "s", PW_MAX_INPUTS);
    for (i = 0; i < p->nb_ins; i++) {
        const pw_ins_t *ins = &p->ins[i];
        int32_t first = ins->kind == PW_SELECT ? 1 : 0;
        mica_dtype_t t;
        const char *words = "";

        if (ins->kind == PW_CONST) {
            types[i] = (mica_dtype_t)ins->op;
            continue;
        }
        t = pw_value_type(in, types, ins->arg[first]);
        if (ins->kind == PW_SELECT &&
            pw_value_type(in, types, ins->arg[0]) != MICA_BOOL)
            return TYPE_FAIL(err, "program line %d (%s): select's cond "
                                 "has type %s but must be bool", (int)i + 1,
                                 p->name[i],
                                 h->dtype_name(pw_value_type(in, types,
                                                             ins->arg[0])));
        if (!takes(ins, t, &words))
            return TYPE_FAIL(err, "program line %d (%s): op '%s' takes "
                                 "%s input%s, got %s", (int)i + 1, p->name[i],
                                 pw_op_name(ins), words,
                                 ins->nb_args > 1 ? "s" : "",
                                 h->dtype_name(t));
        for (j = first + 1; j < ins->nb_args; j++)
            if (pw_value_type(in, types, ins->arg[j]) != t)
                return TYPE_FAIL(
                    err, "program line %d (%s): operand %d has type %s but "
                    "operand %d has type %s", (int)i + 1, p->name[i],
                    (int)j, h->dtype_name(pw_value_type(in, types,
                                                        ins->arg[j])),
                    (int)first, h->dtype_name(t));
        types[i] = result(ins, t);
    }
    for (i = 0; out && i < p->nb_out; i++)
        out[i] = pw_value_type(in, types, p->out[i]);
    return MICA_OK;
}
