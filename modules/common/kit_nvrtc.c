/*
 * modules/common/kit_nvrtc.c - NVRTC and the CUDA driver opened on first
 * use, compiling a source and loading what it made (see kit_nvrtc.h).
 */
#include <config.h>

#include "kit_nvrtc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

MICA_KIT_API mica__nvrtc_table_t mica__nvrtc;
MICA_KIT_API mica__cudrv_table_t mica__cudrv;

#define NSYM(m, n) MICA_KIT_SYM(mica__nvrtc, m, n)
static const mica_kit_sym_t nvrtc_syms[] = {
    NSYM(version, "nvrtcVersion"),
    NSYM(error_string, "nvrtcGetErrorString"),
    NSYM(nb_archs, "nvrtcGetNumSupportedArchs"),
    NSYM(archs, "nvrtcGetSupportedArchs"),
    NSYM(create, "nvrtcCreateProgram"),
    NSYM(destroy, "nvrtcDestroyProgram"),
    NSYM(compile, "nvrtcCompileProgram"),
    NSYM(log_size, "nvrtcGetProgramLogSize"),
    NSYM(log, "nvrtcGetProgramLog"),
    NSYM(cubin_size, "nvrtcGetCUBINSize"),
    NSYM(cubin, "nvrtcGetCUBIN"),
    NSYM(ptx_size, "nvrtcGetPTXSize"),
    NSYM(ptx, "nvrtcGetPTX"),
};
#undef NSYM

#define DSYM(m, n) MICA_KIT_SYM(mica__cudrv, m, n)
static const mica_kit_sym_t cudrv_syms[] = {
    DSYM(error_string, "cuGetErrorString"),
    DSYM(ctx_current, "cuCtxGetCurrent"),
    DSYM(load, "cuModuleLoadData"),
    DSYM(unload, "cuModuleUnload"),
    DSYM(function, "cuModuleGetFunction"),
    DSYM(launch, "cuLaunchKernel"),
};
#undef DSYM

/* NVRTC's soname carries the toolkit's major version (libnvrtc.so.13),
 * which only CUDA_VERSION (13000) gives: written once, before the first
 * open. */
static char nvrtc_soname[32];
static pthread_once_t soname_once = PTHREAD_ONCE_INIT;

static void make_soname(void)
{
    snprintf(nvrtc_soname, sizeof nvrtc_soname, "libnvrtc.so.%d",
             CUDA_VERSION / 1000);
}

static mica_kit_lib_t nvrtc_lib =
    MICA_KIT_LIB("NVRTC (the CUDA toolkit's compiler of kernels made at "
                 "build time)", nvrtc_soname, &mica__nvrtc, nvrtc_syms);
static mica_kit_lib_t cudrv_lib =
    MICA_KIT_LIB("the CUDA driver", "libcuda.so.1", &mica__cudrv,
                 cudrv_syms);

mica_status_t mica__nvrtc_open(mica_error_t *err)
{
    pthread_once(&soname_once, make_soname);
    return mica_kit_lib_open(&nvrtc_lib, err);
}

mica_status_t mica__cudrv_open(mica_error_t *err)
{
    return mica_kit_lib_open(&cudrv_lib, err);
}

void mica__nvrtc_arch(char *buf, size_t len)
{
    int dev = 0, major = 0, minor = 0;

    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                               dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                               dev) == cudaSuccess &&
        major > 0) {
        snprintf(buf, len, "%d%d", major, minor);
        return;
    }
    (void)cudaGetLastError(); /* no device: not an error of later calls */
    snprintf(buf, len, "%s", MICA_CUDA_ARCH_LAST);
}

void mica__nvrtc_code_free(mica__nvrtc_code_t *code)
{
    if (!code)
        return;
    free(code->cubin);
    free(code->ptx);
    memset(code, 0, sizeof *code);
}

/* The first lines of the program's log into err (NVRTC's own words). */
static void log_error(nvrtcProgram prog, const char *name, nvrtcResult r,
                      mica_error_t *err)
{
    size_t n = 0;
    char *log = NULL, *p;

    if (mica__nvrtc.log_size(prog, &n) == NVRTC_SUCCESS && n > 1 &&
        (log = malloc(n)) != NULL &&
        mica__nvrtc.log(prog, log) == NVRTC_SUCCESS) {
        /* one line for the message: the first error's */
        for (p = log; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        if (strlen(log) > 400)
            strcpy(log + 396, "...");
    }
    mica_kit_host->set_error(err, "NVRTC cannot compile %s (a bug, please "
                             "report it): %s: %s", name,
                             mica__nvrtc.error_string(r),
                             log ? log : "no log");
    free(log);
}

mica_status_t mica__nvrtc_compile(
    const char *source, const char *name,
    int32_t nb_headers, const char *const *headers,
    const char *const *names, const char *arch, int32_t nb_opts,
    const char *const *opts, mica__nvrtc_code_t *out, mica_error_t *err)
{
    nvrtcProgram prog = NULL;
    nvrtcResult r;
    const char **all = NULL;
    char archopt[48];
    mica_status_t st;
    int32_t i;

    memset(out, 0, sizeof *out);
    if ((st = mica__nvrtc_open(err)) != MICA_OK)
        return st;
    if (!(all = calloc((size_t)nb_opts + 1, sizeof *all)))
        return MICA_KIT_FAIL(err, "out of host memory compiling %s", name);
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%s", arch);
    all[0] = archopt;
    for (i = 0; i < nb_opts; i++)
        all[i + 1] = opts[i];
    r = mica__nvrtc.create(&prog, source, name, nb_headers, headers, names);
    if (r != NVRTC_SUCCESS) {
        free(all);
        mica_kit_host->set_error(err, "nvrtcCreateProgram(%s) failed: %s",
                                 name, mica__nvrtc.error_string(r));
        return MICA_ERR_NOMEM;
    }
    r = mica__nvrtc.compile(prog, nb_opts + 1, all);
    free(all);
    if (r != NVRTC_SUCCESS) {
        log_error(prog, name, r, err);
        st = r == NVRTC_ERROR_OUT_OF_MEMORY ? MICA_ERR_NOMEM
                                            : MICA_ERR_INTERNAL;
        goto done;
    }
    if ((r = mica__nvrtc.cubin_size(prog, &out->cubin_size)) !=
            NVRTC_SUCCESS ||
        (r = mica__nvrtc.ptx_size(prog, &out->ptx_size)) != NVRTC_SUCCESS) {
        mica_kit_host->set_error(err, "NVRTC made no code for %s (sm_%s): "
                                 "%s", name, arch,
                                 mica__nvrtc.error_string(r));
        st = MICA_ERR_INTERNAL;
        goto done;
    }
    out->cubin = malloc(out->cubin_size ? out->cubin_size : 1);
    out->ptx = malloc(out->ptx_size + 1);
    if (!out->cubin || !out->ptx) {
        mica_kit_host->set_error(err, "out of host memory for the code of "
                                 "%s", name);
        st = MICA_ERR_NOMEM;
        goto done;
    }
    if ((out->cubin_size &&
         (r = mica__nvrtc.cubin(prog, out->cubin)) != NVRTC_SUCCESS) ||
        (r = mica__nvrtc.ptx(prog, out->ptx)) != NVRTC_SUCCESS) {
        mica_kit_host->set_error(err, "NVRTC made no code for %s (sm_%s): "
                                 "%s", name, arch,
                                 mica__nvrtc.error_string(r));
        st = MICA_ERR_INTERNAL;
        goto done;
    }
    out->ptx[out->ptx_size] = '\0';
    if (out->ptx_size == 0 || out->ptx[out->ptx_size - 1] != '\0')
        out->ptx_size++;
done:
    mica__nvrtc.destroy(&prog);
    if (st != MICA_OK)
        mica__nvrtc_code_free(out);
    return st;
}

/* Make the device's primary context current where nothing is: the CUDA
 * runtime's first call on a device does (as it does for the host's own
 * allocations). */
static mica_status_t context(mica_error_t *err)
{
    CUcontext ctx = NULL;

    if (mica__cudrv.ctx_current(&ctx) == CUDA_SUCCESS && ctx)
        return MICA_OK;
    (void)cudaFree(NULL);
    (void)cudaGetLastError();
    MICA__CU_CHECK(mica__cudrv.ctx_current(&ctx));
    if (!ctx)
        return MICA_KIT_FAIL(err, "no CUDA context is current on this "
                             "thread (no usable device?)");
    return MICA_OK;
}

mica_status_t mica__cudrv_load(const char *what, const void *cubin,
                               size_t cubin_size, const char *ptx,
                               CUmodule *out, mica_error_t *err)
{
    const char *why = NULL;
    CUresult r = CUDA_ERROR_INVALID_IMAGE;
    mica_status_t st;

    *out = NULL;
    if ((st = mica__cudrv_open(err)) != MICA_OK ||
        (st = context(err)) != MICA_OK)
        return st;
    if (cubin && cubin_size) {
        r = mica__cudrv.load(out, cubin);
        if (r == CUDA_SUCCESS)
            return MICA_OK;
    }
    /* Another device than the one the CUBIN is for: its PTX, which the
     * driver compiles for this one. */
    if (ptx) {
        r = mica__cudrv.load(out, ptx);
        if (r == CUDA_SUCCESS)
            return MICA_OK;
    }
    *out = NULL;
    if (mica__cudrv.error_string(r, &why) != CUDA_SUCCESS || !why)
        why = "unknown error";
    mica_kit_host->set_error(err, "cannot load the CUDA kernels of %s on "
                             "this device: %s", what, why);
    return MICA_ERR_DEVICE;
}
