/*
 * core/format/format.h - the engine file format, in one room: its layout,
 * magic, versions and alignment; the bounds-checked reader and the writer
 * of its payload (read.c, write.c); one layer's saved record (layer.c);
 * the expression table (exprs.c); the fields' byte form checked against
 * a creator's schema (fields_form.c).  Files are written in format 4
 * (write.c) and read in formats 1 to 4 (load.c: the header; restore.c:
 * formats 3 and 4; legacy.c: formats 1 and 2).
 *
 * Header, 32 bytes, little-endian (as the machines mica runs on):
 *     8   magic "MICAENG\0"
 *     u32 format version (4)
 *     u32 ABI version the engine's modules were used through
 *     u64 payload bytes
 *     u64 checksum of the payload (mica__checksum)
 * The checksum finds damage; it is not a signature: whoever can write
 * the file can make any payload pass it.  Every field of the payload is
 * therefore checked as it is read, whatever the checksum says.
 *
 * Primitives: u32/i32/i64/f32 little-endian; a string or bytes: u32
 * length + data (no NUL); dims: u32 rank (<= MICA_MAX_DIMS) + i64 each.
 * A state: u32 length, then, if the length is not 0, zero bytes up to
 * the next multiple of STATE_ALIGN (64) from the start of the file, then
 * the state's bytes: a loader that keeps the file (mapped at a page
 * boundary) hands each layer 64-byte aligned state to use in place.
 *
 * Formats 3 and 4: the engine as built, restored without building
 * again.  Format 4 is format 3 with its last two sections always
 * written (fusions, passes).
 *   u32 device
 *   counts: u32 tensors, layers, symbols, expressions, constructs,
 *           program, inputs, outputs, shape outputs, user profiles,
 *           profiles
 *   symbols:  u32 kind, i32 input, i32 tensor, i32 axis, name, meaning,
 *             [u32 expression: the bound of a data-dependent size]
 *   expressions, operands first: u32 kind (mica_expr_op_t, or 100 a
 *             constant, 101 a symbol), then i64 value (constant), u32
 *             symbol (symbol) or u32 a, u32 b (operation: earlier
 *             expressions), then i64 lo, i64 hi
 *   tensors:  name, u32 dtype, u32 flags (MICA__T_*), i32 producer,
 *             i32 first_symbol, i32 alias (the input of its producer whose
 *             memory it takes over, -1), u32 format (mica_format_t), f32
 *             scale, shape text, u32 rank, u32
 *             expression per dimension, [u32 nb_values, u32 expression
 *             per value: a shape tensor's values, flag MICA__T_VALUES]
 *   network inputs, outputs, shape outputs: i32 tensor each
 *   layers, in execution order: the layer record (layer.c)
 *   constructs: name, u32 kind, i32 parent, i32 branch, i32 begin,
 *             i32 end, u32 live, i32 trip_limit, u32 read_at_entry,
 *             i32 condition, then u32 n + i32 steps for its heads,
 *             iterators and exits
 *   program:  u32 kind, i32 arg, i32 target, i32 branch per instruction
 *   profiles: per profile, per network input: u32 set [dims min/opt/max,
 *             u32 nb_values, i32 values min/opt/max]; per tensor: dims
 *             min/opt/max, i64 bytes, i64 offset; per layer: i64
 *             workspace, i64 workspace offset; then i64 arena bytes
 *   fusions (format 3: written only where some layer was made by a
 *             fusion rule, a file without them reads as before; format
 *             4: always): u32 n, then per record i32 layer, its record
 *             ("RULE: NAME (TYPE), ...")
 *   passes (format 4): u32 n, then per graph pass that ran before the
 *             build (core/passes/), in order: name, summary, i64 count
 *             of what it changed
 *
 * Formats 1 and 2 (read, no longer written) hold the network, not the
 * engine, and are built again when they load:
 *   u32 device
 *   inputs:   u32 n, then name, u32 dtype, u32 is_shape, dims
 *   profiles: u32 n, then per input u32 set [dims min/opt/max,
 *             u32 nb_values, i32 values min/opt/max]
 *   layers:   u32 n, then the layer record (layer.c)
 *   outputs, shape outputs: u32 n, names
 *   plan:     u32 n, i64 arena bytes per profile
 *   scales:   u32 n, then name, f32 scale (tensors whose scale is not 1)
 * Format 1 is format 2 without state padding, loops and conditionals.
 *
 * What follows from the rest is not stored: a tensor's lifetime in the
 * arena comes from its readers and the loops it crosses, as in a build.
 *
 * Every count is checked against the bytes that remain before anything
 * is allocated for it, every index against what it indexes, every size
 * and offset with checked arithmetic; whatever the bytes, a load ends in
 * an engine or in one line saying what is wrong.
 */
#ifndef MICA_FORMAT_H
#define MICA_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"

#define ENGINE_MAGIC "MICAENG"
#define ENGINE_FORMAT 4      /* the newest format read, the one written */
#define ENGINE_FORMAT_MIN 1  /* the oldest read */
#define HEADER_BYTES 32
#define STATE_ALIGN 64
#define MAX_ITEMS 1000000    /* the most of anything a reader takes */
#define MAX_EXPR_DEPTH 4096  /* the deepest expression written or read */
#define MAX_EXPR_PATHS (1u << 20) /* the most nodes one evaluation visits */

/* Bits of a tensor's flags (format 3). */
#define MICA__T_INPUT 1u
#define MICA__T_OUTPUT 2u
#define MICA__T_SHAPE_OUTPUT 4u
#define MICA__T_SHAPE_INPUT 8u
#define MICA__T_NEED_E 16u
#define MICA__T_NEED_S 32u
#define MICA__T_NEED_DIMS 64u
#define MICA__T_VALUES 128u     /* a shape tensor's values follow */
#define MICA__T_FLAGS 255u

/* ---- reading ---------------------------------------------------------- */

/* A payload being read: every read past its end sets `bad` and yields
 * zeros, so a reader checks once, at the end of what it reads. */
typedef struct mica__in {
    const unsigned char *p;  /* the payload, HEADER_BYTES into the data */
    size_t len, pos;
    uint32_t format;
    int bad;
} mica__in_t;

/* n bytes, NULL (bad) past the end. */
const void *mica__in_take(mica__in_t *r, size_t n);
uint32_t mica__in_u32(mica__in_t *r);
int32_t mica__in_i32(mica__in_t *r);
int64_t mica__in_i64(mica__in_t *r);
float mica__in_f32(mica__in_t *r);
/* A count of items of at least min_bytes each that the rest can hold
 * (bad, and 0, if it cannot or it is over MAX_ITEMS). */
uint32_t mica__in_count(mica__in_t *r, size_t min_bytes);
/* An index in [-1, n) (allow_none) or [0, n); bad otherwise. */
int32_t mica__in_index(mica__in_t *r, int32_t n, int allow_none);
/* u32 length + bytes, in place. */
const void *mica__in_bytes(mica__in_t *r, size_t *n);
/* A layer's state in place (format 2 and later: after its padding). */
const void *mica__in_state(mica__in_t *r, size_t *n);
/* A string, malloc'd; NULL when bad or out of memory. */
char *mica__in_str(mica__in_t *r);
void mica__in_dims(mica__in_t *r, mica_dims_t *d);

/* ---- writing ---------------------------------------------------------- */

/* A payload being written: a failed allocation sets `failed` and every
 * later write does nothing, so a writer checks once, at the end. */
typedef struct mica__out {
    unsigned char *p;
    size_t len, cap;
    int failed;
} mica__out_t;

void mica__out_put(mica__out_t *o, const void *data, size_t n);
void mica__out_u32(mica__out_t *o, uint32_t v);
void mica__out_i32(mica__out_t *o, int32_t v);
void mica__out_i64(mica__out_t *o, int64_t v);
void mica__out_f32(mica__out_t *o, float v);
void mica__out_str(mica__out_t *o, const char *s);
void mica__out_dims(mica__out_t *o, const mica_dims_t *d);
/* Zero bytes up to the next multiple of STATE_ALIGN from the start. */
void mica__out_pad(mica__out_t *o);

/* ---- one layer's record ----------------------------------------------- */

/* Bits of a saved layer's flags. */
#define MICA__SAVED_LAYER_PINNED 1u  /* pinned by the layer (all formats) */
#define MICA__SAVED_PINNED 2u        /* chosen by name: no negotiation */
#define MICA__SAVED_RUN_HOST 4u      /* runs in phase 1 */
#define MICA__SAVED_RUN_DEVICE 8u    /* runs on the device */
#define MICA__SAVED_FLAGS_V2 1u      /* the bits formats 1 and 2 know */
#define MICA__SAVED_FLAGS 15u

/*
 * What an engine file holds of one layer, in every format.  Formats 1
 * and 2 name its tensors and its loop and conditional (the network is
 * built again); format 3 gives tensor indices, input kinds and its
 * place in the engine's constructs.  Pointers of a record read from a
 * file are the reader's (strings) or point into the file's bytes
 * (states).
 */
typedef struct mica__saved_layer {
    char *name, *origin, *ns, *type, *implementation, *why;
    int32_t version;
    uint32_t flags;              /* MICA__SAVED_* */
    int32_t nb_inputs, nb_outputs;
    /* formats 1 and 2 */
    char *loop, *conditional;    /* "" if none */
    char **input_names;          /* NULL entries: omitted inputs */
    char **output_names;
    /* format 3 */
    int32_t construct, branch;
    int32_t tactic;              /* 0: none */
    int32_t *inputs;             /* tensor indices, -1 omitted */
    int32_t *input_kinds;        /* mica_input_kind_t */
    int32_t *outputs;
    /* the state its serialize() wrote, and its CPU twin's */
    const void *state;
    size_t state_size;
    char *host_impl;             /* "" if none */
    const void *host_state;
    size_t host_state_size;
} mica__saved_layer_t;

/*
 * Read one layer's record of r's format into s (zeroed first).  Checks
 * what the record alone can say (flags, counts, indices within
 * nb_tensors, kinds, strings); MICA_ERR_INVALID if it does not hold,
 * MICA_ERR_NOMEM.  Free s with mica__saved_layer_free either way.
 */
mica_status_t mica__saved_layer_read(mica__in_t *r, int32_t nb_tensors,
                                     int32_t nb_constructs,
                                     mica__saved_layer_t *s);
void mica__saved_layer_free(mica__saved_layer_t *s);

/* Append layer s of engine e (format 3) to o: its instances serialized
 * as states.  Fails on e's context. */
struct mica__layer;
mica_status_t mica__saved_layer_write(const mica_engine_t *e,
                                      const struct mica__layer *l,
                                      mica__out_t *o);

/* ---- expressions (exprs.c) -------------------------------------------- */

/*
 * Every expression the tensors of e use, numbered so that operands come
 * first.  mica__expr_table_id gives the number of one of them.
 */
typedef struct mica__expr_table mica__expr_table_t;
mica_status_t mica__expr_table_make(const mica_engine_t *e,
                                    mica__expr_table_t **out);
uint32_t mica__expr_table_count(const mica__expr_table_t *t);
uint32_t mica__expr_table_id(const mica__expr_table_t *t,
                             const mica_expr_t *x);
/* Write the table's nodes, operands first. */
void mica__expr_table_write(const mica__expr_table_t *t, mica__out_t *o);
void mica__expr_table_free(mica__expr_table_t *t);

/*
 * Read n nodes into nodes[] (built in e's expression builder), checking
 * kinds, operands (earlier nodes), symbol ids (e's symbols, already
 * read), depth (MAX_EXPR_DEPTH) and the work of evaluating each
 * (MAX_EXPR_PATHS).  0, or -1 with r->bad set.
 */
int mica__expr_table_read(mica__in_t *r, mica_engine_t *e, uint32_t n,
                          const mica_expr_t **nodes);

/* ---- the fields' byte form (fields_form.c) ---------------------------- */

/*
 * Whether `state` is in the fields' byte form of the module kit
 * (<mica/kit.h>: magic "MFL1" or "MFL2"); a module's own state is
 * anything else.
 */
int mica__fields_form_is(const void *state, size_t size);

/*
 * Read a state in the fields' byte form and check its fields against
 * creator c's schema with the one validator (core/base/fields.c), as a
 * manifest's params are: every count against the bytes that remain
 * before anything is allocated, then types, counts, enum values and
 * dtypes, required fields, no unknown field.  On failure writes "param
 * 'p': ..." or what is malformed into err (one line, no layer name).
 */
mica_status_t mica__fields_form_check(const mica_layer_creator_t *c,
                                      const void *state, size_t size,
                                      char *err, size_t errlen);

/* ---- loading ---------------------------------------------------------- */

/*
 * What loaders are told: the context, "engine file 'x'" or "engine" for
 * messages, what the layers' deserialize_ex is told (state_flags), the
 * payload's reader (its format set).
 */
typedef struct mica__load {
    mica_context_t *ctx;
    const char *what;
    uint32_t state_flags;
    mica__in_t r;
} mica__load_t;

/* "WHAT is corrupt: bad WHERE" on the context; MICA_ERR_INVALID. */
mica_status_t mica__load_corrupt(mica__load_t *l, const char *where);

/* The engine of a payload of format 1 or 2: the network it holds, built
 * for its saved device (legacy.c). */
mica_status_t mica__load_legacy(mica__load_t *l, mica_engine_t **out);

/* The engine of a payload of format 3, restored (restore.c). */
mica_status_t mica__load_restore(mica__load_t *l, mica_engine_t **out);

#endif /* MICA_FORMAT_H */
