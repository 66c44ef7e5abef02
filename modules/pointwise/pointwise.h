/*
 * modules/pointwise/pointwise.h - the Pointwise layer: a program of
 * element-by-element operations (the ops of ElementWise, Unary,
 * Activation, Select, Scale and Identity's casts, with their exact
 * semantics) over its inputs, run in one pass over the elements.  The
 * builder's pointwise pass (core/passes/pointwise.c) makes one of each
 * group of such layers; a manifest may write one by hand.
 *
 * The parts:
 *   pw_prog.c   the program: its text parsed (param `program`, `results`,
 *               `weights`), typed for the inputs' dtypes, and its
 *               structure (the inputs each output reads, the leaves);
 *   pw_view.c   shapes at run time: every value's, and the broadcast
 *               view through which each output element reads its leaves;
 *   pw_cpu.c    the CPU implementation: an evaluator over blocks of
 *               elements, one loop per op;
 *   pw_gen.c    the CUDA source of a typed program (build time);
 *   pw_cuda.c   its compilation with NVRTC, the code kept in the layer's
 *               state, loading and launching;
 *   pointwise.c the layer: creators, ops.
 *
 * Values.  A program's values are its inputs ("in0".."inN-1") and the
 * result of each instruction, in order (SSA: an instruction reads only
 * inputs and earlier results).  A value's dtype is what the layer it
 * stands for would make; float32, float16 and bfloat16 values are
 * computed in float and rounded to their type after each instruction
 * (as each layer rounds its output), the integer and bool ones in int64
 * and brought back into their type (int32 wraps, int8 saturates, bool is
 * 0 or 1), so that the program computes exactly what its layers compute
 * one by one.
 *
 * Shapes.  Every instruction broadcasts its operands as TensorRT does
 * (same rank; each dimension equal or 1), Scale's coefficients follow
 * Scale's modes; since pointwise operations commute with broadcasting,
 * an output is computed over its own shape (the broadcast of the inputs
 * it reads) in one pass, each input read through a view (strides, 0
 * along broadcast dimensions).  Outputs that read the same inputs form
 * one class and share the pass.
 */
#ifndef MICA_MOD_POINTWISE_H
#define MICA_MOD_POINTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "pw_args.h" /* PW_MAX_LEAVES, PW_MAX_OUTPUTS */

/* Limits of one layer (the pass never makes more): the leaves of one
 * class travel to a CUDA kernel in its parameters (pw_args.h). */
#define PW_MAX_INPUTS 24
#define PW_MAX_INS 1024
#define PW_MAX_WEIGHTS 64

/* Instruction kinds. */
enum {
    PW_EW = 0, /* ElementWise: op is MICA__EW_* */
    PW_UN,     /* Unary: op is MICA__UN_* */
    PW_ACT,    /* Activation: op is MICA__ACT_*, with alpha and beta */
    PW_SELECT, /* Select: cond, then, else */
    PW_SCALE,  /* Scale: op is its mode, with axis and coefficients */
    PW_CAST,   /* Identity with a dtype: op is the target dtype */
    PW_CONST   /* one value (a Constant of one element): op its dtype */
};

/* Scale's modes. */
enum { PW_UNIFORM = 0, PW_CHANNEL, PW_ELEMENTWISE };

/* A value: >= 0 the result of instruction v, < 0 input -1 - v. */
#define PW_INPUT(k) (-1 - (int32_t)(k))
#define PW_IS_INPUT(v) ((v) < 0)
#define PW_INPUT_OF(v) (-1 - (v))

typedef struct pw_ins {
    int32_t kind;
    int32_t op;
    int32_t nb_args;
    int32_t arg[3];
    float alpha, beta;  /* PW_ACT */
    int32_t axis;       /* PW_SCALE: channel_axis */
    int32_t w[3];       /* PW_SCALE: weights of shift, scale, power, -1 */
    int32_t use_power;  /* PW_SCALE: a power other than 1 is given */
    int64_t k;          /* PW_SCALE: coefficients per weights given, 0 */
    double fval;        /* PW_CONST of a float type: its value (exact) */
    int64_t ival;       /* PW_CONST of an integer type, bool */
} pw_ins_t;

/* A leaf of a class: what its pass reads from memory. */
typedef struct pw_leaf {
    int32_t input;      /* >= 0: that input; -1: a coefficient */
    int32_t ins, role;  /* a coefficient: of Scale instruction ins, role
                           0 shift, 1 scale, 2 power */
} pw_leaf_t;

/* Outputs that read the same inputs, computed in one pass. */
typedef struct pw_cls {
    uint64_t mask;               /* the inputs its outputs read */
    int32_t nb_out;
    int32_t out[PW_MAX_OUTPUTS]; /* output indices */
    uint8_t *need;               /* per instruction: computed here */
    int32_t nb_leaves;
    pw_leaf_t leaf[PW_MAX_LEAVES];
    int32_t in_leaf[PW_MAX_INPUTS]; /* its leaf, or -1 */
    int32_t *coef_leaf;          /* per instruction, 3: leaf or -1 */
} pw_cls_t;

typedef struct pw_prog {
    int32_t nb_ins;
    pw_ins_t *ins;
    char **name;                 /* per instruction, for messages */
    int32_t nb_out;
    int32_t out[PW_MAX_OUTPUTS]; /* values */
    int32_t nb_inputs;           /* highest input read + 1 */
    int32_t nb_w;                /* weights, as float32 */
    float **coef;
    int64_t *coef_n;
    uint64_t *dep;               /* per instruction: inputs it reads */
    int32_t nb_cls;
    pw_cls_t cls[PW_MAX_OUTPUTS];
    int32_t out_cls[PW_MAX_OUTPUTS];
} pw_prog_t;

/*
 * The program of `fields` (params program, results, weights) into *p:
 * MICA_OK, or MICA_ERR_INVALID with one line in err naming the line and
 * what is wrong ("param 'program': line 2 ('t1 = foo(t0)'): unknown op
 * 'foo'"), or MICA_ERR_NOMEM.  Free with pw_prog_free (also on failure).
 */
mica_status_t pw_prog_parse(const mica_fields_t *fields, pw_prog_t *p,
                            mica_error_t *err);
void pw_prog_free(pw_prog_t *p);

/*
 * The dtype of every instruction's result (types[0..nb_ins-1]) for
 * inputs of dtypes in[0..nb_in-1], checked as each layer checks its
 * inputs; out[] (may be NULL) gets the outputs' dtypes.  err may be
 * NULL: only whether they fit.
 */
mica_status_t pw_prog_types(const pw_prog_t *p, const mica_dtype_t *in,
                            int32_t nb_in, mica_dtype_t *types,
                            mica_dtype_t *out, mica_error_t *err);

/* The dtype of value v. */
static inline mica_dtype_t pw_value_type(const mica_dtype_t *in,
                                         const mica_dtype_t *types,
                                         int32_t v)
{
    return PW_IS_INPUT(v) ? in[PW_INPUT_OF(v)] : types[v];
}

/* Whether a dtype is computed in float (float32, float16, bfloat16). */
static inline int pw_is_float(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_BFLOAT16;
}

/* The op's name in the program's text ("sum", "relu", "cast"...). */
const char *pw_op_name(const pw_ins_t *ins);

/* ---- shapes and views at run time (pw_view.c) ------------------------ */

/*
 * How a class's outputs read their leaves: the output's dimensions in
 * the order of its memory (folded: dimensions of length 1 dropped,
 * neighbours every leaf walks contiguously merged), and each leaf's
 * element stride along each (0 along a broadcast one).  rank 0: one
 * element (or none, n == 0).
 */
typedef struct pw_view {
    int64_t n;
    int32_t rank;
    int32_t nb_leaves;
    int64_t d[MICA_MAX_DIMS];
    int64_t s[PW_MAX_LEAVES][MICA_MAX_DIMS];
} pw_view_t;

/*
 * The views of every class for inputs in[0..nb_in-1] and outputs
 * out[0..nb_out-1] as they run (dims and formats): every value's shape
 * checked (an operand that does not broadcast fails naming the line and
 * the dimensions, as the layer would), Scale's coefficient counts
 * checked against its input, views[c] for class c.
 */
mica_status_t pw_views(const pw_prog_t *p, const mica_tensor_desc_t *in,
                       int32_t nb_in, const mica_tensor_desc_t *out,
                       int32_t nb_out, pw_view_t *views, mica_error_t *err);

/* Only the shapes' checks of pw_views, for inputs in[0..p->nb_inputs - 1]
 * (at build time, where every dimension is known). */
mica_status_t pw_shapes_check(const pw_prog_t *p,
                              const mica_tensor_desc_t *in,
                              mica_error_t *err);

/* ---- the CPU evaluator (pw_cpu.c) ------------------------------------- */

/* What one instance keeps for the CPU: each class's plan of slots. */
typedef struct pw_cpu pw_cpu_t;

/* The plan of p (structure only; NULL with err set if memory runs out). */
pw_cpu_t *pw_cpu_new(const pw_prog_t *p, mica_error_t *err);
void pw_cpu_free(pw_cpu_t *c);
/* Scratch bytes a run needs (the layer's workspace). */
size_t pw_cpu_workspace(const pw_cpu_t *c);

/*
 * Run the program on the host: types[] from pw_prog_types, views[] from
 * pw_views; `scratch` has pw_cpu_workspace bytes.
 */
mica_status_t pw_cpu_run(const pw_cpu_t *c, const pw_prog_t *p,
                         const mica_dtype_t *types,
                         const mica_tensor_desc_t *in,
                         const mica_tensor_desc_t *out,
                         const void *const *inputs, void *const *outputs,
                         const pw_view_t *views, void *scratch,
                         mica_error_t *err);

/* ---- the CUDA source (pw_gen.c) --------------------------------------- */

/*
 * The CUDA C++ source of p typed for inputs in[0..nb_in-1] (types[] from
 * pw_prog_types): per class c, kernels pw<c>_flat4, pw<c>_flat1,
 * pw<c>_gen4, pw<c>_gen1 and pw<c>_gen64 taking a pw_args_t
 * (pw_args.h).  Malloc'd, NUL-terminated; NULL when memory runs out.
 */
char *pw_gen_source(const pw_prog_t *p, const mica_dtype_t *in,
                    int32_t nb_in, const mica_dtype_t *types);

/* The headers the source includes, as NVRTC takes them (pw_headers.c,
 * generated from the families' headers at build time). */
extern const int32_t pw_nb_headers;
extern const char *const pw_header_names[];
extern const char *const pw_header_texts[];

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_POINTWISE_H */
