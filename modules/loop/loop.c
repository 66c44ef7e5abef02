/*
 * modules/loop/loop.c - the boundary layers of a loop (TensorRT's ILoop):
 * TripLimit, Iterator, Recurrence and LoopOutput.
 *
 * The core schedules them by their role and runs them through
 * enqueue_boundary (see mica_step_kind_t in mica/layer.h); their ordinary
 * enqueue only refuses.  A step kind that a role does not answer (an
 * Iterator's ENTER, a Recurrence's READ...) does nothing and succeeds; an
 * unknown step kind is an error.
 *
 *   TripLimit (t)      `kind` count (default) or while.  READ: count: t is
 *                      a 0-D int32, step->value is its value, a negative
 *                      count meaning 0 trips (the value is then 0); while:
 *                      t is a 0-D bool, step->value is 1 or 0.
 *   Iterator (x)       `axis` (default 0, in [0, rank)), `reverse`
 *                      (default false).  Output: x without the axis.
 *                      ITER_BEGIN: the output is slice i of x along the
 *                      axis (slice len-1-i with reverse); an i outside
 *                      [0, len) is an error.  READ: step->value is len,
 *                      the number of trips the iterator can feed.
 *   Recurrence         (initial, next): the output has initial's type and
 *                      dimensions (only input 0 decides: input 1 is the
 *                      back edge, which the core checks against input 0).
 *                      ENTER: output = initial; ITER_END: output = next.
 *   LoopOutput         (x, length) `kind` last_value (default),
 *                      concatenate or reverse; `axis` (default 0, in
 *                      [0, rank(x)]).  length is a 0-D int32 shape tensor
 *                      (input kind MICA_INPUT_SHAPE), required for
 *                      concatenate and reverse, refused for last_value.
 *                      last_value: output = x's dimensions, EXIT copies x.
 *                      concatenate, reverse: output = x's dimensions with
 *                      length inserted at axis; ITER_END stores x as
 *                      element i along the axis (an i >= length is the
 *                      run-time error MICA_ERR_RUNTIME of a length smaller
 *                      than the trip count); EXIT for reverse puts
 *                      elements 0..trip_count-1 in reverse order in place.
 *                      Elements at trip_count and beyond are left as they
 *                      were (unspecified, as in TensorRT).
 *
 * Types: float32, float16, bfloat16, int8, uint8, int32, int64, bool:
 * pure data movement by element size.  LINEAR format.  CUDA: the copies
 * and the reversal run on the stream (loop_cuda.cu); a TripLimit READ
 * copies the value into a pinned host buffer (allocated by initialize, or
 * on first use) and waits for the stream.  On CUDA, Recurrence, Iterator
 * and LoopOutput also take their steps with the trip and trip count in
 * device memory (device_steps; a loop whose trips run inside a CUDA
 * graph): the slice, the stored element and the exit's zeros and
 * reversal are then worked out by the kernels from that memory.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "loop.h"
#if MICA_KIT_CUDA
#include "mica/kit_cuda.h"
#endif

enum { TRIP_COUNT = 0, TRIP_WHILE = 1 };
enum { OUT_LAST_VALUE = 0, OUT_CONCATENATE = 1, OUT_REVERSE = 2 };

static const char *const trip_kinds[] = {"count", "while", NULL};
static const char *const output_kinds[] = {"last_value", "concatenate",
                                           "reverse", NULL};
static const int64_t zero = 0;

static const mica_field_schema_t trip_fields[] = {
    {"kind", MICA_FIELD_ENUM, 1, 0, 1, &zero, trip_kinds,
     "count (a 0-D int32 trip count, default) or while (a 0-D bool)"},
};

static const mica_field_schema_t iterator_fields[] = {
    {"axis", MICA_FIELD_INT, 1, 0, 1, &zero, NULL,
     "the axis to iterate on, in [0, rank) (default 0)"},
    {"reverse", MICA_FIELD_BOOL, 1, 0, 1, &zero, NULL,
     "iterate from the last slice to the first (default false)"},
};

static const mica_field_schema_t output_fields[] = {
    {"kind", MICA_FIELD_ENUM, 1, 0, 1, &zero, output_kinds,
     "last_value (default), concatenate or reverse"},
    {"axis", MICA_FIELD_INT, 1, 0, 1, &zero, NULL,
     "concatenate, reverse: where the trip axis goes, in [0, rank(x)] "
     "(default 0)"},
};

typedef struct loop_layer {
    mica_kit_layer_t base;
    int32_t kind;    /* TripLimit, LoopOutput: the `kind` index */
    int64_t axis;    /* Iterator, LoopOutput */
    int32_t reverse; /* Iterator */
    int32_t cuda;    /* the CUDA implementation */
    void *pinned;    /* CUDA TripLimit: READ's host buffer */
} loop_layer_t;

#define L(layer) ((loop_layer_t *)(layer))

static const char *dname(mica_dtype_t t)
{
    return mica_kit_host->dtype_name(t);
}

/* The ordinary enqueue of every boundary layer: never called by the core. */
static mica_status_t bad_step(const mica_step_t *step, mica_error_t *err)
{
    return MICA_KIT_FAIL(err, "unknown step kind %u", (unsigned)step->kind);
}

/*
 * The geometry of `d` around `axis`: `outer` rows before it, `len`
 * entries along it, `inner` elements per entry (the volume after it).
 */
static void geometry(const mica_dims_t *d, int64_t axis, int64_t *outer,
                     int64_t *len, int64_t *inner)
{
    int32_t k;
    int64_t o = 1, n = 1;
    for (k = 0; k < d->nb_dims; k++) {
        if (k < axis)
            o *= d->d[k];
        else if (k > axis)
            n *= d->d[k];
    }
    *outer = o;
    *len = d->d[axis];
    *inner = n;
}

/* Copy `rows` rows of `width` bytes, strided, on the layer's device. */
static mica_status_t copy_rows(const loop_layer_t *l, void *dst, size_t dpitch,
                               const void *src, size_t spitch, size_t width,
                               int64_t rows, void *stream, mica_error_t *err)
{
    int64_t r;
    if (rows <= 0 || width == 0 || dst == src)
        return MICA_OK;
#if MICA_KIT_CUDA
    if (l->cuda)
        return mica__loop_cuda_copy_rows(dst, dpitch, src, spitch, width,
                                         rows, stream, err);
#else
    (void)l;
#endif
    (void)stream; (void)err;
    for (r = 0; r < rows; r++)
        memcpy((char *)dst + (size_t)r * dpitch,
               (const char *)src + (size_t)r * spitch, width);
    return MICA_OK;
}

/* Zero `rows` rows of `width` bytes, row r at dst + r * pitch. */
static mica_status_t zero_rows(const loop_layer_t *l, void *dst, size_t pitch,
                               size_t width, int64_t rows, void *stream,
                               mica_error_t *err)
{
    int64_t r;
    if (rows <= 0 || width == 0)
        return MICA_OK;
#if MICA_KIT_CUDA
    if (l->cuda)
        return mica__loop_cuda_zero_rows(dst, pitch, width, rows, stream, err);
#else
    (void)l;
#endif
    (void)stream; (void)err;
    for (r = 0; r < rows; r++)
        memset((char *)dst + (size_t)r * pitch, 0, width);
    return MICA_OK;
}

#if MICA_KIT_CUDA
/* Whether the step gives the trip in device memory (a loop in a CUDA
 * graph; mica_step_t's device_iteration, read only where the core's
 * struct has it). */
static int device_trip(const mica_step_t *step)
{
    return step->struct_size >= offsetof(mica_step_t, device_iteration) +
                                    sizeof step->device_iteration &&
           step->device_iteration != NULL;
}

static int device_trips(const mica_step_t *step)
{
    return step->struct_size >= offsetof(mica_step_t, device_trip_count) +
                                    sizeof step->device_trip_count &&
           step->device_trip_count != NULL;
}
#endif

/* Recurrence, Iterator, LoopOutput: on CUDA, the trip from device memory
 * (mica_layer_ops_t.device_steps). */
static int32_t loop_device_steps(const mica_layer_t *layer)
{
    return L(layer)->cuda;
}

/* ---- TripLimit ----------------------------------------------------------- */

static mica_dtype_t trip_type(const loop_layer_t *l)
{
    return l->kind == TRIP_WHILE ? MICA_BOOL : MICA_INT32;
}

static mica_status_t trip_output_dtypes(const mica_layer_t *layer,
                                        const mica_dtype_t *in, int32_t nb_in,
                                        mica_dtype_t *out, int32_t nb_out,
                                        mica_error_t *err)
{
    const loop_layer_t *l = L(layer);
    (void)out;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input (the trip limit), got %d",
                             (int)nb_in);
    if (nb_out != 0)
        return MICA_KIT_FAIL(err, "has no outputs, got %d", (int)nb_out);
    if (in[0] != trip_type(l))
        return MICA_KIT_FAIL(err, "input 0 (the trip limit) has type %s but a "
                             "'%s' trip limit must be %s", dname(in[0]),
                             trip_kinds[l->kind], dname(trip_type(l)));
    return MICA_OK;
}

static int32_t trip_supports_format(const mica_layer_t *layer, int32_t pos,
                                    const mica_tensor_desc_t *io,
                                    int32_t nb_in, int32_t nb_out)
{
    if (nb_in != 1 || nb_out != 0 || pos != 0 || !mica_kit_linear(io, pos))
        return 0;
    return io[0].dtype == trip_type(L(layer));
}

static mica_status_t scalar_rank(const char *what, const mica_dims_t *d,
                                 mica_error_t *err)
{
    if (d->nb_dims != 0)
        return MICA_KIT_FAIL(err, "%s has rank %d but must be 0-D", what,
                             (int)d->nb_dims);
    return MICA_OK;
}

static mica_status_t trip_configure(mica_layer_t *layer,
                                    const mica_dyn_desc_t *in, int32_t nb_in,
                                    const mica_dyn_desc_t *out, int32_t nb_out,
                                    mica_error_t *err)
{
    (void)layer; (void)nb_in; (void)out; (void)nb_out;
    return scalar_rank("the trip limit", &in[0].desc.dims, err);
}

static mica_status_t trip_boundary(mica_layer_t *layer, mica_step_t *step,
                                   const mica_tensor_desc_t *in, int32_t nb_in,
                                   const mica_tensor_desc_t *out,
                                   int32_t nb_out, const void *const *inputs,
                                   void *const *outputs, void *workspace,
                                   void *stream, mica_error_t *err)
{
    loop_layer_t *l = L(layer);
    const unsigned char *p = inputs[0];
    mica_status_t st;
    int32_t count;
    (void)out; (void)nb_out; (void)outputs; (void)workspace;

    if (step->kind > MICA_STEP_SELECT)
        return bad_step(step, err);
    if (step->kind != MICA_STEP_READ)
        return MICA_OK;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input (the trip limit), got %d",
                             (int)nb_in);
    if (in[0].dtype != trip_type(l))
        return MICA_KIT_FAIL(err, "input 0 (the trip limit) has type %s but a "
                             "'%s' trip limit must be %s", dname(in[0].dtype),
                             trip_kinds[l->kind], dname(trip_type(l)));
    if ((st = scalar_rank("the trip limit", &in[0].dims, err)) != MICA_OK)
        return st;
#if MICA_KIT_CUDA
    if (l->cuda) {
        st = mica_kit_cuda_fetch(&l->pinned, inputs[0],
                                  mica_dtype_size(in[0].dtype), stream, err);
        if (st != MICA_OK)
            return st;
        p = l->pinned;
    }
#else
    (void)stream;
#endif
    if (l->kind == TRIP_WHILE) {
        step->value = p[0] != 0;
        return MICA_OK;
    }
    memcpy(&count, p, sizeof count);
    step->value = count < 0 ? 0 : count;
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t trip_initialize(mica_layer_t *layer, void *stream,
                                     mica_error_t *err)
{
    loop_layer_t *l = L(layer);
    (void)stream;
    if (l->pinned)
        return MICA_OK;
    return mica_kit_cuda_host_alloc(&l->pinned, err);
}

static void trip_terminate(mica_layer_t *layer)
{
    loop_layer_t *l = L(layer);
    mica_kit_cuda_host_free(l->pinned);
    l->pinned = NULL;
}

/* destroy without terminate (the buffer was allocated on first use). */
static void trip_fini(mica_kit_layer_t *base)
{
    trip_terminate(&base->layer);
}
#endif

/* ---- Iterator ------------------------------------------------------------ */

static mica_status_t single_input_dtype(const mica_dtype_t *in, int32_t nb_in,
                                        mica_dtype_t *out, int32_t nb_out,
                                        mica_error_t *err)
{
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "input 0 has type %s, which is not supported",
                             dname(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t iterator_output_dtypes(const mica_layer_t *layer,
                                            const mica_dtype_t *in,
                                            int32_t nb_in, mica_dtype_t *out,
                                            int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    return single_input_dtype(in, nb_in, out, nb_out, err);
}

static mica_status_t iterator_axis(const loop_layer_t *l, int32_t rank,
                                   mica_error_t *err)
{
    if (rank < 1)
        return MICA_KIT_FAIL(err,
                             "the input is 0-D but must have rank 1 or more "
                             "(an axis to iterate on)");
    if (l->axis < 0 || l->axis >= rank)
        return MICA_KIT_FAIL(err,
                             "axis %lld is out of range for an input of "
                             "rank %d (axes are in [0, %d))",
                             (long long)l->axis, (int)rank, (int)rank);
    return MICA_OK;
}

static mica_status_t iterator_output_dims(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          mica_shape_expr_t *out,
                                          mica_error_t *err)
{
    const loop_layer_t *l = L(layer);
    mica_status_t st;
    int32_t k, n = 0;
    (void)eb;
    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    if ((st = iterator_axis(l, in[0].nb_dims, err)) != MICA_OK)
        return st;
    for (k = 0; k < in[0].nb_dims; k++)
        if (k != l->axis)
            out->d[n++] = in[0].d[k];
    out->nb_dims = n;
    return MICA_OK;
}

/* Input 0 any supported type, the output the same. */
static int32_t same_type_formats(const mica_layer_t *layer, int32_t pos,
                                 const mica_tensor_desc_t *io, int32_t nb_in,
                                 int32_t nb_out)
{
    (void)layer; (void)nb_in; (void)nb_out;
    if (!mica_kit_linear(io, pos) || !mica_kit_any_type(io[pos].dtype))
        return 0;
    return pos == 0 || io[pos].dtype == io[0].dtype;
}

static mica_status_t iterator_boundary(mica_layer_t *layer, mica_step_t *step,
                                       const mica_tensor_desc_t *in,
                                       int32_t nb_in,
                                       const mica_tensor_desc_t *out,
                                       int32_t nb_out,
                                       const void *const *inputs,
                                       void *const *outputs, void *workspace,
                                       void *stream, mica_error_t *err)
{
    const loop_layer_t *l = L(layer);
    int64_t outer, len, inner, i;
    size_t es, row;
    mica_status_t st;
    (void)workspace;

    if (step->kind > MICA_STEP_SELECT)
        return bad_step(step, err);
    if (step->kind != MICA_STEP_READ && step->kind != MICA_STEP_ITER_BEGIN)
        return MICA_OK;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input, got %d", (int)nb_in);
    if ((st = iterator_axis(l, in[0].dims.nb_dims, err)) != MICA_OK)
        return st;
    geometry(&in[0].dims, l->axis, &outer, &len, &inner);
    if (step->kind == MICA_STEP_READ) {
        step->value = len;
        return MICA_OK;
    }
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (out[0].dtype != in[0].dtype ||
        mica_dims_volume(&out[0].dims) != outer * inner)
        return MICA_KIT_FAIL(err,
                             "the output (%s, %lld elements) is not a slice "
                             "of the input (%s, %lld elements per slice)",
                             dname(out[0].dtype),
                             (long long)mica_dims_volume(&out[0].dims),
                             dname(in[0].dtype), (long long)(outer * inner));
    es = mica_dtype_size(in[0].dtype);
    row = (size_t)inner * es;
#if MICA_KIT_CUDA
    if (l->cuda && device_trip(step))
        return mica__loop_cuda_slice(outputs[0], inputs[0], outer, len, row,
                                     step->device_iteration, l->reverse, 0,
                                     stream, err);
#endif
    if (step->iteration < 0 || step->iteration >= len)
        return MICA_KIT_FAIL(err,
                             "trip %lld is out of range: the input has %lld "
                             "slices along axis %lld",
                             (long long)step->iteration, (long long)len,
                             (long long)l->axis);
    i = l->reverse ? len - 1 - step->iteration : step->iteration;
    return copy_rows(l, outputs[0], row,
                     (const char *)inputs[0] + (size_t)i * row,
                     (size_t)len * row, row, outer, stream, err);
}

/* ---- Recurrence ---------------------------------------------------------- */

/* Only input 0 decides: input 1 is the back edge. */
static mica_status_t recurrence_output_dtypes(const mica_layer_t *layer,
                                              const mica_dtype_t *in,
                                              int32_t nb_in, mica_dtype_t *out,
                                              int32_t nb_out,
                                              mica_error_t *err)
{
    (void)layer;
    if (nb_in != 2)
        return MICA_KIT_FAIL(err, "takes 2 inputs (initial, next), got %d",
                             (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "input 0 (the initial value) has type %s, "
                             "which is not supported", dname(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t recurrence_output_dims(const mica_layer_t *layer,
                                            int32_t index,
                                            const mica_shape_expr_t *in,
                                            int32_t nb_in,
                                            mica_expr_builder_t *eb,
                                            mica_shape_expr_t *out,
                                            mica_error_t *err)
{
    int32_t k;
    (void)layer; (void)eb;
    if (index != 0 || nb_in != 2)
        return MICA_KIT_FAIL(err, "takes 2 inputs (initial, next) and has 1 "
                             "output");
    out->nb_dims = in[0].nb_dims;
    for (k = 0; k < in[0].nb_dims; k++)
        out->d[k] = in[0].d[k];
    return MICA_OK;
}

static mica_status_t recurrence_boundary(mica_layer_t *layer,
                                         mica_step_t *step,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    int32_t from;
    int64_t n;
    (void)workspace;

    if (step->kind > MICA_STEP_SELECT)
        return bad_step(step, err);
    if (step->kind != MICA_STEP_ENTER && step->kind != MICA_STEP_ITER_END)
        return MICA_OK;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 2 inputs (initial, next) and has 1 "
                             "output");
    from = step->kind == MICA_STEP_ENTER ? 0 : 1;
    n = mica_dims_volume(&out[0].dims);
    if (in[from].dtype != out[0].dtype ||
        mica_dims_volume(&in[from].dims) != n)
        return MICA_KIT_FAIL(err, "the %s value (%s, %lld elements) does not "
                             "match the output (%s, %lld elements)",
                             from ? "next" : "initial", dname(in[from].dtype),
                             (long long)mica_dims_volume(&in[from].dims),
                             dname(out[0].dtype), (long long)n);
    return copy_rows(L(layer), outputs[0], 0, inputs[from], 0,
                     (size_t)n * mica_dtype_size(out[0].dtype), 1, stream,
                     err);
}

/* ---- LoopOutput ---------------------------------------------------------- */

static mica_status_t output_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 && nb_in != 2)
        return MICA_KIT_FAIL(err, "takes 1 or 2 inputs (x, length), got %d",
                             (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (!mica_kit_any_type(in[0]))
        return MICA_KIT_FAIL(err, "input 0 has type %s, which is not supported",
                             dname(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static int has_length(const mica_shape_expr_t *in, int32_t nb_in)
{
    return nb_in >= 2 && in[1].nb_dims >= 0;
}

static mica_status_t output_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const loop_layer_t *l = L(layer);
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *len;
    int32_t k, n = 0, r = in[0].nb_dims;
    (void)eb;

    if (index != 0 || nb_in < 1 || nb_in > 2)
        return MICA_KIT_FAIL(err, "takes 1 or 2 inputs (x, length) and has 1 "
                             "output");
    if (l->kind == OUT_LAST_VALUE) {
        if (has_length(in, nb_in))
            return MICA_KIT_FAIL(err, "LoopOutput 'last_value' takes no length "
                                 "(input 1 is for concatenate and reverse)");
        out->nb_dims = r;
        for (k = 0; k < r; k++)
            out->d[k] = in[0].d[k];
        return MICA_OK;
    }
    if (!has_length(in, nb_in) || in[1].nb_dims != 0 || !in[1].values ||
        in[1].nb_values != 1)
        return MICA_KIT_FAIL(err,
                             "LoopOutput '%s' needs the 0-D int32 length as "
                             "its second input",
                             output_kinds[l->kind]);
    if (l->axis < 0 || l->axis > r)
        return MICA_KIT_FAIL(err,
                             "axis %lld is out of range for an input of "
                             "rank %d (axes are in [0, %d])",
                             (long long)l->axis, (int)r, (int)r);
    if (r + 1 > MICA_MAX_DIMS)
        return MICA_KIT_FAIL(err, "the output would have rank %d, more than %d",
                             (int)r + 1, (int)MICA_MAX_DIMS);
    len = in[1].values[0];
    if (h->expr_is_constant(len) && h->expr_constant_value(len) < 0)
        return MICA_KIT_FAIL(err, "the length is %lld but must be 0 or more",
                             (long long)h->expr_constant_value(len));
    for (k = 0; k <= r; k++) {
        if (k == l->axis)
            out->d[n++] = len;
        if (k < r)
            out->d[n++] = in[0].d[k];
    }
    out->nb_dims = n;
    return MICA_OK;
}

static int32_t output_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    (void)layer; (void)nb_out;
    if (!mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return mica_kit_any_type(io[0].dtype);
    if (pos < nb_in)
        return io[pos].dtype == MICA_INT32;
    return io[pos].dtype == io[0].dtype;
}

static int32_t output_input_kind(const mica_layer_t *layer, int32_t index,
                                 int32_t nb_inputs)
{
    (void)layer; (void)nb_inputs;
    return index == 1 ? MICA_INPUT_SHAPE : MICA_INPUT_DATA;
}

static mica_status_t output_boundary(mica_layer_t *layer, mica_step_t *step,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out, const void *const *inputs,
                                     void *const *outputs, void *workspace,
                                     void *stream, mica_error_t *err)
{
    const loop_layer_t *l = L(layer);
    size_t es, row;
    int64_t outer, len, inner, count;
    (void)workspace;

    if (step->kind > MICA_STEP_SELECT)
        return bad_step(step, err);
    if (step->kind != MICA_STEP_ITER_END && step->kind != MICA_STEP_EXIT)
        return MICA_OK;
    if (nb_in < 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 1 or 2 inputs (x, length) and has 1 "
                             "output");
    if (in[0].dtype != out[0].dtype)
        return MICA_KIT_FAIL(err, "the output has type %s but the input has %s",
                             dname(out[0].dtype), dname(in[0].dtype));
    es = mica_dtype_size(in[0].dtype);
    if (l->kind == OUT_LAST_VALUE) {
        int64_t n = mica_dims_volume(&out[0].dims);
        if (step->kind != MICA_STEP_EXIT)
            return MICA_OK;
        if (mica_dims_volume(&in[0].dims) != n)
            return MICA_KIT_FAIL(err,
                                 "the input has %lld elements but the output "
                                 "%lld",
                                 (long long)mica_dims_volume(&in[0].dims),
                                 (long long)n);
        return copy_rows(l, outputs[0], 0, inputs[0], 0, (size_t)n * es, 1,
                         stream, err);
    }
    if (out[0].dims.nb_dims != in[0].dims.nb_dims + 1 || l->axis < 0 ||
        l->axis >= out[0].dims.nb_dims)
        return MICA_KIT_FAIL(err,
                             "the output has rank %d but the input has rank "
                             "%d and axis is %lld",
                             (int)out[0].dims.nb_dims, (int)in[0].dims.nb_dims,
                             (long long)l->axis);
    geometry(&out[0].dims, l->axis, &outer, &len, &inner);
    row = (size_t)inner * es;
    if (step->kind == MICA_STEP_ITER_END) {
        if (mica_dims_volume(&in[0].dims) != outer * inner)
            return MICA_KIT_FAIL(err,
                                 "the input has %lld elements but a slice of "
                                 "the output has %lld",
                                 (long long)mica_dims_volume(&in[0].dims),
                                 (long long)(outer * inner));
#if MICA_KIT_CUDA
        if (l->cuda && device_trip(step))
            return mica__loop_cuda_slice(outputs[0], inputs[0], outer, len,
                                         row, step->device_iteration, 0, 1,
                                         stream, err);
#endif
        if (step->iteration < 0 || step->iteration >= len) {
            mica_kit_host->set_error(err, "the loop ran more trips (%lld) "
                                     "than the output's length along axis "
                                     "%lld (%lld): a length smaller than "
                                     "the trip count",
                                     (long long)step->iteration + 1,
                                     (long long)l->axis, (long long)len);
            return MICA_ERR_RUNTIME;
        }
        return copy_rows(l, (char *)outputs[0] +
                         (size_t)step->iteration * row, (size_t)len * row,
                         inputs[0], row, row, outer, stream, err);
    }
#if MICA_KIT_CUDA
    if (l->cuda && device_trips(step))
        return mica__loop_cuda_exit(outputs[0], outer, len, row,
                                    step->device_trip_count,
                                    l->kind == OUT_REVERSE, stream, err);
#endif
    if (step->trip_count < 0)
        return MICA_KIT_FAIL(err,
                             "the trip count is unknown at the loop's exit");
    count = step->trip_count < len ? step->trip_count : len;
    /* The slices no trip wrote (a while loop that stopped early) are
     * zeros, as on every device. */
    if (count < len) {
        mica_status_t st = zero_rows(l, (char *)outputs[0] +
                                     (size_t)count * row, (size_t)len * row,
                                     (size_t)(len - count) * row, outer,
                                     stream, err);
        if (st != MICA_OK)
            return st;
    }
    if (l->kind != OUT_REVERSE)
        return MICA_OK;
    if (count < 2 || outer == 0 || row == 0)
        return MICA_OK;
#if MICA_KIT_CUDA
    if (l->cuda)
        return mica__loop_cuda_reverse(outputs[0], outer, (size_t)len * row,
                                       row, count, stream, err);
#else
    (void)stream;
#endif
    {
        int64_t r, k;
        size_t b;
        for (r = 0; r < outer; r++) {
            unsigned char *p = (unsigned char *)outputs[0] +
                               (size_t)r * (size_t)len * row;
            for (k = 0; k < count / 2; k++) {
                unsigned char *a = p + (size_t)k * row;
                unsigned char *z = p + (size_t)(count - 1 - k) * row;
                for (b = 0; b < row; b++) {
                    unsigned char t = a[b];
                    a[b] = z[b];
                    z[b] = t;
                }
            }
        }
    }
    return MICA_OK;
}

/* ---- ops tables ---------------------------------------------------------- */

static const mica_layer_ops_t trip_ops_cpu = MICA_KIT_OPS(
    mica_kit_boundary_enqueue, .nb_outputs = mica_kit_no_outputs,
    .output_dtypes = trip_output_dtypes, .output_dims = mica_kit_no_output_dims,
    .supports_format = trip_supports_format, .configure = trip_configure,
    .enqueue_boundary = trip_boundary);
static const mica_layer_ops_t iterator_ops = MICA_KIT_OPS(
    mica_kit_boundary_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = iterator_output_dtypes,
    .output_dims = iterator_output_dims, .supports_format = same_type_formats,
    .enqueue_boundary = iterator_boundary,
    .device_steps = loop_device_steps);
static const mica_layer_ops_t recurrence_ops = MICA_KIT_OPS(
    mica_kit_boundary_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = recurrence_output_dtypes,
    .output_dims = recurrence_output_dims,
    .supports_format = same_type_formats,
    .enqueue_boundary = recurrence_boundary,
    .device_steps = loop_device_steps);
static const mica_layer_ops_t output_ops = MICA_KIT_OPS(
    mica_kit_boundary_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = output_output_dtypes, .output_dims = output_output_dims,
    .supports_format = output_supports_format,
    .input_kind = output_input_kind, .enqueue_boundary = output_boundary,
    .device_steps = loop_device_steps);
#if MICA_KIT_CUDA
static const mica_layer_ops_t trip_ops_cuda = MICA_KIT_OPS(
    mica_kit_boundary_enqueue, .nb_outputs = mica_kit_no_outputs,
    .output_dtypes = trip_output_dtypes, .output_dims = mica_kit_no_output_dims,
    .supports_format = trip_supports_format, .configure = trip_configure,
    .initialize = trip_initialize, .terminate = trip_terminate,
    .enqueue_boundary = trip_boundary);
#endif

/* ---- creators ------------------------------------------------------------ */

static mica_layer_t *loop_create(const mica_layer_creator_t *creator,
                                 const char *name, const mica_fields_t *fields,
                                 mica_error_t *err)
{
    loop_layer_t *l;
    int64_t kind = mica_kit_int(fields, "kind", 0); /* in its schema */

    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->kind = (int32_t)kind;
    l->axis = mica_kit_int(fields, "axis", 0);
    l->reverse = mica_kit_int(fields, "reverse", 0) != 0;
    l->cuda = (creator->devices & MICA_DEVICE_CUDA) != 0;
#if MICA_KIT_CUDA
    if (l->cuda && creator->role == MICA_ROLE_TRIP_LIMIT)
        l->base.fini = trip_fini;
#endif
    return &l->base.layer;
}

/* The CUDA creators share the CPU ops but for the TripLimit's pinned
 * buffer: loop_create marks the layer as a CUDA one from the creator's
 * devices, and the data movement follows (loop_cuda.cu). */
MICA_KIT_ROLE_PAIR(trip, "TripLimit", MICA_ROLE_TRIP_LIMIT, trip_fields, 1,
                   loop_create, &trip_ops_cpu, &trip_ops_cuda)
MICA_KIT_ROLE_PAIR(iterator, "Iterator", MICA_ROLE_ITERATOR, iterator_fields,
                   2, loop_create, &iterator_ops, &iterator_ops)
MICA_KIT_ROLE_PAIR(recurrence, "Recurrence", MICA_ROLE_RECURRENCE, NULL, 0,
                   loop_create, &recurrence_ops, &recurrence_ops)
MICA_KIT_ROLE_PAIR(output, "LoopOutput", MICA_ROLE_LOOP_OUTPUT, output_fields,
                   2, loop_create, &output_ops, &output_ops)

static const mica_layer_creator_t *const loop_creators[] = {
    MICA_KIT_PAIR(trip), MICA_KIT_PAIR(iterator), MICA_KIT_PAIR(recurrence),
    MICA_KIT_PAIR(output)};

MICA_KIT_ENTRY("loop", PACKAGE_VERSION, "MIT",
               "Loop boundaries: TripLimit, Iterator, Recurrence, LoopOutput",
               loop_creators)
