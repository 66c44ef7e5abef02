/*
 * mica/types.h - the value types of the mica ABI.
 *
 * Part of the stable C ABI that modules and applications build against.
 * Every struct here is frozen for ABI version 1: its layout is checked by
 * static assertions in core/abi_layout.c.  Structs that may grow start with
 * a `struct_size` member; readers only look at members that fit inside it.
 * Structs passed as arrays (tensor descriptors, shape expressions) cannot
 * grow; they carry reserved members instead, which writers set to zero.
 *
 * Plain C99, no compiler extensions: this header compiles with
 * `-std=c99 -pedantic`.
 */
#ifndef MICA_TYPES_H
#define MICA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol visibility: the one export macro of the project. */
#if defined(_WIN32)
#define MICA_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define MICA_EXPORT __attribute__((visibility("default")))
#else
#define MICA_EXPORT
#endif

/* printf-style format checking for the variadic host services. */
#if defined(__GNUC__)
#define MICA_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define MICA_PRINTF(fmt, args)
#endif

/* The most dimensions a tensor may have (TensorRT's Dims::MAX_DIMS). */
#define MICA_MAX_DIMS 8

/*
 * The largest tensor, in bytes, that mica accepts anywhere (weights,
 * inputs, every tensor a build infers, every profile's largest shape):
 * 2^48 bytes, 256 TiB, more than any device holds.  Below it, sums of
 * tensor sizes and offsets (an arena, an engine file) cannot overflow
 * 64 bits.  A shape beyond it is refused with one line naming the tensor
 * and its shape.
 */
#define MICA_MAX_TENSOR_BYTES ((int64_t)1 << 48)

/* Status codes.  Every fallible function returns one; MICA_OK is zero. */
typedef enum mica_status {
    MICA_OK = 0,
    MICA_ERR_INVALID = 1,     /* bad argument or bad input data */
    MICA_ERR_NOMEM = 2,       /* host or device allocation failed */
    MICA_ERR_UNSUPPORTED = 3, /* valid, but not supported by this build */
    MICA_ERR_NOT_FOUND = 4,   /* a name, file or symbol does not exist */
    MICA_ERR_IO = 5,          /* reading or writing a file failed */
    MICA_ERR_ABI = 6,         /* ABI version mismatch */
    MICA_ERR_DEVICE = 7,      /* a device call (CUDA, cuBLAS...) failed */
    MICA_ERR_RUNTIME = 8,     /* a run-time check failed (e.g. Assertion) */
    MICA_ERR_INTERNAL = 9     /* a bug: please report it */
} mica_status_t;

/* Element types.  Values are frozen; new types are appended. */
typedef enum mica_dtype {
    MICA_FLOAT32 = 0,
    MICA_FLOAT16 = 1,
    MICA_INT8 = 2,
    MICA_INT32 = 3,
    MICA_BOOL = 4, /* one byte, 0 or 1 */
    MICA_INT64 = 5,
    MICA_UINT8 = 6,
    MICA_BFLOAT16 = 7,
    /* Appended 2026-11-28 (ABI 1 still: modules built earlier never see
     * them unless they ask for them).  The 4-bit types take one byte per
     * element, the value in its low bits (int4 sign-extended): ONNX's
     * files pack two to a byte, the importer unpacks them. */
    MICA_FLOAT64 = 8,
    MICA_UINT16 = 9,
    MICA_UINT32 = 10,
    MICA_UINT64 = 11,
    MICA_INT16 = 12,
    MICA_FP8E4M3 = 13,      /* float8 e4m3fn: bias 7, no infinity, max 448 */
    MICA_FP8E5M2 = 14,      /* float8 e5m2: bias 15, IEEE-like */
    MICA_INT4 = 15,         /* one byte, -8..7 */
    MICA_UINT4 = 16,        /* one byte, 0..15 */
    MICA_FP4E2M1 = 17,      /* one byte, the low 4 bits: max 6 */
    MICA_FP8E4M3FNUZ = 18,  /* bias 8, no -0 nor infinity, NaN 0x80 */
    MICA_FP8E5M2FNUZ = 19,  /* bias 16, no -0 nor infinity, NaN 0x80 */
    MICA_FP8E8M0 = 20,      /* exponent only: 2^(e-127), NaN 0xff */
    MICA_DTYPE_COUNT_ = 21 /* not a type: the number of types */
} mica_dtype_t;

/* Devices, as bits so that an implementation can name several. */
typedef enum mica_device_kind {
    MICA_DEVICE_CPU = 1u << 0,
    MICA_DEVICE_CUDA = 1u << 1
} mica_device_kind_t;

/*
 * Memory layouts (TensorRT's TensorFormat).  A tensor's dims are always
 * its logical dims (N, C, H, W for a 4-D image batch); the format says
 * in which order its elements lie in memory.
 *
 * MICA_FORMAT_LINEAR  row-major over the dims as given (TensorRT's
 *                     kLINEAR: NCHW for a 4-D tensor).  Every layer
 *                     implementation must support it.
 * MICA_FORMAT_HWC     channels last, for 4-D tensors: element (n, c, h, w)
 *                     at ((n * H + h) * W + w) * C + c, that is NHWC
 *                     (TensorRT's kHWC, not vectorized).
 * MICA_FORMAT_DHWC    channels last, for 5-D tensors: (n, c, d, h, w) at
 *                     (((n * D + d) * H + h) * W + w) * C + c, NDHWC
 *                     (TensorRT's kDHWC).
 *
 * Appended after version 1's first layout: the builder asks an
 * implementation about a format other than LINEAR only when its ops
 * table was built against headers that have them (it is as large as
 * the members appended with them, see mica/layer.h), so a module built
 * before never sees one.  Vectorized formats (kHWC8, kCHW32...) are not
 * part of the ABI.
 */
typedef enum mica_format {
    MICA_FORMAT_LINEAR = 0,
    MICA_FORMAT_HWC = 1,
    MICA_FORMAT_DHWC = 2
} mica_format_t;

/* Log levels, most severe first. */
typedef enum mica_log_level {
    MICA_LOG_ERROR = 0,
    MICA_LOG_WARNING = 1,
    MICA_LOG_INFO = 2,
    MICA_LOG_DEBUG = 3
} mica_log_level_t;

/* Concrete dimensions of a tensor.  A rank-0 tensor has nb_dims == 0. */
typedef struct mica_dims {
    int32_t nb_dims;
    int32_t reserved_;
    int64_t d[MICA_MAX_DIMS];
} mica_dims_t;

/*
 * What a layer sees of one input or output at run time: element type,
 * layout and the actual dimensions.  Passed as arrays, so frozen.
 */
typedef struct mica_tensor_desc {
    mica_dtype_t dtype;
    mica_format_t format;
    mica_dims_t dims;
    float scale;        /* quantization scale for int8, else 1 */
    uint32_t reserved_[7];
} mica_tensor_desc_t;

/*
 * What a layer sees at configure time: the descriptor with its dimensions
 * at the optimization point, and the smallest and largest values each
 * dimension can take (TensorRT's DynamicPluginTensorDesc).  With static
 * shapes min == opt == max == desc.dims.
 */
typedef struct mica_dyn_desc {
    mica_tensor_desc_t desc;
    mica_dims_t min;
    mica_dims_t max;
} mica_dyn_desc_t;

/*
 * A block of constant data: weights, biases, a Constant layer's values.
 * `values` is row-major, little-endian, `count` elements of `dtype`.
 * `dims` gives the shape the blob was declared with (nb_dims may be 0 for
 * a scalar, count is then 1).  The memory belongs to the host and lives as
 * long as the network or engine the layer was created for; a layer that
 * must outlive it copies what it needs.
 */
typedef struct mica_weights {
    mica_dtype_t dtype;
    int32_t reserved_;
    int64_t count;
    const void *values;
    mica_dims_t dims;
} mica_weights_t;

/* ---------------------------------------------------------------------
 * Fields: the generic parameter mechanism (TensorRT's PluginField).
 * A creator declares a schema; the host validates the manifest's params
 * against it, applies defaults, and hands the result to create().
 * ------------------------------------------------------------------- */

typedef enum mica_field_type {
    MICA_FIELD_INT = 0,     /* int64_t[count] */
    MICA_FIELD_FLOAT = 1,   /* double[count] */
    MICA_FIELD_BOOL = 2,    /* int64_t[count], each 0 or 1 */
    MICA_FIELD_STRING = 3,  /* const char *[count] */
    MICA_FIELD_ENUM = 4,    /* int64_t[count]: indices into enum_values */
    MICA_FIELD_DTYPE = 5,   /* int64_t[count]: mica_dtype_t values */
    MICA_FIELD_WEIGHTS = 6  /* mica_weights_t[count] */
} mica_field_type_t;

/* A schema's count: any number of elements, including none. */
#define MICA_COUNT_ANY (-1)

/* One declared parameter of a layer type. */
typedef struct mica_field_schema {
    const char *name;
    mica_field_type_t type;
    /* 1: a scalar; N > 1: a list of exactly N; MICA_COUNT_ANY: a list. */
    int32_t count;
    /* Non-zero if the manifest must give it. */
    int32_t required;
    /* Default, in the same representation as mica_field_t.data, used when
     * the param is absent; NULL means "absent" (the layer decides). */
    int32_t nb_default;
    const void *default_value;
    /* For MICA_FIELD_ENUM: the accepted names, NULL-terminated. */
    const char *const *enum_values;
    /* One line for `mica modules --fields`, may be NULL. */
    const char *doc;
} mica_field_schema_t;

/* One parameter value. */
typedef struct mica_field {
    const char *name;
    mica_field_type_t type;
    int32_t count;
    const void *data;
} mica_field_t;

/* The parameters handed to a creator, defaults applied. */
typedef struct mica_fields {
    int32_t nb_fields;
    const mica_field_t *fields;
} mica_fields_t;

/* Size in bytes of one element of `dtype`; 0 for an unknown type. */
static inline size_t mica_dtype_size(mica_dtype_t dtype)
{
    switch (dtype) {
    case MICA_FLOAT32: case MICA_INT32: case MICA_UINT32: return 4;
    case MICA_FLOAT16: case MICA_BFLOAT16: case MICA_UINT16:
    case MICA_INT16: return 2;
    case MICA_INT8: case MICA_BOOL: case MICA_UINT8: case MICA_FP8E4M3:
    case MICA_FP8E5M2: case MICA_INT4: case MICA_UINT4: case MICA_FP4E2M1:
    case MICA_FP8E4M3FNUZ: case MICA_FP8E5M2FNUZ: case MICA_FP8E8M0:
        return 1;
    case MICA_INT64: case MICA_FLOAT64: case MICA_UINT64: return 8;
    default: return 0;
    }
}

/*
 * Number of elements of `dims` into *volume (1 for a scalar, 0 for an
 * empty tensor): 0, or -1 (*volume untouched) when the rank is not
 * 0..MICA_MAX_DIMS, a dimension is negative, or the product of the
 * non-zero dimensions exceeds INT64_MAX (an empty tensor's too, wherever
 * its 0 stands, so that any product of some of its dimensions fits).
 * The checked form every size computation starts from.
 */
static inline int mica_dims_volume_checked(const mica_dims_t *dims,
                                           int64_t *volume)
{
    int64_t v = 1;
    int32_t i, zero = 0;
    if (dims->nb_dims < 0 || dims->nb_dims > MICA_MAX_DIMS)
        return -1;
    for (i = 0; i < dims->nb_dims; i++) {
        int64_t d = dims->d[i];
        if (d < 0)
            return -1;
        if (d == 0)
            zero = 1;
        else if (v > INT64_MAX / d)
            return -1;
        else
            v *= d;
    }
    *volume = zero ? 0 : v;
    return 0;
}

/*
 * Bytes of a tensor of `dims` and `dtype` into *bytes: 0, or -1 (*bytes
 * untouched) when the volume is not valid (mica_dims_volume_checked), the
 * dtype is unknown, or the size exceeds MICA_MAX_TENSOR_BYTES.
 */
static inline int mica_dims_bytes_checked(const mica_dims_t *dims,
                                          mica_dtype_t dtype, int64_t *bytes)
{
    int64_t v, size = (int64_t)mica_dtype_size(dtype);
    if (!size || mica_dims_volume_checked(dims, &v) != 0 ||
        v > MICA_MAX_TENSOR_BYTES / size)
        return -1;
    *bytes = v * size;
    return 0;
}

/*
 * Number of elements of `dims`; 1 for a scalar, 0 for an empty tensor, -1
 * when mica_dims_volume_checked refuses them (a negative dimension, a
 * product beyond INT64_MAX).  The host hands layers only tensors whose
 * size it checked, so a layer may use this on its inputs and outputs.
 */
static inline int64_t mica_dims_volume(const mica_dims_t *dims)
{
    int64_t v;
    return mica_dims_volume_checked(dims, &v) == 0 ? v : -1;
}

/* The field named `name`, or NULL. */
static inline const mica_field_t *mica_fields_find(const mica_fields_t *f,
                                                   const char *name)
{
    int32_t i;
    for (i = 0; f && i < f->nb_fields; i++) {
        const char *a = f->fields[i].name, *b = name;
        while (*a && *a == *b) { a++; b++; }
        if (*a == *b)
            return &f->fields[i];
    }
    return NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* MICA_TYPES_H */
