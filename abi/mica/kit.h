/*
 * mica/kit.h - the module kit: what a layer module needs beyond the raw
 * ABI of <mica/module.h>, so that a layer is its maths and little else.
 * Every in-tree module is written with it; this header is its reference.
 *
 * What it gives:
 *   - the host table kept for the module, and an error helper;
 *   - typed access to a layer's fields;
 *   - a layer base whose state is its fields: serialize, deserialize(_ex)
 *     and clone come for free, weights shared by a layer and its clones;
 *   - ready-made callbacks (one output, same shape, LINEAR formats...);
 *   - one macro for the usual CPU + CUDA pair of creators, one for the
 *     module's descriptor and entry point;
 *   - a lazy loader for libraries such as cuBLAS and cuDNN, opened on
 *     first use instead of at load time;
 *   - MICA_KIT_HD, the host-and-device function qualifier for scalar code
 *     shared by a CPU reference and CUDA kernels.
 * Beside it: <mica/kit_half.h> (float16 and bfloat16 conversions, host and
 * device) and <mica/kit_cuda.h> (MICA_KIT_CUDA_CHECK, grid sizes, device
 * copies, for CUDA code).
 *
 * Plain C (C99 and later, and C++ through the extern "C" guards: a .cu
 * file may include it).  Build a module with pkg-config:
 *
 *     cc -fPIC -shared $(pkg-config --cflags mica-module) -o foo.so foo.c \
 *         $(pkg-config --libs mica-module)
 *
 * and with CUDA kernels, from the variables of mica-module.pc (empty
 * when mica was built without CUDA):
 *
 *     nvcc        the nvcc mica was built with
 *     nvccflags   its flags: mica's GPU architectures, -Xcompiler -fPIC,
 *                 hidden symbols, -std=c++17, -DMICA_KIT_CUDA=1, the
 *                 kit's headers
 *     cuda_cflags for the module's C files: -DMICA_KIT_CUDA=1 and the
 *                 CUDA headers
 *     cuda_libs   to link: the static CUDA runtime, -lstdc++ where nvcc's
 *                 objects need it, the toolkit's run path
 *
 *     pc() { pkg-config "$@" mica-module; }
 *     $(pc --variable=nvcc) $(pc --variable=nvccflags) -c foo_cuda.cu
 *     cc -fPIC -shared $(pc --cflags) $(pc --variable=cuda_cflags) \
 *         -o foo.so foo.c foo_cuda.o $(pc --libs) $(pc --variable=cuda_libs)
 *
 * The helper library, libmica_kit.a.  A static archive of PIC objects
 * with hidden symbols, not a header-only kit and not a shared library:
 * the field-state layer (a byte format with its reader, a shared
 * reference-counted copy of the fields) is some 600 lines that would
 * otherwise be compiled into every file that includes this header; an
 * archive puts into each module only the parts it uses, each module
 * keeps its own hidden copy (no symbol is shared between modules, and a
 * module stays loadable by any host of its ABI version, with no library
 * of the kit to find at run time), and the module still never links
 * libmica.  The kit's state is per module: mica_kit_host, the loader's
 * libraries.
 *
 * CUDA.  A module's CUDA code links the CUDA runtime statically
 * (cudart_static: `pkg-config --variable=cuda_libs mica-module`, or
 * nvcc's default when nvcc links), so that loading the module maps no GPU
 * library: a process that never uses a CUDA device (`mica modules`, a CPU
 * run) never pays for them.  Device pointers, streams and events are
 * those of the primary context, shared with the host's CUDA runtime.
 * Libraries such as cuBLAS, cuBLASLt and cuDNN are reached through
 * mica_kit_lib_open() below, never linked.
 *
 * A minimal module, one layer with a CPU and a CUDA implementation:
 *
 *     #include <mica/kit.h>
 *
 *     static MICA_KIT_ENQUEUE(twice_cpu) {...}
 *     #if MICA_KIT_CUDA
 *     static MICA_KIT_ENQUEUE(twice_cuda) {...}   // calls its launcher
 *     #endif
 *
 *     MICA_KIT_LAYER_PAIR(twice, "Twice", NULL, 0, mica_kit_layer_create,
 *                         twice_cpu, twice_cuda,
 *                         .nb_outputs = mica_kit_one_output,
 *                         .output_dtypes = mica_kit_same_dtypes,
 *                         .output_dims = mica_kit_same_dims,
 *                         .supports_format = mica_kit_float_linear)
 *     static const mica_layer_creator_t *const creators[] = {
 *         MICA_KIT_PAIR(twice)};
 *     MICA_KIT_ENTRY("twice", "1.0.0", "MIT", "Twice: y = 2x", creators)
 *
 * examples/swish/ in mica's sources is a complete one.
 */
#ifndef MICA_KIT_H
#define MICA_KIT_H

#include <stddef.h>
#include <stdint.h>

#include "mica/module.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kit's version; raised when the kit grows (never when it breaks):
 * 2 added broadcasting (mica_kit_broadcast_dims, _view, _offsets). */
#define MICA_KIT_VERSION 2

/*
 * Whether the module being compiled has CUDA implementations: define
 * MICA_KIT_CUDA to 1 where the CUDA half is built (-DMICA_KIT_CUDA=1;
 * `pkg-config --variable=cuda_cflags mica-module` has it).  mica's own
 * modules get it from config.h's MICA_HAVE_CUDA.  0 otherwise.
 */
#ifndef MICA_KIT_CUDA
#ifdef MICA_HAVE_CUDA
#define MICA_KIT_CUDA 1
#else
#define MICA_KIT_CUDA 0
#endif
#endif

/* Its arguments when MICA_KIT_CUDA is 1, nothing otherwise: for a
 * declaration or an initializer that only exists with CUDA. */
#if MICA_KIT_CUDA
#define MICA_KIT_IF_CUDA(...) __VA_ARGS__
#else
#define MICA_KIT_IF_CUDA(...)
#endif

/*
 * The qualifier of a small function shared by the CPU reference and the
 * CUDA kernels (put it in a header both include): `static inline` in C,
 * a forced-inline host and device function under nvcc.
 *
 *     MICA_KIT_HD float swish(float x) { return x / (1.0f + expf(-x)); }
 */
#ifdef __CUDACC__
#define MICA_KIT_HD static __host__ __device__ __forceinline__
#else
#define MICA_KIT_HD static inline
#endif

/* The kit's functions are hidden in the module that links them. */
#if defined(__GNUC__) && !defined(_WIN32)
#define MICA_KIT_API __attribute__((visibility("hidden")))
#else
#define MICA_KIT_API
#endif

/* Element count of an array (not a pointer), as int32_t. */
#define MICA_KIT_COUNT(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

/* ---- the host ----------------------------------------------------------- */

/*
 * The host table, kept by mica_kit_init() (which MICA_KIT_ENTRY calls):
 * valid from the entry point until the module is unloaded.
 */
extern MICA_KIT_API const mica_host_t *mica_kit_host;

/*
 * Keep `host` in mica_kit_host.  Refuses (MICA_ERR_ABI, with a message)
 * a host older than ABI version 1 or whose table lacks a version 1
 * service.
 */
MICA_KIT_API mica_status_t mica_kit_init(const mica_host_t *host,
                                         mica_error_t *err);

/*
 * Run `fn` when the host unloads the module (its descriptor's fini, which
 * MICA_KIT_ENTRY sets to mica_kit_fini): for what the module keeps for its
 * whole life, such as a library's engine or handle, so that nothing it
 * made outlives its code.  Functions run newest first, each outside the
 * kit's lock (so fn may take a lock that its registrant held while
 * registering it).  Returns 0, or -1 when MICA_KIT_MAX_FINI are already
 * registered (fn is then not called).  Thread-safe.
 */
#define MICA_KIT_MAX_FINI 16
MICA_KIT_API int mica_kit_at_fini(void (*fn)(void));

/* Run the functions of mica_kit_at_fini, newest first, and forget them.
 * A module with a descriptor of its own calls it from its fini. */
MICA_KIT_API void mica_kit_fini(void);

/*
 * Fill the call's error slot (printf-style, one line, no final period)
 * and evaluate to MICA_ERR_INVALID:
 *
 *     if (nb_in != 1)
 *         return MICA_KIT_FAIL(err, "Swish takes 1 input, got %d", nb_in);
 */
#define MICA_KIT_FAIL(err, ...)                                             \
    (mica_kit_host->set_error((err), __VA_ARGS__), MICA_ERR_INVALID)

/* ---- fields ------------------------------------------------------------- */

/*
 * The fields a create() receives have passed the core's validator
 * against the creator's schema: a required field is present, an enum is
 * one of its names (its value is the index), a dtype is a valid one, and
 * a field of fixed count has that count; absent fields with a default
 * hold it.  The kit's deserialize checks the same of the fields read
 * from an engine file.  So a module checks only what the schema cannot
 * say (ranges, a value against another field).
 */

/* Scalar (element 0) of a numeric field as int64 or double; `dflt` if
 * absent, empty, or a string or weights. */
MICA_KIT_API int64_t mica_kit_int(const mica_fields_t *f, const char *name,
                                  int64_t dflt);
MICA_KIT_API double mica_kit_float(const mica_fields_t *f, const char *name,
                                   double dflt);
/* Element count of a field, -1 if absent. */
MICA_KIT_API int32_t mica_kit_count(const mica_fields_t *f, const char *name);
/* The int64 values of an INT, BOOL, ENUM or DTYPE field; NULL if absent. */
MICA_KIT_API const int64_t *mica_kit_ints(const mica_fields_t *f,
                                          const char *name);
/* The first weights of a WEIGHTS field, NULL if absent. */
MICA_KIT_API const mica_weights_t *mica_kit_weights(const mica_fields_t *f,
                                                    const char *name);
/* The first string of a STRING field, NULL if absent. */
MICA_KIT_API const char *mica_kit_string(const mica_fields_t *f,
                                         const char *name);

/* ---- a shared copy of fields -------------------------------------------- */

/*
 * A deep copy of fields (weights included), immutable and reference
 * counted (atomically: clones may be made and dropped on several threads
 * at once), with a flat byte form: native little-endian, every weights'
 * values at a multiple of 64 bytes from the form's start.
 */
typedef struct mica_kit_fields mica_kit_fields_t;

/* A copy of f; NULL if memory runs out. */
MICA_KIT_API mica_kit_fields_t *mica_kit_fields_copy(const mica_fields_t *f);
/* The fields, as mica_fields_t; valid while f is. */
MICA_KIT_API const mica_fields_t *mica_kit_fields_view(
    const mica_kit_fields_t *f);
/* Another reference to f (returned). */
MICA_KIT_API mica_kit_fields_t *mica_kit_fields_share(mica_kit_fields_t *f);
/* Drop a reference; the last frees f.  NULL is ignored. */
MICA_KIT_API void mica_kit_fields_free(mica_kit_fields_t *f);
/* The byte form.  buf NULL: *size gets the size needed; else *size is
 * the capacity in and the size written out (MICA_ERR_INVALID if short). */
MICA_KIT_API mica_status_t mica_kit_fields_save(const mica_kit_fields_t *f,
                                                void *buf, size_t *size);
/*
 * Fields read from a byte form (the current one or the unpadded one of
 * engine files of format 1); NULL if it is corrupt or memory runs out.
 * With `borrow` (the bytes stay valid and unchanged for the fields' whole
 * life, as with MICA_STATE_PERSISTENT), weights aligned for their element
 * type are used in place, not copied.
 */
MICA_KIT_API mica_kit_fields_t *mica_kit_fields_load(const void *buf,
                                                     size_t size, int borrow);
/*
 * Whether `f` satisfies what the core's validator guarantees for
 * `creator`'s schema (required fields present, enum and dtype values in
 * range, fixed counts, types): 1 or 0.
 */
MICA_KIT_API int mica_kit_fields_fit(const mica_fields_t *f,
                                     const mica_layer_creator_t *creator);

/* ---- the field-state layer ---------------------------------------------- */

/*
 * A layer whose whole state follows from its fields.  Embed it first in
 * the layer's struct:
 *
 *     typedef struct { mica_kit_layer_t base; int op; } my_layer_t;
 *
 * build it with mica_kit_layer_new() from the creator's create(), and use
 * mica_kit_layer_serialize / _clone / _destroy in its ops table
 * (MICA_KIT_OPS does) and mica_kit_layer_deserialize(_ex) in its creator
 * (MICA_KIT_CREATOR does).  Deserializing reads the fields and calls the
 * creator's create() with them; create() then keeps those fields through
 * mica_kit_layer_new instead of copying them, and a clone shares its
 * layer's (create() again, taking the fields over the same way): the
 * weights exist once per engine, in place in the engine's bytes when it
 * was loaded with MICA_STATE_PERSISTENT.  A create() must therefore treat
 * its fields as read-only and shared.  `fini`, if set, frees what the
 * derived layer owns (device buffers, handles) before the base is freed.
 */
typedef struct mica_kit_layer {
    mica_layer_t layer;
    const mica_layer_creator_t *creator;
    char *name;
    mica_kit_fields_t *fields;
    void (*fini)(struct mica_kit_layer *self);
} mica_kit_layer_t;

/*
 * Allocate `size` bytes (>= sizeof(mica_kit_layer_t)) zeroed and set
 * ops, creator, a copy of name and the fields.  NULL (and err set) when
 * memory runs out.
 */
MICA_KIT_API void *mica_kit_layer_new(size_t size,
                                      const mica_layer_ops_t *ops,
                                      const mica_layer_creator_t *creator,
                                      const char *name,
                                      const mica_fields_t *fields,
                                      mica_error_t *err);

/*
 * The create() of a layer with no struct of its own (its fields are all
 * it needs): the creator's user_data holds its ops, as MICA_KIT_CREATOR
 * and MICA_KIT_LAYER_PAIR set it.
 */
MICA_KIT_API mica_layer_t *mica_kit_layer_create(
    const mica_layer_creator_t *creator, const char *name,
    const mica_fields_t *fields, mica_error_t *err);

MICA_KIT_API mica_status_t mica_kit_layer_serialize(const mica_layer_t *layer,
                                                    void *buf, size_t *size);
MICA_KIT_API mica_layer_t *mica_kit_layer_clone(const mica_layer_t *layer,
                                                mica_error_t *err);
MICA_KIT_API void mica_kit_layer_destroy(mica_layer_t *layer);
/* Fails with "layer 'NAME': serialized TYPE state is corrupt (N bytes)"
 * when the bytes cannot be read or do not fit the creator's schema. */
MICA_KIT_API mica_layer_t *mica_kit_layer_deserialize(
    const mica_layer_creator_t *c, const char *name, const void *data,
    size_t size, mica_error_t *err);
/* With MICA_STATE_PERSISTENT in flags, weights are borrowed in place. */
MICA_KIT_API mica_layer_t *mica_kit_layer_deserialize_ex(
    const mica_layer_creator_t *c, const char *name, const void *data,
    size_t size, uint32_t flags, mica_error_t *err);

/* ---- ready-made callbacks ----------------------------------------------- */

/* nb_outputs of a layer with one output, and of one with none. */
MICA_KIT_API int32_t mica_kit_one_output(const mica_layer_t *layer);
MICA_KIT_API int32_t mica_kit_no_outputs(const mica_layer_t *layer);

/* output_dims of a layer with no outputs: fails, saying so. */
MICA_KIT_API mica_status_t mica_kit_no_output_dims(
    const mica_layer_t *layer, int32_t index, const mica_shape_expr_t *in,
    int32_t nb_in, mica_expr_builder_t *eb, mica_shape_expr_t *out,
    mica_error_t *err);

/* output_dtypes of a layer with one input and one output of its type. */
MICA_KIT_API mica_status_t mica_kit_same_dtypes(const mica_layer_t *layer,
                                                const mica_dtype_t *in,
                                                int32_t nb_in,
                                                mica_dtype_t *out,
                                                int32_t nb_out,
                                                mica_error_t *err);

/* output_dims of a layer whose only output has its first input's shape. */
MICA_KIT_API mica_status_t mica_kit_same_dims(const mica_layer_t *layer,
                                              int32_t index,
                                              const mica_shape_expr_t *in,
                                              int32_t nb_in,
                                              mica_expr_builder_t *eb,
                                              mica_shape_expr_t *out,
                                              mica_error_t *err);

/* supports_format of a layer with one input and one output, LINEAR, of
 * one floating type: float32 or float16. */
MICA_KIT_API int32_t mica_kit_float_linear(const mica_layer_t *layer,
                                          int32_t pos,
                                          const mica_tensor_desc_t *io,
                                          int32_t nb_in, int32_t nb_out);

/* supports_format of a layer with one LINEAR bool input and no outputs
 * (a condition: Assertion, Condition). */
MICA_KIT_API int32_t mica_kit_bool_input(const mica_layer_t *layer,
                                         int32_t pos,
                                         const mica_tensor_desc_t *io,
                                         int32_t nb_in, int32_t nb_out);

/* Whether io[pos] is in the LINEAR format: 1 or 0. */
MICA_KIT_API int32_t mica_kit_linear(const mica_tensor_desc_t *io,
                                     int32_t pos);

/*
 * The channels-last format of a tensor of rank `rank` (MICA_FORMAT_HWC
 * for 4, MICA_FORMAT_DHWC for 5), or MICA_FORMAT_LINEAR when it has none.
 */
MICA_KIT_API mica_format_t mica_kit_channels_last(int32_t rank);

/*
 * The strides, in elements, of each logical dimension of `d` in memory,
 * for its format (<mica/types.h>): element (i0, i1, ...) lies at
 * sum(i_k * strides[k]).  Returns 0 for a format that does not apply to
 * the tensor's rank (channels last of a rank other than 4 or 5), 1
 * otherwise.  A layer that computes element by element in any format
 * reads and writes through these.
 */
MICA_KIT_API int mica_kit_strides(const mica_tensor_desc_t *d,
                                  int64_t strides[MICA_MAX_DIMS]);

/* Whether a pure data movement takes type t: float32, float16, bfloat16,
 * int8, uint8, int32, int64 and bool. */
MICA_KIT_API int mica_kit_any_type(mica_dtype_t t);

/* The enqueue of a boundary layer (a loop's or a conditional's), which the
 * core never calls (it runs them through enqueue_boundary): fails saying
 * so. */
MICA_KIT_API mica_status_t mica_kit_boundary_enqueue(
    mica_layer_t *layer, const mica_tensor_desc_t *in, int32_t nb_in,
    const mica_tensor_desc_t *out, int32_t nb_out, const void *const *inputs,
    void *const *outputs, void *workspace, void *stream, mica_error_t *err);

/* ---- broadcasting -------------------------------------------------------- */

/*
 * TensorRT's broadcast (ElementWise, Select, ParametricReLU): inputs of
 * one rank; along each axis the lengths are equal or one of them is 1,
 * and the output takes the other (1 against 0 gives 0).
 */

/*
 * output_dims of such a layer: the broadcast of inputs in[0..nb_in-1]
 * (nb_in >= 1) into *out.  Fails with "input 1 has rank 3 but input 0
 * has rank 2", or, for two build-time lengths that neither match nor
 * are 1, "dimension 1 of input 0 is 3 and of input 1 is 4: they must be
 * equal or one of them 1".  A runtime length against another gives
 * a + (a == 1) * (b - a), checked when the layer runs
 * (mica_kit_broadcast_view).
 */
MICA_KIT_API mica_status_t mica_kit_broadcast_dims(
    const mica_shape_expr_t *in, int32_t nb_in, mica_expr_builder_t *eb,
    mica_shape_expr_t *out, mica_error_t *err);

/* Inputs a broadcast view holds at most. */
#define MICA_KIT_BCAST_MAX_IN 3

/*
 * How an output element reads its inputs: the output's dimensions d[]
 * (row-major, rank of them) and, per input, the element stride of each
 * dimension (0 along a broadcast one).  Plain data: pass it to a kernel
 * by value.
 */
typedef struct mica_kit_bcast {
    int32_t rank;
    int32_t nb_in;
    int64_t d[MICA_MAX_DIMS];
    int64_t s[MICA_KIT_BCAST_MAX_IN][MICA_MAX_DIMS];
} mica_kit_bcast_t;

/*
 * The view of inputs in[0..nb_in-1] (1 to MICA_KIT_BCAST_MAX_IN) read
 * by an output of dimensions `out`, from their actual dimensions: fails
 * with "input 1 has rank 2 but the output has rank 3" or "dimension 0
 * of input 1 is 3, which does not broadcast to 4" (runtime lengths are
 * only known here).  With `fold` non-zero, dimensions of length 1 are
 * dropped and neighbours that every input walks contiguously are merged
 * (fewer divisions per element in a kernel); the view then may have
 * rank 0 (one element, or none).  Without, rank and d are out's.
 */
MICA_KIT_API mica_status_t mica_kit_broadcast_view(
    const mica_tensor_desc_t *in, int32_t nb_in, const mica_dims_t *out,
    int fold, mica_kit_bcast_t *v, mica_error_t *err);

/* The element offset in each input (off[0..v->nb_in-1]) of output
 * element i, 0 <= i < the output's volume. */
MICA_KIT_HD void mica_kit_broadcast_offsets(const mica_kit_bcast_t *v,
                                            int64_t i, int64_t *off)
{
    int32_t k, j;
    for (j = 0; j < v->nb_in; j++)
        off[j] = 0;
    for (k = v->rank - 1; k >= 0; k--) {
        int64_t c = i % v->d[k];
        i /= v->d[k];
        for (j = 0; j < v->nb_in; j++)
            off[j] += c * v->s[j][k];
    }
}

/* ---- text for messages --------------------------------------------------- */

/* "[2, 3, 4]": n values into buf (len bytes, truncated if short); buf. */
MICA_KIT_API const char *mica_kit_ints_text(const int64_t *v, int32_t n,
                                            char *buf, size_t len);
/* "[2, ?, 4]": n dimension expressions, the value of each build-time
 * constant and "?" for the others; buf. */
MICA_KIT_API const char *mica_kit_exprs_text(const mica_expr_t *const *v,
                                             int32_t n, char *buf,
                                             size_t len);

/* ---- the enqueue signature ---------------------------------------------- */

/* A parameter that a callback may leave unused. */
#if defined(__GNUC__)
#define MICA_KIT_UNUSED __attribute__((unused))
#else
#define MICA_KIT_UNUSED
#endif

/*
 * The head of an enqueue callback named fn_, with the parameters of
 * mica_layer_ops_t's enqueue under fixed names (each may go unused):
 * layer, in, nb_in, out, nb_out, inputs, outputs, workspace, stream, err.
 *
 *     static MICA_KIT_ENQUEUE(twice_cpu)
 *     {
 *         int64_t i, n = mica_dims_volume(&out[0].dims);
 *         for (i = 0; i < n; i++)
 *             ((float *)outputs[0])[i] = 2 * ((const float *)inputs[0])[i];
 *         return MICA_OK;
 *     }
 */
#define MICA_KIT_ENQUEUE(fn_)                                               \
    mica_status_t fn_(                                                      \
        mica_layer_t *layer MICA_KIT_UNUSED,                                \
        const mica_tensor_desc_t *in MICA_KIT_UNUSED,                       \
        int32_t nb_in MICA_KIT_UNUSED,                                      \
        const mica_tensor_desc_t *out MICA_KIT_UNUSED,                      \
        int32_t nb_out MICA_KIT_UNUSED,                                     \
        const void *const *inputs MICA_KIT_UNUSED,                          \
        void *const *outputs MICA_KIT_UNUSED,                               \
        void *workspace MICA_KIT_UNUSED, void *stream MICA_KIT_UNUSED,      \
        mica_error_t *err MICA_KIT_UNUSED)

/* ---- creators and the entry point ---------------------------------------- */

/*
 * The ops table of a field-state layer: its size, `.enqueue = enqueue_`,
 * the kit's serialize, clone and destroy, then the other members given
 * by name (designated initializers, so that members the ABI appends
 * later stay NULL):
 *
 *     static const mica_layer_ops_t ops = MICA_KIT_OPS(my_enqueue,
 *         .nb_outputs = mica_kit_one_output, .output_dtypes = my_dtypes,
 *         .output_dims = my_dims, .supports_format = my_formats);
 */
#define MICA_KIT_OPS(enqueue_, ...)                                         \
    {.struct_size = sizeof(mica_layer_ops_t),                               \
     .enqueue = (enqueue_),                                                 \
     .serialize = mica_kit_layer_serialize,                                 \
     .clone = mica_kit_layer_clone,                                         \
     .destroy = mica_kit_layer_destroy,                                     \
     __VA_ARGS__}

/*
 * A creator (initializer) of version 1 in the default namespace whose
 * layers are field-state layers: it deserializes through
 * mica_kit_layer_deserialize(_ex); `user_data_` usually is the ops.
 * `fields_` is the schema array and `nb_fields_` its length (NULL and 0
 * for none).
 */
#define MICA_KIT_CREATOR(type_, impl_, devices_, priority_, role_,          \
                         fields_, nb_fields_, create_, user_data_)          \
    {.struct_size = sizeof(mica_layer_creator_t),                           \
     .type = (type_),                                                       \
     .version = 1,                                                          \
     .priority = (priority_),                                               \
     .ns = "",                                                              \
     .implementation = (impl_),                                             \
     .devices = (devices_),                                                 \
     .role = (role_),                                                       \
     .fields = (fields_),                                                   \
     .nb_fields = (nb_fields_),                                             \
     .create = (create_),                                                   \
     .deserialize = mica_kit_layer_deserialize,                             \
     .user_data = (void *)(user_data_),                                     \
     .deserialize_ex = mica_kit_layer_deserialize_ex}

/*
 * The usual pair of creators of one layer type, as static constants:
 * `id_##_creator_cpu`, implementation "reference" on the CPU (priority
 * 0), and, only when MICA_KIT_CUDA is 1, `id_##_creator_cuda`,
 * implementation "cuda" on CUDA (priority 10); user_data is ops_cpu_ /
 * ops_cuda_ (the latter is not even named without CUDA).
 * MICA_KIT_PAIR(id_) lists them.
 * MICA_KIT_ROLE_PAIR is the same for a boundary layer of role `role_`
 * (mica_layer_role_t); MICA_KIT_CREATOR_PAIR has MICA_ROLE_NONE.
 */
#define MICA_KIT_ROLE_PAIR(id_, type_, role_, fields_, nb_fields_, create_, \
                           ops_cpu_, ops_cuda_)                             \
    static const mica_layer_creator_t id_##_creator_cpu =                   \
        MICA_KIT_CREATOR(type_, "reference", MICA_DEVICE_CPU, 0, role_,     \
                         fields_, nb_fields_, create_, ops_cpu_);           \
    MICA_KIT_IF_CUDA(static const mica_layer_creator_t id_##_creator_cuda = \
                         MICA_KIT_CREATOR(type_, "cuda", MICA_DEVICE_CUDA,  \
                                          10, role_, fields_, nb_fields_,   \
                                          create_, ops_cuda_);)
#define MICA_KIT_CREATOR_PAIR(id_, type_, fields_, nb_fields_, create_,     \
                              ops_cpu_, ops_cuda_)                          \
    MICA_KIT_ROLE_PAIR(id_, type_, MICA_ROLE_NONE, fields_, nb_fields_,     \
                       create_, ops_cpu_, ops_cuda_)

/*
 * MICA_KIT_CREATOR_PAIR of a layer whose CPU and CUDA implementations
 * differ only in their enqueue: declares their ops tables `id_##_ops_cpu`
 * and `id_##_ops_cuda` (MICA_KIT_OPS with the members given after the
 * enqueues) and the two creators.
 */
#define MICA_KIT_LAYER_PAIR(id_, type_, fields_, nb_fields_, create_,       \
                            enqueue_cpu_, enqueue_cuda_, ...)               \
    static const mica_layer_ops_t id_##_ops_cpu =                           \
        MICA_KIT_OPS(enqueue_cpu_, __VA_ARGS__);                            \
    MICA_KIT_IF_CUDA(static const mica_layer_ops_t id_##_ops_cuda =         \
                         MICA_KIT_OPS(enqueue_cuda_, __VA_ARGS__);)         \
    MICA_KIT_CREATOR_PAIR(id_, type_, fields_, nb_fields_, create_,         \
                          &id_##_ops_cpu, &id_##_ops_cuda)

/* The creators of a pair, for the module's array of creators. */
#define MICA_KIT_PAIR(id_)                                                  \
    &id_##_creator_cpu MICA_KIT_IF_CUDA(, &id_##_creator_cuda)

/*
 * The module's descriptor and its entry point mica_module_init, for the
 * array of creators `creators_` (static const mica_layer_creator_t
 * *const []): mica_kit_init(host), then the descriptor, whose fini is
 * mica_kit_fini.  `version_` is the module's own version, `license_` may
 * be NULL.
 */
#define MICA_KIT_ENTRY(name_, version_, license_, description_, creators_)  \
    MICA_KIT_ENTRY_WITH_(name_, version_, license_, description_,           \
                         creators_, .nb_fusion_rules = 0)

/*
 * MICA_KIT_ENTRY for a module that also declares fusion rules
 * (<mica/module.h>): `rules_` a static const mica_fusion_rule_t
 * *const [], each rule written with MICA_KIT_FUSION_RULE (the fused
 * layer's inputs: input 0 and 1 of the ElementWise):
 *
 *     static const char *const sum[] = {"sum"}, *const relu[] = {"relu"};
 *     static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
 *     static const mica_fusion_cond_t is_relu[] = {{"type", relu, 1, 0}};
 *     static const mica_fusion_step_t add_relu_steps[] = {
 *         MICA_KIT_FUSION_STEP("ElementWise", 0, is_sum),
 *         MICA_KIT_FUSION_STEP("Activation", 0, is_relu)};
 *     static const mica_fusion_ref_t add_relu_inputs[] = {{0, 0}, {0, 1}};
 *     static const mica_fusion_rule_t add_relu = MICA_KIT_FUSION_RULE(
 *         "add_relu", "AddRelu", add_relu_steps, add_relu_inputs);
 *     static const mica_fusion_rule_t *const rules[] = {&add_relu};
 *     MICA_KIT_ENTRY_FUSION("addrelu", "1.0.0", "MIT", "AddRelu", creators,
 *                           rules)
 */
#define MICA_KIT_ENTRY_FUSION(name_, version_, license_, description_,     \
                              creators_, rules_)                            \
    MICA_KIT_ENTRY_WITH_(name_, version_, license_, description_,           \
                         creators_, .fusion_rules = (rules_),               \
                         .nb_fusion_rules = MICA_KIT_COUNT(rules_))

/* What both entries expand to: the descriptor, with the members given
 * after `creators_` (designated initializers), and the entry point. */
#define MICA_KIT_ENTRY_WITH_(name_, version_, license_, description_,      \
                             creators_, ...)                                \
    static const mica_module_desc_t mica_kit_desc_ = {                      \
        .struct_size = sizeof(mica_module_desc_t),                          \
        .abi_version = MICA_ABI_VERSION,                                    \
        .name = (name_),                                                    \
        .version = (version_),                                              \
        .license = (license_),                                              \
        .description = (description_),                                      \
        .creators = (creators_),                                            \
        .nb_creators = MICA_KIT_COUNT(creators_),                           \
        .fini = mica_kit_fini,                                              \
        __VA_ARGS__};                                                       \
    MICA_EXPORT mica_status_t mica_module_init(                             \
        const mica_host_t *host, const mica_module_desc_t **desc,           \
        mica_error_t *err)                                                  \
    {                                                                       \
        mica_status_t st_ = mica_kit_init(host, err);                       \
        if (st_ == MICA_OK)                                                 \
            *desc = &mica_kit_desc_;                                        \
        return st_;                                                         \
    }

/* A step of a fusion pattern: `type_`, fed at input `input_` (or
 * MICA_FUSION_ANY_INPUT) by the step before, with the conditions of the
 * array `conds_`; MICA_KIT_FUSION_STEP_ANY: without conditions. */
#define MICA_KIT_FUSION_STEP(type_, input_, conds_)                         \
    {.type = (type_), .input = (input_), .conds = (conds_),                 \
     .nb_conds = MICA_KIT_COUNT(conds_)}
#define MICA_KIT_FUSION_STEP_ANY(type_, input_)                             \
    {.type = (type_), .input = (input_)}

/* A fusion rule of the arrays `steps_` and `inputs_` (the fused layer's
 * inputs); MICA_KIT_FUSION_RULE_PARAMS: with the params copied from the
 * steps, the array `params_`; MICA_KIT_FUSION_RULE_WITH: with the other
 * members given (designated initializers: `.constants = ...`). */
#define MICA_KIT_FUSION_RULE(name_, type_, steps_, inputs_)                 \
    MICA_KIT_FUSION_RULE_WITH(name_, type_, steps_, inputs_, .params = NULL)
#define MICA_KIT_FUSION_RULE_PARAMS(name_, type_, steps_, inputs_, params_) \
    MICA_KIT_FUSION_RULE_WITH(name_, type_, steps_, inputs_,                \
                              .params = (params_),                          \
                              .nb_params = MICA_KIT_COUNT(params_))
#define MICA_KIT_FUSION_RULE_WITH(name_, type_, steps_, inputs_, ...)       \
    {.struct_size = sizeof(mica_fusion_rule_t), .name = (name_),            \
     .type = (type_), .steps = (steps_),                                    \
     .nb_steps = MICA_KIT_COUNT(steps_),                                    \
     .nb_inputs = MICA_KIT_COUNT(inputs_), .inputs = (inputs_),             \
     __VA_ARGS__}

/* ---- libraries opened on first use --------------------------------------- */

/*
 * A shared library the module reaches through a table of function
 * pointers, opened with dlopen by its versioned name the first time a
 * layer needs it (from create, configure or initialize: never at load
 * time), so that a process that never uses it never maps it.  cuBLAS,
 * cuBLASLt and cuDNN are used this way instead of being linked.
 *
 * Declare the table with the real headers' prototypes
 * (MICA_KIT_FN(f) is the type of a pointer to function f: decltype in
 * C++, typeof in GNU C and C23), list the symbols, and open it:
 *
 *     #include <cublas_v2.h>
 *
 *     static struct {
 *         MICA_KIT_FN(cublasCreate_v2) create;
 *         MICA_KIT_FN(cublasDestroy_v2) destroy;
 *     } cublas;
 *     static const mica_kit_sym_t cublas_syms[] = {
 *         MICA_KIT_SYM(cublas, create, "cublasCreate_v2"),
 *         MICA_KIT_SYM(cublas, destroy, "cublasDestroy_v2"),
 *     };
 *     static mica_kit_lib_t cublas_lib = MICA_KIT_LIB(
 *         "cuBLAS", "libcublas.so." MICA_KIT_STR(CUBLAS_VER_MAJOR),
 *         &cublas, cublas_syms);
 *
 *     // in configure():
 *     if ((st = mica_kit_lib_open(&cublas_lib, err)) != MICA_OK)
 *         return st;
 *     cublas.create(&handle);
 *
 * The name is the soname of the major version the module was compiled
 * against (libcublas.so.13, libcudnn.so.9), as the linker would have
 * recorded it.  The library is searched as dlopen does, the module's
 * own run path (-Wl,-rpath) included.  It stays loaded for the life of
 * the process, as a linked library would: libraries with handles, streams
 * or CUDA state are not safe to unload.  A library or symbol that is
 * missing is one line in err, e.g. "cuBLAS is needed but cannot be
 * loaded: libcublas.so.13: cannot open shared object file: No such file
 * or directory", and the open can be tried again later.
 */
#ifdef __cplusplus
#define MICA_KIT_FN(f) decltype(&f)
#else
#define MICA_KIT_FN(f) __typeof__(&f)
#endif

/* A string of a macro's value: MICA_KIT_STR(CUDNN_MAJOR) is "9". */
#define MICA_KIT_STR(x) MICA_KIT_STR_(x)
#define MICA_KIT_STR_(x) #x

/* One symbol of a table: its name and the offset of its member. */
typedef struct mica_kit_sym {
    const char *name;
    size_t offset;
} mica_kit_sym_t;

#define MICA_KIT_SYM(table_, member_, name_)                                \
    {(name_), offsetof(__typeof__(table_), member_)}
#ifdef __cplusplus
#undef MICA_KIT_SYM
#define MICA_KIT_SYM(table_, member_, name_)                                \
    {(name_), offsetof(decltype(table_), member_)}
#endif

/* A library: static data of the module; members are the kit's. */
typedef struct mica_kit_lib {
    const char *what;    /* for messages: "cuBLAS" */
    const char *soname;  /* "libcublas.so.13" */
    void *table;         /* the struct of function pointers to fill */
    const mica_kit_sym_t *syms;
    int32_t nb_syms;
    int32_t opened_;     /* 1 once every symbol is in the table */
    void *handle_;
} mica_kit_lib_t;

#define MICA_KIT_LIB(what_, soname_, table_, syms_)                         \
    {(what_), (soname_), (table_), (syms_), MICA_KIT_COUNT(syms_), 0, NULL}

/*
 * Open `lib` and fill its table, unless that is done already.  Safe to
 * call from several threads at once, and cheap once opened.  MICA_OK, or
 * MICA_ERR_NOT_FOUND with err set when the library or one of its
 * symbols is missing (the table is then left as it was).
 */
MICA_KIT_API mica_status_t mica_kit_lib_open(mica_kit_lib_t *lib,
                                             mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_H */
