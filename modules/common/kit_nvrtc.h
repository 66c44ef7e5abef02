/*
 * modules/common/kit_nvrtc.h - kernels compiled while a network is built:
 * NVRTC (the CUDA toolkit's run-time compiler) and the parts of the CUDA
 * driver API that load and launch what it made, both opened on first use
 * through the kit's loader (never linked), their functions in the tables
 * `mica__nvrtc` and `mica__cudrv`, typed by nvrtc.h's and cuda.h's
 * prototypes.  Part of the module kit's GPU helpers (libmicamodkit_gpu.la,
 * CUDA builds), not installed.
 *
 * The way a module uses it (modules/pointwise/ does): at build time,
 * generate CUDA C++ source for what the layer computes and compile it
 * with mica__nvrtc_compile for the device's architecture
 * (mica__nvrtc_arch), keep the CUBIN and PTX in the layer's saved state,
 * so that loading an engine needs no compiler; on each execution
 * context, mica__cudrv_load the code (the CUBIN, or the PTX where the
 * device is another one) and launch its kernels with
 * mica__cudrv.launch (cuLaunchKernel), which a CUDA graph captures like
 * any launch.  NVRTC needs no GPU: it compiles for an architecture
 * named in its options.
 */
#ifndef MICA_KIT_NVRTC_H
#define MICA_KIT_NVRTC_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <nvrtc.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__nvrtc_table {
    MICA_KIT_FN(nvrtcVersion) version;
    MICA_KIT_FN(nvrtcGetErrorString) error_string;
    MICA_KIT_FN(nvrtcGetNumSupportedArchs) nb_archs;
    MICA_KIT_FN(nvrtcGetSupportedArchs) archs;
    MICA_KIT_FN(nvrtcCreateProgram) create;
    MICA_KIT_FN(nvrtcDestroyProgram) destroy;
    MICA_KIT_FN(nvrtcCompileProgram) compile;
    MICA_KIT_FN(nvrtcGetProgramLogSize) log_size;
    MICA_KIT_FN(nvrtcGetProgramLog) log;
    MICA_KIT_FN(nvrtcGetCUBINSize) cubin_size;
    MICA_KIT_FN(nvrtcGetCUBIN) cubin;
    MICA_KIT_FN(nvrtcGetPTXSize) ptx_size;
    MICA_KIT_FN(nvrtcGetPTX) ptx;
} mica__nvrtc_table_t;

typedef struct mica__cudrv_table {
    MICA_KIT_FN(cuGetErrorString) error_string;
    MICA_KIT_FN(cuCtxGetCurrent) ctx_current;
    MICA_KIT_FN(cuModuleLoadData) load;
    MICA_KIT_FN(cuModuleUnload) unload;
    MICA_KIT_FN(cuModuleGetFunction) function;
    MICA_KIT_FN(cuLaunchKernel) launch;
} mica__cudrv_table_t;

extern MICA_KIT_API mica__nvrtc_table_t mica__nvrtc;
extern MICA_KIT_API mica__cudrv_table_t mica__cudrv;

/*
 * Open NVRTC (libnvrtc.so.MAJOR of the toolkit mica was built with),
 * once: MICA_OK, or MICA_ERR_NOT_FOUND with err set to one line: "NVRTC
 * (the CUDA toolkit's compiler of kernels made at build time) is needed
 * but cannot be loaded: libnvrtc.so.13: cannot open shared object file:
 * No such file or directory".
 */
MICA_KIT_API mica_status_t mica__nvrtc_open(mica_error_t *err);

/* Open the CUDA driver (libcuda.so.1), once. */
MICA_KIT_API mica_status_t mica__cudrv_open(mica_error_t *err);

/*
 * The architecture to compile for, as NVRTC names it without "sm_"
 * ("90"): the current CUDA device's compute capability where one is
 * usable, else the last one mica was configured for (--with-cuda-arch),
 * so that the kernels of a build that has no device still compile.  buf
 * holds len bytes.
 */
MICA_KIT_API void mica__nvrtc_arch(char *buf, size_t len);

/* What NVRTC made: malloc'd, free with mica__nvrtc_code_free. */
typedef struct mica__nvrtc_code {
    void *cubin;
    size_t cubin_size;
    char *ptx;       /* NUL-terminated */
    size_t ptx_size; /* with its NUL */
} mica__nvrtc_code_t;

MICA_KIT_API void mica__nvrtc_code_free(mica__nvrtc_code_t *code);

/*
 * Compile `source` (named `name` in messages) with the in-memory headers
 * headers[i] named names[i] (what its #include lines ask for) for
 * architecture `arch` ("90": CUBIN for sm_90 and its PTX), with the
 * extra options opts[0..nb_opts-1], into *out.  Opens NVRTC first
 * (mica__nvrtc_open's error where it cannot).  A source NVRTC refuses fails with MICA_ERR_INTERNAL
 * and the first lines of its log in err (generated code that does not
 * compile is a bug).
 */
MICA_KIT_API mica_status_t mica__nvrtc_compile(
    const char *source, const char *name,
    int32_t nb_headers, const char *const *headers,
    const char *const *names, const char *arch, int32_t nb_opts,
    const char *const *opts, mica__nvrtc_code_t *out, mica_error_t *err);

/*
 * Load code into the current device's primary context: the CUBIN, or,
 * where it is missing or not for this device, the PTX (compiled by the
 * driver).  Either may be NULL.  Fails naming `what` and the driver's
 * reason.
 */
MICA_KIT_API mica_status_t mica__cudrv_load(const char *what,
                                            const void *cubin,
                                            size_t cubin_size,
                                            const char *ptx, CUmodule *out,
                                            mica_error_t *err);

/*
 * Check a driver call in a function returning mica_status_t with `err`
 * in scope: "cuLaunchKernel(...) failed: the reason (file.c:42)" and
 * MICA_ERR_DEVICE.
 */
#define MICA__CU_CHECK(call)                                                \
    do {                                                                    \
        CUresult cu_check_r_ = (call);                                      \
        if (cu_check_r_ != CUDA_SUCCESS) {                                  \
            const char *cu_check_s_ = NULL;                                 \
            if (mica__cudrv.error_string(cu_check_r_, &cu_check_s_) !=      \
                    CUDA_SUCCESS ||                                         \
                !cu_check_s_)                                               \
                cu_check_s_ = "unknown error";                              \
            mica_kit_host->set_error(err, "%s failed: %s (%s:%d)", #call,   \
                                     cu_check_s_, __FILE__, __LINE__);      \
            return MICA_ERR_DEVICE;                                         \
        }                                                                   \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_NVRTC_H */
