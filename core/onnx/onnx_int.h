/*
 * core/onnx/onnx_int.h - the ONNX importer's internals, shared by
 * reader.c (the file and its protobuf), tensor.c (TensorProto values),
 * ir.c (the manifest being written: values, layers, weights), shape.c
 * (layers every mapping needs), emit.c (the YAML text), import.c (graphs
 * and nodes), the op_*.c files (one family of ONNX operators each) and
 * api.c (the public functions of mica.h).
 *
 * An import reads the model, walks its graph in order and, node by node,
 * appends mica layers to an in-memory manifest (mica__ox_t).  ONNX values
 * become mica__ox_value_t: a tensor name once a layer defines it, its type
 * and dimensions as far as they are known at import time (-1 otherwise),
 * and its host values when it is a constant (an initializer, a Constant
 * node, or something computed from them here).  A constant becomes a
 * tensor (a Constant layer over a weights entry) only where a layer reads
 * it as one; a mapping that needs its values as params reads them.
 *
 * int64 is narrowed to int32 (see docs/onnx.md): constants are checked to
 * fit when they become weights, inputs and outputs are int32.
 */
#ifndef MICA_ONNX_INT_H
#define MICA_ONNX_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mica_int.h"
#include "onnx.pb-c.h"

/* ONNX element types (TensorProto.DataType). */
enum {
    OX_UNDEFINED = 0, OX_FLOAT = 1, OX_UINT8 = 2, OX_INT8 = 3,
    OX_UINT16 = 4, OX_INT16 = 5, OX_INT32 = 6, OX_INT64 = 7, OX_STRING = 8,
    OX_BOOL = 9, OX_FLOAT16 = 10, OX_DOUBLE = 11, OX_UINT32 = 12,
    OX_UINT64 = 13, OX_COMPLEX64 = 14, OX_COMPLEX128 = 15, OX_BFLOAT16 = 16,
    OX_FLOAT8E4M3FN = 17, OX_FLOAT8E4M3FNUZ = 18, OX_FLOAT8E5M2 = 19,
    OX_FLOAT8E5M2FNUZ = 20, OX_UINT4 = 21, OX_INT4 = 22, OX_FLOAT4E2M1 = 23,
    OX_FLOAT8E8M0 = 24
};

/* Whether ONNX packs type t two to a byte (the importer unpacks them:
 * a mica__ox_data_t holds one byte per element). */
#define MICA__OX_PACKED4(t) \
    ((t) == OX_UINT4 || (t) == OX_INT4 || (t) == OX_FLOAT4E2M1)

/* ---- reader.c: the model file --------------------------------------- */

/* A file mapped (or read) into memory. */
typedef struct mica__ox_file {
    char *path;
    const uint8_t *base;
    size_t size;
    int mapped;
} mica__ox_file_t;

typedef struct mica__ox_model {
    mica_context_t *ctx;
    char *path;              /* as given */
    char *dir;               /* its folder, for external data ("" = cwd) */
    mica__ox_file_t file;
    Onnx__ModelProto *proto;
    int64_t opset;           /* of the default domain ("" or "ai.onnx") */
    mica__ox_file_t *ext;    /* external data files, mapped on first use */
    int32_t nb_ext;
} mica__ox_model_t;

/* Whether the bytes look like an ONNX model (a ModelProto's first field). */
int mica__ox_probe_bytes(const uint8_t *p, size_t n);

/* Map `path`, decode and check it; one line naming the file on failure. */
mica_status_t mica__ox_model_open(mica_context_t *ctx, const char *path,
                                  mica__ox_model_t **out);
void mica__ox_model_close(mica__ox_model_t *m);

/* Map a file whole (read-only); *f zeroed on failure after a message. */
mica_status_t mica__ox_file_map(mica_context_t *ctx, const char *path,
                                const char *what, mica__ox_file_t *f);
/* The same from descriptor fd (taken: closed in every case). */
mica_status_t mica__ox_file_map_fd(mica_context_t *ctx, int fd,
                                   const char *path, const char *what,
                                   mica__ox_file_t *f);
void mica__ox_file_unmap(mica__ox_file_t *f);

/*
 * How deep protobuf messages may nest in a file (a ModelProto is 1): 64
 * levels of subgraphs (check_graph's bound) take 3 each, types a few.
 * mica__ox_nest_check walks the wire format with this bound before
 * protobuf-c unpacks it (which recurses on the stack per level).
 */
#define MICA__OX_MAX_NEST 256
mica_status_t mica__ox_nest_check(mica_context_t *ctx, const char *path,
                                  const ProtobufCMessageDescriptor *d,
                                  const uint8_t *p, size_t n);

/* The opset of `domain` ("" and "ai.onnx" are the default), 0 if none. */
int64_t mica__ox_opset(const mica__ox_model_t *m, const char *domain);

/* ---- tensor.c: values of a TensorProto ------------------------------ */

/*
 * Host values: `count` elements in `dims`, stored little-endian in their
 * ONNX type's width (bool and 8-bit types one byte, float16 and bfloat16
 * as their bits) at `raw`, which may be unaligned (read with memcpy).
 * A splat (a large ConstantOfShape) stores one element at `raw` that
 * stands for all `count`: read it through mica__ox_data_int/_f.
 *
 * A checked tensor: `count` is the product of `dims` (no dimension
 * negative, the product within int64), set only by mica__ox_data_dims,
 * and a constant value's rank and d[] are its data's dims (its one
 * constructor, mica__ox_const_data, and the helpers of shape.c keep
 * them so).  Every fold of the importer reads its inputs through their
 * data's dims and count, so no fold can disagree with its buffer; an
 * index outside [0, count) reads 0 rather than another buffer.
 */
typedef struct mica__ox_data {
    int32_t type;            /* ONNX element type */
    mica_dims_t dims;
    int64_t count;
    const void *raw;
    int splat;               /* raw holds one element, repeated */
} mica__ox_data_t;

/* Bytes of one element of ONNX type t, 0 for a type without a fixed size. */
size_t mica__ox_type_size(int32_t t);
/* "float", "int64", ... for messages. */
const char *mica__ox_type_name(int32_t t);
/* The mica type an ONNX type becomes (int64 -> int32), -1 if none. */
int mica__ox_type_mica(int32_t t, mica_dtype_t *out);
/* The ONNX type a weight or constant of type t is kept as, as TensorRT's
 * parser does: double as float, the 16-bit and unsigned wider integers
 * as int32 (their values checked when written); others as they are. */
int32_t mica__ox_weight_type(int32_t t);

/* Element i as an integer (floats truncated) or as a double. */
int64_t mica__ox_data_int(const mica__ox_data_t *d, int64_t i);
double mica__ox_data_f(const mica__ox_data_t *d, int64_t i);

/* Set d's dims to `dims` (rank r) and its count to their product: 0, or
 * -1 (d untouched) for a negative dimension, a rank beyond
 * MICA_MAX_DIMS or a product beyond int64. */
int mica__ox_data_dims(mica__ox_data_t *d, int32_t rank, const int64_t *dims);
/* The element count of `dims` (rank r): their product, or -1 as for
 * mica__ox_data_dims. */
int64_t mica__ox_dims_count(const int64_t *dims, int32_t rank);

/*
 * The values of tensor `t` (`what` names it in messages): from raw_data,
 * the typed fields, or an external data file of the model.  Conversions
 * go into memory of `arena` (see ir.c); raw and external bytes are used
 * in place.
 */
struct mica__ox_arena;
mica_status_t mica__ox_tensor_data(mica__ox_model_t *m,
                                   struct mica__ox_arena *arena,
                                   const Onnx__TensorProto *t,
                                   const char *what, mica__ox_data_t *out);

/* ---- ir.c: the import and the manifest it writes --------------------- */

typedef struct mica__ox_arena {
    struct mica__ox_block *blocks;
} mica__ox_arena_t;

void *mica__ox_arena_alloc(mica__ox_arena_t *a, size_t n);
void mica__ox_arena_free(mica__ox_arena_t *a);

/* A name set (open addressing); names are not copied. */
typedef struct mica__ox_names {
    const char **slot;
    void **val;
    size_t cap, nb;
} mica__ox_names_t;

/* What an ONNX value is at import time. */
typedef struct mica__ox_value {
    const char *name;        /* the ONNX name */
    const char *tensor;      /* the mica tensor, NULL until one exists */
    int32_t type;            /* ONNX element type */
    mica_dtype_t dtype;      /* the mica type it has as a tensor */
    int32_t rank;            /* -1: unknown (a third party's output) */
    int64_t d[MICA_MAX_DIMS]; /* -1: known only at run time */
    mica__ox_data_t *cst;    /* host values of a constant, else NULL */
    const char *weights;     /* its weights entry once written */
    int32_t input;           /* index among the network inputs, or -1 */
    struct mica__ox_cond *cond; /* the If branch it was made in, or NULL */
    struct mica__ox_layer *layer; /* the layer whose output slot it is */
    int32_t slot;
    int gen;                 /* its tensor name was made up here */
    int32_t uses;            /* times a layer took it as an input */
    int bad;                 /* checking: made by a node that was refused */
    struct mica__ox_value *from_int; /* a float cast of this integer value */
    /* A shape value computed at run time (1-D or 0-D, integer, at most
     * MICA_MAX_DIMS elements) whose elements are partly known here:
     * kv[i] its value, or -1 (has_kv set).  A Shape of dims partly
     * known, sliced, gathered and concatenated with constants keeps
     * them, so that a Reshape by it still knows those dims. */
    int has_kv;
    int64_t kv[MICA_MAX_DIMS];
} mica__ox_value_t;

/* An If being mapped: its name, and the IfConditionalInput of every
 * outside tensor its branches read (tensor name -> inside name). */
typedef struct mica__ox_cond {
    const char *name;
    mica__ox_names_t inputs;
    struct mica__ox_cond *parent;
} mica__ox_cond_t;

enum { OX_P_INT, OX_P_FLOAT, OX_P_STR, OX_P_WEIGHTS };

/* One param of a layer: scalar (list == 0) or list of n. */
typedef struct mica__ox_param {
    const char *name;
    int kind;
    int list;
    int32_t n;
    int64_t *i;
    double *f;
    const char **s;          /* strings, or weights names */
} mica__ox_param_t;

#define MICA__OX_MAX_PARAMS 16

typedef struct mica__ox_layer {
    const char *name;
    const char *type;
    const char *ns;          /* NULL: "" */
    const char *comment;     /* "ONNX Conv 'conv1'", written before it */
    const char *loop;
    const char *cond;
    const char **in;         /* NULL entries: an optional input left out */
    int32_t nb_in, cap_in;
    const char **out;
    int32_t nb_out, cap_out;
    mica__ox_param_t p[MICA__OX_MAX_PARAMS];
    int32_t nb_p;
    struct mica__ox_layer *next;
} mica__ox_layer_t;

/* A weights entry: bytes at `offset` of the weights file, or inline. */
typedef struct mica__ox_weights {
    const char *name;
    mica_dtype_t dtype;
    mica_dims_t dims;
    int64_t offset, bytes;
    int inline_;             /* small integer data written in the YAML */
    const uint8_t *inline_data;
    const void *data;        /* its bytes (the model's, or converted) */
    int splat;               /* data is one element, repeated to `bytes` */
} mica__ox_weights_t;

typedef struct mica__ox_input {
    mica__ox_value_t *v;
    int shape_tensor;
} mica__ox_input_t;

/* ONNX names to values, one per graph, chained to the enclosing graph. */
typedef struct mica__ox_scope {
    mica__ox_names_t values;
    struct mica__ox_scope *parent;
    struct mica__ox_cond *cond; /* non-NULL in a branch of an If */
    const char *loop;           /* the loop whose body this is, or NULL */
} mica__ox_scope_t;

/* Profiles from the options, per input name. */
typedef struct mica__ox_range {
    const char *name;
    int32_t n;
    int64_t min[MICA_MAX_DIMS], opt[MICA_MAX_DIMS], max[MICA_MAX_DIMS];
    int have;                /* bits: 1 min, 2 opt, 4 max */
    int used;
} mica__ox_range_t;

typedef struct mica__ox {
    mica_context_t *ctx;
    mica__ox_model_t *model;
    mica__ox_arena_t arena;
    mica_status_t st;        /* sticky: the first failure */

    mica__ox_names_t tensors; /* mica tensor names in use */
    mica__ox_names_t reserved; /* every ONNX value name of the model */
    mica__ox_names_t lnames;  /* mica layer names in use */
    mica__ox_names_t wnames;  /* weights names in use */
    mica__ox_scope_t *scope;

    mica__ox_layer_t *first, *last;
    int32_t nb_layers;
    mica__ox_weights_t *weights;
    int32_t nb_weights, cap_weights;
    uint8_t *blob;           /* the weights file assembled, once asked */
    int64_t blob_size;       /* the weights file's size */
    mica__ox_input_t *inputs;
    int32_t nb_inputs, cap_inputs;
    const char **outputs;
    int32_t nb_outputs, cap_outputs;
    mica__ox_range_t *ranges;
    int32_t nb_ranges;
    const mica_onnx_options_t *opt; /* the caller's, during the import */
    int32_t nb_nodes;        /* for the names of unnamed nodes */
    int32_t nb_loops, nb_conds;
    mica__ox_cond_t *cond;   /* the If branch being mapped, or NULL */
    mica__ox_cond_t **conds; /* every If, to free their maps */
    int32_t nb_cond_list, cap_cond_list;
    const char *name;        /* the graph's name */
    /* Inputs whose values the profile fixes and this import takes as
     * constants (each still an input, a shape tensor its profile
     * checks): given by the caller of mica__ox_import; and those a
     * mapping found it needs so (an If's condition), for the next try. */
    const char *const *fixed;
    int32_t nb_fixed;
    const char **want_fixed;
    int32_t nb_want_fixed;
    /* Checking (mica_onnx_check): a refused node is a line of `report`
     * and the import goes on, its outputs `bad`; nodes reading them are
     * skipped. */
    int check;
    char *report;
    size_t report_len;
    int32_t nb_refused, nb_skipped;
    int skip_node;           /* a subgraph's output is bad: skip the node */
} mica__ox_t;

/* The node being mapped. */
typedef struct mica__ox_node {
    const Onnx__NodeProto *proto;
    const char *name;        /* its layer name (unique) */
    const char *comment;
    int64_t opset;
    int32_t nb_in;
    mica__ox_value_t **in;   /* NULL: an optional input left out */
    int32_t nb_out;
    int32_t nb_layers;       /* layers added for it so far */
} mica__ox_node_t;

/* Allocation in the import's arena; NULL sets x->st (NOMEM). */
void *mica__ox_alloc(mica__ox_t *x, size_t n);
char *mica__ox_strdup(mica__ox_t *x, const char *s);
char *mica__ox_printf(mica__ox_t *x, const char *fmt, ...) MICA_PRINTF(2, 3);

/* Name sets. */
int mica__ox_names_put(mica__ox_names_t *s, const char *name, void *val);
void *mica__ox_names_get(const mica__ox_names_t *s, const char *name);
int mica__ox_names_has(const mica__ox_names_t *s, const char *name);
void mica__ox_names_free(mica__ox_names_t *s);

/* A new unique name from `base` in `set` ("base", "base_1", ...), claimed. */
const char *mica__ox_unique(mica__ox_t *x, mica__ox_names_t *set,
                            const char *base);

/* A tensor name: `name` (an ONNX name) if free, else a new one from it or
 * from "layer:k", avoiding every ONNX name of the model.  Claimed. */
const char *mica__ox_tensor_name(mica__ox_t *x, const char *name,
                                 const char *layer, int32_t k);

/*
 * Fail the import: "node 'NAME' (OP, opset N): <message>" for node n (or
 * the message alone when n is NULL).  Returns and records the status.
 */
mica_status_t mica__ox_fail(mica__ox_t *x, const mica__ox_node_t *n,
                            mica_status_t st, const char *fmt, ...)
    MICA_PRINTF(4, 5);
#define OX_UNSUP(x, n, ...) mica__ox_fail((x), (n), MICA_ERR_UNSUPPORTED, \
                                          __VA_ARGS__)
#define OX_BAD(x, n, ...) mica__ox_fail((x), (n), MICA_ERR_INVALID, \
                                        __VA_ARGS__)

/* Values. */
mica__ox_value_t *mica__ox_value_new(mica__ox_t *x, const char *onnx_name);
mica__ox_value_t *mica__ox_lookup(mica__ox_t *x, const char *onnx_name);
mica_status_t mica__ox_bind(mica__ox_t *x, const char *onnx_name,
                            mica__ox_value_t *v);
/* Volume of a value's dims, -1 if some are unknown (or the product
 * passes int64). */
int64_t mica__ox_volume(const mica__ox_value_t *v);
/* A constant value over checked data d (its rank and dims are d's) of
 * ONNX type `type` (the type it has as a value: double data is float);
 * NULL after a failure. */
mica__ox_value_t *mica__ox_const_data(mica__ox_t *x, const char *name,
                                      int32_t type, mica__ox_data_t *d);
/* Whether constant v is whole: its data's count is the product of its
 * data's dims, which are v's (the invariant every fold relies on). */
int mica__ox_cst_ok(const mica__ox_value_t *v);
int mica__ox_dims_known(const mica__ox_value_t *v);

/*
 * Layers.  mica__ox_layer starts one for node n (name "NODE" for the
 * first, "NODE/tag" after), mica__ox_in appends an input tensor (NULL: an
 * optional input left out), mica__ox_out a new output tensor named `name`
 * if free (NULL: a fresh name from the layer's), described by `like` (its
 * type and dims are copied; change them after).  The p_* calls add params.
 * After a failure they do nothing (x->st holds it).
 */
mica__ox_layer_t *mica__ox_layer(mica__ox_t *x, mica__ox_node_t *n,
                                 const char *type, const char *tag);
void mica__ox_in(mica__ox_t *x, mica__ox_layer_t *l, const char *tensor);
mica__ox_value_t *mica__ox_out(mica__ox_t *x, mica__ox_layer_t *l,
                               const char *name, mica_dtype_t dtype,
                               int32_t rank, const int64_t *dims);
/* Append output tensor t (already named) to l; 0, or -1 after a failure. */
int mica__ox_out_tensor(mica__ox_t *x, mica__ox_layer_t *l, const char *t);
void mica__ox_p_int(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                    int64_t v);
void mica__ox_p_ints(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                     const int64_t *v, int32_t n);
void mica__ox_p_float(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                      double v);
void mica__ox_p_floats(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                       const double *v, int32_t n);
void mica__ox_p_str(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                    const char *v);
void mica__ox_p_bool(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                     int v);
void mica__ox_p_weights(mica__ox_t *x, mica__ox_layer_t *l,
                        const char *name, const char *const *w, int32_t n,
                        int list);

/*
 * A weights entry of `dtype` and `dims` holding `d`'s values converted
 * (int64 narrowed with a range check naming `what`); its name, or NULL
 * after a failure.  `base` is the wished name.
 */
const char *mica__ox_weights_add(mica__ox_t *x, const mica__ox_node_t *n,
                                 const char *base, const mica__ox_data_t *d,
                                 mica_dtype_t dtype, const mica_dims_t *dims,
                                 const char *what);
/* The weights entry of a constant value (written once, then reused). */
const char *mica__ox_value_weights(mica__ox_t *x, const mica__ox_node_t *n,
                                   mica__ox_value_t *v);

/* Network inputs and outputs. */
void mica__ox_add_input(mica__ox_t *x, mica__ox_value_t *v);
void mica__ox_add_output(mica__ox_t *x, const char *tensor);

/* ---- shape.c: layers every mapping uses ------------------------------ */

/*
 * The tensor of value v, making a Constant layer for a constant.  In an
 * If branch, a value from outside goes through the branch's
 * IfConditionalInput.  NULL after a failure.
 */
const char *mica__ox_tensor(mica__ox_t *x, mica__ox_node_t *n,
                            mica__ox_value_t *v);

/* A constant value of `type` with `count` values from `vals`. */
mica__ox_value_t *mica__ox_const_i(mica__ox_t *x, int32_t type,
                                   const int64_t *vals, int32_t rank,
                                   const int64_t *dims);
mica__ox_value_t *mica__ox_const_f(mica__ox_t *x, int32_t type,
                                   const double *vals, int32_t rank,
                                   const int64_t *dims);
/* A constant of `type` whose every element is `val`, stored as one (a
 * splat: the weights file gets its bytes, the import no copy). */
mica__ox_value_t *mica__ox_const_splat(mica__ox_t *x, int32_t type,
                                       double val, int32_t rank,
                                       const int64_t *dims);
/* The largest constant the helpers compute on the host (elements). */
#define MICA__OX_FOLD_MAX 4096
/* The largest constant a fold that moves values (Slice, Transpose,
 * Concat of constants: weights cut and assembled in the graph) makes. */
#define MICA__OX_MOVE_MAX ((int64_t)1 << 22)
/* The largest constant made here at all (elements, 8 bytes each): a
 * larger one is a layer's work (a Range becomes a Fill). */
#define MICA__OX_HOST_MAX ((int64_t)1 << 24)
/* Whether an ONNX type is an integer (or bool) type. */
int mica__ox_is_int(int32_t t);
/* v renamed `name` (a folded constant takes its output's ONNX name). */
mica__ox_value_t *mica__ox_named(mica__ox_t *x, mica__ox_value_t *v,
                                 const char *name);
/* A 0-D constant of v's type (float or integer) holding `val`. */
mica__ox_value_t *mica__ox_scalar_like(mica__ox_t *x,
                                       const mica__ox_value_t *v,
                                       double val);

/* The output value of a node: bind ONNX output k to value v. */
mica_status_t mica__ox_set_out(mica__ox_t *x, mica__ox_node_t *n, int32_t k,
                               mica__ox_value_t *v);
/* The wished tensor name of ONNX output k of n (NULL for a temporary). */
const char *mica__ox_out_name(const mica__ox_node_t *n, int32_t k);

/* One-layer helpers; `name` as in mica__ox_out.  NULL after a failure. */
mica__ox_value_t *mica__ox_reshape(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, const int64_t *dims,
                                   int32_t rank, const char *name);
mica__ox_value_t *mica__ox_reshape_t(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v,
                                     mica__ox_value_t *shape, int zero,
                                     const char *name);
mica__ox_value_t *mica__ox_transpose(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v, const int64_t *perm,
                                     const char *name);
mica__ox_value_t *mica__ox_unsqueeze(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v, const int64_t *axes,
                                     int32_t nb, const char *name);
mica__ox_value_t *mica__ox_squeeze(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, const int64_t *axes,
                                   int32_t nb, const char *name);
mica__ox_value_t *mica__ox_ew(mica__ox_t *x, mica__ox_node_t *n,
                              const char *op, mica__ox_value_t *a,
                              mica__ox_value_t *b, const char *name);
mica__ox_value_t *mica__ox_unary(mica__ox_t *x, mica__ox_node_t *n,
                                 const char *op, mica__ox_value_t *a,
                                 const char *name);
mica__ox_value_t *mica__ox_cast(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *a, int32_t type,
                                const char *name);
/* mica__ox_cast with ONNX's Cast saturate (0: float8 overflows to
 * infinity or NaN). */
mica__ox_value_t *mica__ox_cast_sat(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *a, int32_t type,
                                    int saturate, const char *name);
mica__ox_value_t *mica__ox_identity(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *a, const char *name);
mica__ox_value_t *mica__ox_reduce(mica__ox_t *x, mica__ox_node_t *n,
                                  const char *op, mica__ox_value_t *a,
                                  const int64_t *axes, int32_t nb, int keep,
                                  const char *name);
/* A constant of v's type and dims od (rank r) whose element k is v's
 * element src[k]: a transpose or slice of a small constant computed
 * here; NULL (no failure) when it is not one the folds compute. */
mica__ox_value_t *mica__ox_fold_pick(mica__ox_t *x, const mica__ox_value_t *v,
                                     int32_t rank, const int64_t *od,
                                     const int64_t *src);
/* A SoftMax layer over `axis` of v (op_nn.c). */
mica__ox_value_t *mica__ox_softmax(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, int64_t axis,
                                   const char *name);
/* An Activation layer of `type` on v, alpha and beta where has_a and
 * has_b (op_act.c). */
mica__ox_value_t *mica__ox_act(mica__ox_t *x, mica__ox_node_t *n,
                               const char *type, mica__ox_value_t *v,
                               int has_a, double alpha, int has_b,
                               double beta, const char *name);
/* MatMul of a and b (op_nn.c: MatrixMultiply, a 1-D side a vector). */
mica__ox_value_t *mica__ox_matmul(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *a, mica__ox_value_t *b,
                                  const char *name);
/* Conv of v with the constant kernel w and bias b (NULL: none) by node
 * n's attributes (op_conv.c: Convolution). */
mica__ox_value_t *mica__ox_conv(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *v, mica__ox_value_t *w,
                                mica__ox_value_t *b, const char *name);
/* Unsqueeze a and b to one rank (leading 1s) as TensorRT's parser does. */
mica_status_t mica__ox_broadcast(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t **a, mica__ox_value_t **b);

/* Shape tensors: the 1-D int32 shape of v (a constant when all known). */
mica__ox_value_t *mica__ox_shape_of(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *v);
/* Elements [start, end) of a 1-D value. */
mica__ox_value_t *mica__ox_shape_slice(mica__ox_t *x, mica__ox_node_t *n,
                                       mica__ox_value_t *s, int32_t start,
                                       int32_t end);
mica__ox_value_t *mica__ox_concat(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t **v, int32_t nb,
                                  int32_t axis, const char *name);

/* Dimension i of v as a 1-D value of one element (a constant if known). */
mica__ox_value_t *mica__ox_dim(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *v, int32_t i);
/*
 * A Slice layer of v: start, size and stride are 1-D values of rank(v)
 * elements, each a constant (a param) or a tensor (an input); stride NULL
 * is ones.  mode "default", "fill", "clamp", "reflect" or "wrap"; fill is
 * a 0-D value (mode fill) or NULL.
 */
mica__ox_value_t *mica__ox_slice(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t *v, mica__ox_value_t *start,
                                 mica__ox_value_t *size,
                                 mica__ox_value_t *stride, const char *mode,
                                 mica__ox_value_t *fill, const char *name);
/* A 1-D value of r elements: known[i], or dyn[i] (one element) when set. */
mica__ox_value_t *mica__ox_vec(mica__ox_t *x, mica__ox_node_t *n,
                               const int64_t *known, mica__ox_value_t **dyn,
                               int32_t r);

/* An `axes` list (ONNX's opset-18 Pad, Resize, CenterCropPad) of na
 * axes of a rank-r tensor as at[axis] = its place in the list, -1 for an
 * axis not listed; -1 (a failure) for one out of range or repeated. */
int mica__ox_axes_at(mica__ox_t *x, mica__ox_node_t *n, const int64_t *axes,
                     int32_t na, int32_t r, int32_t *at);
/* A 1-D value of r elements: element off + at[i] of the 1-D value `part`
 * where at[i] >= 0 (mica__ox_axes_at), else known[i], or dyn[i] (one
 * element) when dyn and dyn[i] are set; a constant when all are known. */
mica__ox_value_t *mica__ox_vec_at(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *part, const int32_t *at,
                                  int32_t off, const int64_t *known,
                                  mica__ox_value_t **dyn, int32_t r);

/* Normalize axis a of a rank-r tensor ([-r, r) -> [0, r)); -1 if out. */
int64_t mica__ox_axis(int64_t a, int32_t r);
/* Whether value v's host values are all known. */
static inline int mica__ox_is_const(const mica__ox_value_t *v)
{
    return v && v->cst;
}

/* ---- attributes (import.c) ------------------------------------------ */

const Onnx__AttributeProto *mica__ox_attr(const mica__ox_node_t *n,
                                          const char *name);
int64_t mica__ox_attr_i(const mica__ox_node_t *n, const char *name,
                        int64_t dflt);
double mica__ox_attr_f(const mica__ox_node_t *n, const char *name,
                       double dflt);
/* The string attribute (NUL-terminated copy in the arena) or dflt. */
const char *mica__ox_attr_s(mica__ox_t *x, const mica__ox_node_t *n,
                            const char *name, const char *dflt);
/* The ints of an attribute: count, or -1 when absent. */
int32_t mica__ox_attr_ints(const mica__ox_node_t *n, const char *name,
                           const int64_t **out);

/* Inputs 0..k-1 of n given, every input's rank known; else a failure. */
mica_status_t mica__ox_need(mica__ox_t *x, mica__ox_node_t *n, int32_t k);
/* v is 1-D of a known length and an integer type; else 0 and a failure
 * naming it `what`. */
int mica__ox_vec_ok(mica__ox_t *x, mica__ox_node_t *n, mica__ox_value_t *v,
                    const char *what);

/*
 * Value v, needed as a constant, is computed on the host from integer
 * inputs whose values the profile fixes (as mica__ox_fixed_sources
 * says): ask for the import again with those inputs as constants (a
 * failure that api.c's import turns into the second try).  MICA_OK when
 * it is not such a value (*why, when set, then says what it depends on)
 * or on the second try.
 */
mica_status_t mica__ox_want_fixed(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v, const char **why);
/* The values of a constant input as int64 (NULL, and a failure, if not);
 * one computed from inputs the profile fixes makes the import try again
 * with those as constants (mica__ox_want_fixed). */
int64_t *mica__ox_const_ints(mica__ox_t *x, mica__ox_node_t *n, int32_t i,
                             const char *what, int32_t *count);

/* ---- import.c: graphs ----------------------------------------------- */

/* Map the nodes of `g` in the current scope. */
mica_status_t mica__ox_graph_nodes(mica__ox_t *x, const Onnx__GraphProto *g);
/* A value from a ValueInfoProto (type, dims); NULL after a failure. */
mica__ox_value_t *mica__ox_value_info(mica__ox_t *x,
                                      const Onnx__ValueInfoProto *vi,
                                      const char *what);
/* Register the initializers of g in the current scope. */
mica_status_t mica__ox_initializers(mica__ox_t *x, const Onnx__GraphProto *g);

/* ---- the operator table ---------------------------------------------- */

typedef mica_status_t (*mica__ox_op_fn)(mica__ox_t *x, mica__ox_node_t *n);

typedef struct mica__ox_op {
    const char *name;        /* ONNX op type, default domain */
    mica__ox_op_fn fn;
    const char *layers;      /* the mica layer types it becomes; NULL: an
                              * op refused with a reason of its own */
} mica__ox_op_t;

/* Each op_*.c file's table, ended by a NULL name. */
extern const mica__ox_op_t mica__ox_ops_elementwise[];
extern const mica__ox_op_t mica__ox_ops_tensor[];
extern const mica__ox_op_t mica__ox_ops_slice[];
extern const mica__ox_op_t mica__ox_ops_shape[];
extern const mica__ox_op_t mica__ox_ops_gather[];
extern const mica__ox_op_t mica__ox_ops_conv[];
extern const mica__ox_op_t mica__ox_ops_nn[];
extern const mica__ox_op_t mica__ox_ops_norm[];
extern const mica__ox_op_t mica__ox_ops_resize[];
extern const mica__ox_op_t mica__ox_ops_reduce[];
extern const mica__ox_op_t mica__ox_ops_control[];
extern const mica__ox_op_t mica__ox_ops_rnn[];
extern const mica__ox_op_t mica__ox_ops_loss[];
extern const mica__ox_op_t mica__ox_ops_index[];
extern const mica__ox_op_t mica__ox_ops_math[];
extern const mica__ox_op_t mica__ox_ops_xformer[];

/*
 * A Normalization layer (op_xformer.c) of v over the axes of bitmask
 * `axes`: scale and bias (NULL: none) cast to v's type and given leading
 * 1s up to its rank; `groups` of axis 1, `rms` mode.  NULL after a
 * failure.
 */
mica__ox_value_t *mica__ox_normalization(mica__ox_t *x, mica__ox_node_t *n,
                                         mica__ox_value_t *v,
                                         mica__ox_value_t *scale,
                                         mica__ox_value_t *bias,
                                         uint32_t axes, double eps,
                                         int64_t groups, int rms,
                                         const char *name);
extern const mica__ox_op_t mica__ox_ops_quant[];
/* HardSwish, Swish, Mish, Celu, LpNormalization (op_act.c). */
extern const mica__ox_op_t mica__ox_ops_act[];
/* QuantizeLinear or DequantizeLinear of other types than int8, or of
 * scales other than float32, in float layers (op_quant.c). */
mica_status_t mica__ox_qdq_uint8(mica__ox_t *x, mica__ox_node_t *n,
                                 int quantize, int64_t axis);
/* All of them, NULL-terminated (import.c). */
extern const mica__ox_op_t *const mica__ox_op_tables[];

/* The op for (domain, type), NULL if not one of the tables'. */
const mica__ox_op_t *mica__ox_find_op(const char *domain, const char *type);

/* A registered creator of (ns, type) into *info; 0 if none (thirdparty.c). */
int mica__ox_find_creator(mica_context_t *ctx, const char *ns,
                          const char *type, mica_creator_info_t *info);
/* A registered third-party layer type of (ns, type), as TensorRT's parser
 * falls back to plugins. */
mica_status_t mica__ox_third_party(mica__ox_t *x, mica__ox_node_t *n,
                                   const mica_creator_info_t *info);

/* ---- emit.c ----------------------------------------------------------- */

/* The manifest's YAML text (malloc'd, NUL-terminated), naming
 * `weights_file` for the blob. */
char *mica__ox_emit(mica__ox_t *x, const char *source,
                    const char *weights_file, size_t *len);

/* ---- api.c: the weights file ---------------------------------------- */

/* Write the weights file to f; 0 or an errno. */
int mica__ox_write_weights(const mica__ox_t *x, FILE *f);
/* The weights file's bytes in memory (x->blob, made once); NULL after a
 * failure (NOMEM). */
const uint8_t *mica__ox_blob(mica__ox_t *x);

/* ---- import.c: the whole ------------------------------------------------ */

/* ---- profile.c -------------------------------------------------------- */

/* Parse "NAME:AxBxC,..." into x->ranges with bit `bit`. */
mica_status_t mica__ox_parse_shapes(mica__ox_t *x, const char *spec,
                                    int bit, const char *option);
/*
 * Whether the profile fixes input v (position pos among the graph's
 * inputs): its dimensions (values 0) or its values (values 1, an integer
 * input of at most MICA_MAX_DIMS elements), min = max each, from the
 * shape options or else the input the caller gives (mica run).  1 and
 * the *n numbers in out, or 0.  For dims, those of a range that the
 * options do not fix are -1 in out.
 */
int mica__ox_profile_fixed(mica__ox_t *x, const mica__ox_value_t *v,
                           int32_t pos, int values, int64_t *out,
                           int32_t *n);
/* The range of dimension i of graph input v in its profile (the shape
 * options' min and max, one left out taken from another): 1 and *lo,
 * *hi, or 0 when v is not an input the options give shapes for. */
int mica__ox_dim_range(const mica__ox_t *x, const mica__ox_value_t *v,
                       int32_t i, int64_t *lo, int64_t *hi);
/* The graph inputs the value of tensor `t` is computed from, when each
 * is an integer input whose values the profile fixes and every layer on
 * the way computes on the host (shape arithmetic): their number, names
 * into `names` (at most `cap`); 0 when none, -1 when something else
 * (a runtime dimension, an input the profile does not fix, a layer that
 * is not shape arithmetic) feeds it, and then *why (when why is not
 * NULL) says what, for a message. */
int32_t mica__ox_fixed_sources(mica__ox_t *x, const char *t,
                               const char **names, int32_t cap,
                               const char **why);

/* Mark the inputs layers read as shapes (after every node is mapped). */
mica_status_t mica__ox_mark_shape_inputs(mica__ox_t *x);
/* Check and complete the profile of every input that needs one. */
mica_status_t mica__ox_profiles(mica__ox_t *x);
mica_status_t mica__ox_import(mica__ox_t *x);

#endif /* MICA_ONNX_INT_H */
