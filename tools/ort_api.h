/*
 * tools/ort_api.h - the part of ONNX Runtime's C API that `mica compare
 * --b onnxruntime` calls, declared here because ONNX Runtime's headers
 * are not installed where mica builds (its Python wheel ships the
 * library alone) and because the library is loaded at run time (dlopen):
 * mica neither links against it nor needs it to build.
 *
 * Written from onnxruntime_c_api.h.  The library exports one symbol,
 * OrtGetApiBase; its GetApi(version) returns the table OrtApi, a struct
 * of function pointers whose order is frozen: entries are only appended,
 * and version 1's (the first 102) never move.  Only version 1 entries are
 * used, so any ONNX Runtime since 1.0 serves; each is named here by its
 * index in that table (ORT_API_CALL is the default calling convention
 * off Windows).  Every function returns an OrtStatus (NULL: success)
 * which the caller releases.
 */
#ifndef MICA_ORT_API_H
#define MICA_ORT_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtValue OrtValue;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtAllocator OrtAllocator;

/* The table of tables: what OrtGetApiBase returns. */
typedef struct OrtApiBase {
    const void *(*GetApi)(uint32_t version);   /* const OrtApi *, or NULL */
    const char *(*GetVersionString)(void);
} OrtApiBase;

typedef const OrtApiBase *(*OrtGetApiBaseFn)(void);

/* The API version asked for: the first, which every release serves. */
#define MICA_ORT_API_VERSION 1

/* Indices in OrtApi (version 1, frozen) of the entries used. */
enum {
    MICA_ORT_GetErrorMessage = 2,
    MICA_ORT_CreateEnv = 3,
    MICA_ORT_CreateSession = 7,
    MICA_ORT_Run = 9,
    MICA_ORT_CreateSessionOptions = 10,
    MICA_ORT_SetIntraOpNumThreads = 24,
    MICA_ORT_SessionGetInputCount = 30,
    MICA_ORT_SessionGetOutputCount = 31,
    MICA_ORT_SessionGetInputTypeInfo = 33,
    MICA_ORT_SessionGetInputName = 36,
    MICA_ORT_SessionGetOutputName = 37,
    MICA_ORT_CreateTensorWithDataAsOrtValue = 49,
    MICA_ORT_GetTensorMutableData = 51,
    MICA_ORT_CastTypeInfoToTensorInfo = 55,
    MICA_ORT_GetTensorElementType = 60,
    MICA_ORT_GetDimensionsCount = 61,
    MICA_ORT_GetDimensions = 62,
    MICA_ORT_GetTensorTypeAndShape = 65,
    MICA_ORT_CreateCpuMemoryInfo = 69,
    MICA_ORT_AllocatorFree = 76,
    MICA_ORT_GetAllocatorWithDefaultOptions = 78,
    MICA_ORT_ReleaseEnv = 92,
    MICA_ORT_ReleaseStatus = 93,
    MICA_ORT_ReleaseMemoryInfo = 94,
    MICA_ORT_ReleaseSession = 95,
    MICA_ORT_ReleaseValue = 96,
    MICA_ORT_ReleaseTypeInfo = 98,
    MICA_ORT_ReleaseTensorTypeAndShapeInfo = 99,
    MICA_ORT_ReleaseSessionOptions = 100,
    MICA_ORT_NB_V1 = 102            /* entries in version 1 */
};

/* The signatures of those entries. */
typedef const char *(*OrtGetErrorMessageFn)(const OrtStatus *);
typedef OrtStatus *(*OrtCreateEnvFn)(int log_level, const char *logid,
                                     OrtEnv **out);
typedef OrtStatus *(*OrtCreateSessionFn)(const OrtEnv *, const char *path,
                                         const OrtSessionOptions *,
                                         OrtSession **out);
typedef OrtStatus *(*OrtRunFn)(OrtSession *, const void *run_options,
                               const char *const *input_names,
                               const OrtValue *const *inputs, size_t nb_in,
                               const char *const *output_names, size_t nb_out,
                               OrtValue **outputs);
typedef OrtStatus *(*OrtCreateSessionOptionsFn)(OrtSessionOptions **out);
typedef OrtStatus *(*OrtSetIntraOpNumThreadsFn)(OrtSessionOptions *, int);
typedef OrtStatus *(*OrtSessionGetInputCountFn)(const OrtSession *,
                                                size_t *out);
typedef OrtSessionGetInputCountFn OrtSessionGetOutputCountFn;
typedef OrtStatus *(*OrtSessionGetInputTypeInfoFn)(const OrtSession *, size_t index,
                                           OrtTypeInfo **out);
typedef OrtStatus *(*OrtSessionGetInputNameFn)(const OrtSession *, size_t index,
                                               OrtAllocator *, char **out);
typedef OrtSessionGetInputNameFn OrtSessionGetOutputNameFn;
typedef OrtStatus *(*OrtCreateTensorWithDataAsOrtValueFn)(const OrtMemoryInfo *,
                                                void *data, size_t bytes,
                                                const int64_t *shape,
                                                size_t rank, int type,
                                                OrtValue **out);
typedef OrtStatus *(*OrtGetTensorMutableDataFn)(OrtValue *, void **out);
typedef OrtStatus *(*OrtCastTypeInfoToTensorInfoFn)(const OrtTypeInfo *,
                                        const OrtTensorTypeAndShapeInfo **out);
typedef OrtStatus *(*OrtGetTensorElementTypeFn)(const OrtTensorTypeAndShapeInfo *,
                                          int *out);
typedef OrtStatus *(*OrtGetDimensionsCountFn)(
    const OrtTensorTypeAndShapeInfo *, size_t *out);
typedef OrtStatus *(*OrtGetDimensionsFn)(const OrtTensorTypeAndShapeInfo *,
                                         int64_t *dims, size_t rank);
typedef OrtStatus *(*OrtGetTensorTypeAndShapeFn)(
    const OrtValue *, OrtTensorTypeAndShapeInfo **out);
typedef OrtStatus *(*OrtCreateCpuMemoryInfoFn)(int allocator_type,
                                               int mem_type,
                                               OrtMemoryInfo **out);
typedef OrtStatus *(*OrtAllocatorFreeFn)(OrtAllocator *, void *p);
typedef OrtStatus *(*OrtGetAllocatorWithDefaultOptionsFn)(OrtAllocator **out);
typedef void (*OrtReleaseFn)(void *);

/* Enum values used (onnxruntime_c_api.h). */
#define MICA_ORT_LOGGING_LEVEL_ERROR 3
#define MICA_ORT_ARENA_ALLOCATOR 1
#define MICA_ORT_MEM_TYPE_DEFAULT 0

/* ONNXTensorElementDataType: the ONNX TensorProto data types. */
enum {
    MICA_ORT_FLOAT = 1, MICA_ORT_UINT8 = 2, MICA_ORT_INT8 = 3,
    MICA_ORT_INT32 = 6, MICA_ORT_INT64 = 7, MICA_ORT_BOOL = 9,
    MICA_ORT_FLOAT16 = 10, MICA_ORT_DOUBLE = 11, MICA_ORT_BFLOAT16 = 16
};

#endif /* MICA_ORT_API_H */
